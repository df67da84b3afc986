import HeadwaterCore
import NIOCore
import NIOHTTP1

/// How many responses the full path (``OriginHTTPHandler``) has finished on one connection, so
/// ``PlaylistFastPath`` knows when it may answer again without overtaking one. Shared by the two
/// handlers of one connection, on its event loop.
final class FullPathProgress {
    var responsesFinished = 0
}

@available(*, unavailable)
extension FullPathProgress: Sendable {}

/// The first handler after the socket: answers the requests that make up most of an origin's
/// traffic — `GET`/`HEAD` of a shared live playlist, without conditions or ranges — by writing a
/// response encoded once per version and second (``PreencodedPlaylists``), without NIO's HTTP/1
/// decoder, the request and response objects, or per-request allocation of the body.
///
/// Everything else goes, as received, to NIO's HTTP/1 pipeline and ``OriginHTTPHandler``, which
/// answer it in full. The two never overlap or reorder on a connection:
/// - the fast path answers only at a request boundary, when every request handed to the full path
///   has been answered (``FullPathProgress``);
/// - it hands over a request only whole and alone (one head, no body, nothing after it) and then
///   waits for its answer; if more bytes come meanwhile (pipelining), or the request has a body
///   (an upload), or the bytes are not a head it understands, it hands over the rest of the
///   connection for good.
/// - while the socket's send buffer is full (a client not reading), it hands over too, so the
///   full path's back-pressure applies.
///
/// Each request still gets its access-log line and metrics, as on the full path.
final class PlaylistFastPath: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Mode {
        /// At a request boundary; `pending` holds the start of a head.
        case fast
        /// One request was handed to the full path; fast again once it has been answered.
        case awaitingFullPath(responses: Int)
        /// The full path has the connection for good.
        case handedOver

        var isFast: Bool {
            if case .fast = self { return true }
            return false
        }
    }

    private let environment: OriginHTTPHandler.Environment
    /// `environment.responder.content`, without copying the responder on every request.
    private let content: any OriginContent
    private let dates: NIOLoopBoundBox<ResponseDates>
    private let playlists: NIOLoopBoundBox<PreencodedPlaylists>
    private let progress: FullPathProgress
    private let maxHeadBytes: Int
    private var mode = Mode.fast
    private var pending: ByteBuffer?
    private var unflushed = false
    /// Something went down the pipeline since the last `channelReadComplete`, which must follow it.
    private var forwarded = false
    private var client: String?

    init(
        environment: OriginHTTPHandler.Environment,
        dates: NIOLoopBoundBox<ResponseDates>,
        playlists: NIOLoopBoundBox<PreencodedPlaylists>,
        progress: FullPathProgress,
        maxHeadBytes: Int
    ) {
        self.environment = environment
        self.content = environment.responder.content
        self.dates = dates
        self.playlists = playlists
        self.progress = progress
        self.maxHeadBytes = maxHeadBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch mode {
        case .handedOver:
            forwarded = true
            context.fireChannelRead(data)
            return
        case .awaitingFullPath(let responses):
            guard progress.responsesFinished >= responses else {
                // Pipelined behind a request the full path is still answering: it keeps the connection.
                mode = .handedOver
                forwarded = true
                context.fireChannelRead(data)
                return
            }
            mode = .fast
        case .fast:
            break
        }
        var input = unwrapInboundIn(data)
        if var start = pending {
            pending = nil
            start.writeBuffer(&input)
            input = start
        }
        while input.readableBytes > 0 {
            let scan = input.withUnsafeReadableBytes { raw in
                FastRequestScan.scan(raw.withMemoryRebound(to: UInt8.self) { $0 })
            }
            switch scan {
            case .fast(let head) where context.channel.isWritable:
                if answer(head, in: input, context: context) {
                    input.moveReaderIndex(forwardBy: head.length)
                } else {
                    handOver(input, wholeRequest: head.length == input.readableBytes, context: context)
                    return
                }
            case .fast(let head):
                handOver(input, wholeRequest: head.length == input.readableBytes, context: context)
                return
            case .full(let length, let mayHaveBody):
                handOver(input, wholeRequest: !mayHaveBody && length == input.readableBytes, context: context)
                return
            case .unrecognized:
                handOver(input, wholeRequest: false, context: context)
                return
            case .incomplete:
                if input.readableBytes > maxHeadBytes {
                    handOver(input, wholeRequest: false, context: context)  // the decoder refuses it
                } else {
                    pending = input
                }
                return
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            context.flush()
        }
        // The full path's handlers need no word of reads they were not given.
        if forwarded || !(mode.isFast) {
            forwarded = false
            context.fireChannelReadComplete()
        }
    }

    /// Gives `input` to the full path: to wait for its answer if it is one whole request, else for good.
    private func handOver(_ input: ByteBuffer, wholeRequest: Bool, context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            context.flush()
        }
        mode = wholeRequest ? .awaitingFullPath(responses: progress.responsesFinished + 1) : .handedOver
        forwarded = true
        context.fireChannelRead(wrapInboundOut(input))
    }

    /// Writes the answer to `head` if it is a shared playlist's 200; `false` to let the full path answer.
    private func answer(_ head: FastRequestHead, in input: ByteBuffer, context: ChannelHandlerContext) -> Bool {
        let started = NIODeadline.now()
        let now = environment.now()
        let found: (PreencodedPlaylists.Entry, PreencodedPlaylists.Encoded)? = input.withUnsafeReadableBytes { raw in
            let bytes = raw.withMemoryRebound(to: UInt8.self) { $0 }
            return encoded(target: UnsafeBufferPointer(rebasing: bytes[head.target]), gzip: head.acceptsGzip, now: now)
        }
        guard let (entry, encoded) = found else { return false }
        let isHead = head.method == .head
        let bytes = isHead ? encoded.bytes.getSlice(at: encoded.bytes.readerIndex, length: encoded.headLength)! : encoded.bytes
        context.write(wrapOutboundOut(bytes), promise: nil)
        unflushed = true

        func field(_ range: Range<Int>?) -> String? {
            range.flatMap { input.getString(at: input.readerIndex + $0.lowerBound, length: $0.count) }
        }
        if client == nil { client = context.remoteAddress?.ipAddress ?? "-" }
        let uri = field(head.target) ?? "/"
        let log = AccessLogEntry(
            client: client ?? "-",
            receivedAt: now,
            method: isHead ? .HEAD : .GET,
            uri: uri,
            version: .http1_1,
            route: entry.template,
            path: uri,
            status: .ok,
            bytes: isHead ? 0 : encoded.bodyLength,
            referer: field(head.referer),
            userAgent: field(head.userAgent),
            sessionID: field(head.sessionID).map { String($0.prefix(128)) },
            cacheStatus: .hit,
            contentEncoding: encoded.contentEncoding,
            uncompressedLength: encoded.uncompressedLength,
            started: started
        )
        let time = dates.withValue { $0.commonLogTime(now: now) }
        let series: OriginMetrics.RequestSeries
        if let known = isHead ? entry.headSeries : entry.getSeries {
            series = known
        } else {
            series = environment.metrics.requestSeries(route: entry.template, method: isHead ? "HEAD" : "GET", status: 200)
            if isHead { entry.headSeries = series } else { entry.getSeries = series }
        }
        OriginHTTPHandler.record(log, error: nil, environment: environment, time: time, series: series)
        return true
    }

    /// The current encoded response for `target`, made (and remembered) if need be; `nil` if
    /// `target` is not a shared playlist that answers 200 now.
    private func encoded(
        target: UnsafeBufferPointer<UInt8>,
        gzip: Bool,
        now: Int64
    ) -> (PreencodedPlaylists.Entry, PreencodedPlaylists.Encoded)? {
        let playlists = self.playlists.value
        let entry: PreencodedPlaylists.Entry
        if let known = playlists.entry(for: target) {
            entry = known
        } else {
            guard let new = Self.entry(for: target) else { return nil }
            entry = new
        }
        let publishCount = content.publishCount
        if entry.second == now, let publishCount, entry.publishCount == publishCount {
            // Nothing published since this second's encoding: still current.
        } else {
            let responder = environment.responder
            guard case .success(let (playlist, cachePolicy)) = responder.sharedPlaylist(channel: entry.channel, rendition: entry.rendition)
            else { return nil }
            if entry.entityTag != playlist.entityTag || entry.second != now {
                let cors = environment.cors
                let encodings = dates.withValue { dates in
                    (
                        PreencodedPlaylists.encode(
                            responder.serve(playlist, cachePolicy: cachePolicy, headers: HTTPHeaders()), now: now, cors: cors,
                            dates: &dates),
                        PreencodedPlaylists.encode(
                            responder.serve(playlist, cachePolicy: cachePolicy, headers: Self.acceptGzip), now: now, cors: cors,
                            dates: &dates)
                    )
                }
                guard let identity = encodings.0, let gzip = encodings.1 else { return nil }
                if entry.second == .min { playlists.remember(entry) }
                entry.identity = identity
                entry.gzip = gzip
                entry.entityTag = playlist.entityTag
                entry.second = now
            }
            entry.publishCount = publishCount
        }
        guard let encoded = gzip ? entry.gzip : entry.identity else { return nil }
        return (entry, encoded)
    }

    private static let acceptGzip = HTTPHeaders([("Accept-Encoding", "gzip")])

    /// A new entry if `target` routes to a shared playlist (`/live/{channel}/….m3u8`).
    private static func entry(for target: UnsafeBufferPointer<UInt8>) -> PreencodedPlaylists.Entry? {
        guard target.starts(with: "/live/".utf8), target.reversed().starts(with: "8u3m.".utf8) else { return nil }
        let uri = String(decoding: target, as: UTF8.self)
        guard case .success(let route) = Route.parse(uri) else { return nil }
        switch route {
        case .mediaPlaylist(let channel, let rendition):
            return .init(target: Array(target), channel: channel, rendition: rendition, template: route.template)
        case .multivariantPlaylist(let channel):
            return .init(target: Array(target), channel: channel, rendition: nil, template: route.template)
        default:
            return nil
        }
    }
}

@available(*, unavailable)
extension PlaylistFastPath: Sendable {}
