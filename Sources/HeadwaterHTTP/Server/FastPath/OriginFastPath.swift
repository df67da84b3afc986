import HeadwaterRuntime
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// How many responses the full path (``OriginHTTPHandler``) has finished on one connection, so
/// ``OriginFastPath`` knows when it may answer again without overtaking one. Shared by the two
/// handlers of one connection, on its event loop.
final class FullPathProgress {
    var responsesFinished = 0
    /// What the full path is doing, for the connection's deadlines (``ConnectionDeadlines``).
    var phase = Phase.awaitingHead
    /// When the first byte of a head the full path has not received yet arrived; `nil` when none
    /// is on its way. Set by ``OriginFastPath`` (which sees every byte), cleared by
    /// ``OriginHTTPHandler`` when the head is whole.
    var headStarted: NIODeadline?
    /// When a piece of a long body last left (``FileBodySending``): the send deadline's progress,
    /// which writability alone does not show (the next piece is written as the last one leaves).
    var lastSend: NIODeadline?

    enum Phase {
        /// Waiting for the next request's head.
        case awaitingHead
        /// A head has come; its body (an upload's) is arriving.
        case receivingBody
        /// The request is whole; its response is being written.
        case responding
    }

    /// The full path has received a head (the head deadline is met).
    func receivedHead() {
        headStarted = nil
        phase = .receivingBody
    }
}

@available(*, unavailable)
extension FullPathProgress: Sendable {}

/// How many requests ``OriginFastPath`` answered on one server (tests: ``OriginServerConfiguration/fastPathTally``).
final class FastPathTally: Sendable {
    private let answered = Atomic<Int>(0)
    var count: Int { answered.load(ordering: .relaxed) }
    func add() { answered.add(1, ordering: .relaxed) }
}

/// The first handler after the socket: answers the requests that make up most of an origin's
/// traffic — plain `GET`/`HEAD`s of shared live playlists, segments and static files (with one
/// `Range`, without conditions), and viewers' stitched playlists — without NIO's HTTP/1 decoder,
/// encoder and header validation.
/// A playlist's response is written from bytes encoded once per version and second
/// (``PreencodedPlaylists``); a file's head from fields encoded once per file version and second
/// (``PreencodedFileHeads``) plus its status line, `Content-Range` and `Content-Length`, and its
/// body follows in the same write (16 KiB or less) or by `sendfile`. Which response it is comes
/// from ``OriginResponder``, as on the full path. Until it first hands a request over, the
/// connection's pipeline is this handler only. It also keeps the connection's idle timeout.
///
/// A stitched playlist's `GET` (`/ssai/{channel}/{rendition}.m3u8`, the busiest per-viewer route)
/// is answered here as on the full path, ad tracking included: its
/// ``OriginResponse/afterBodyWritten`` is called once the write of the response has succeeded,
/// never for a `HEAD` or when the write fails. (Conditional requests never come here; stitched
/// playlists carry no validators and are answered `200` either way.)
///
/// A request the responder holds (``OriginResponse/hold``: a blocking playlist reload of a shared
/// or stitched playlist, a hinted part not yet published) is held here too, as an entry in its
/// loop's ``HeldRequests`` and this handler's state, so a connection waiting for the next part
/// carries no full-path handlers; bytes the client sends meanwhile wait until it is answered.
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
final class OriginFastPath: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = IOData

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
    private let accessLines: AccessLogLines
    private let playlists: NIOLoopBoundBox<PreencodedPlaylists>
    private let fileHeads: NIOLoopBoundBox<PreencodedFileHeads>
    private let progress: FullPathProgress
    private let maxHeadBytes: Int
    private var mode = Mode.fast
    private var pending: ByteBuffer?
    private var unflushed = false
    /// Something went down the pipeline since the last `channelReadComplete`, which must follow it.
    private var forwarded = false
    private var client: String?
    /// A file body this handler wrote is still going out; a request arriving meanwhile goes to the
    /// full path (whose back-pressure holds it), so a connection never has two files in flight.
    private var fileInFlight = false
    /// Graceful shutdown was asked for while a file was going out: close once it has.
    private var closeAfterFile = false
    /// The request held here, if one is (``hold(_:route:isHead:log:_:context:)``).
    private var holding: Holding?
    /// Graceful shutdown was asked for while a request was held: close once it is answered.
    private var closeAfterHeld = false
    /// Adds the full path's handlers (NIO's HTTP/1 pipeline and ``OriginHTTPHandler``) behind this
    /// one; `nil` once done, at the first hand-over. Until then a connection is this handler only:
    /// every `read` NIO issues for it, and every event, passes one handler instead of seven (about
    /// 9% of a shared playlist request's user time went to carrying `read` through NIO's HTTP/1
    /// handlers, in `perf`), and an idle keep-alive connection holds less.
    private var installFullPath: ((ChannelPipeline.SynchronousOperations) throws -> Void)?
    /// Replaces this handler with HTTP/2's when the connection opens with the HTTP/2 preface
    /// (h2c with prior knowledge, RFC 9113 §3.3: how a CDN that pulls over HTTP/2 without TLS
    /// starts); `nil` once the first bytes have shown otherwise, and on TLS, where ALPN decides.
    private var installHTTP2: ((ChannelPipeline.SynchronousOperations) throws -> Void)?
    /// `sendfile`, or pieces through memory under TLS.
    private let fileBodies: FileBodySending
    /// `false` (tests only: ``OriginServerConfiguration/fastPathAnswers``): every request goes to the
    /// full path, so the two can be compared on the same requests.
    private let answers: Bool
    private let tally: FastPathTally?
    /// The connection's deadlines (idle, request head, request body, send): this handler sees every
    /// byte the client sends and every change of the socket's writability, and keeps the
    /// connection's one timer, so each request's events and writes pass one handler fewer than with
    /// NIO's `IdleStateHandler`, and the clock read that notes a request's arrival serves the
    /// deadlines too.
    private var deadlines: ConnectionDeadlines
    /// The metric series of a stitched playlist's `GET` 200, looked up by the connection's first.
    private var stitchedSeries: OriginMetrics.RequestSeries?
    private var deadlineCheck: Scheduled<Void>?
    /// When ``deadlineCheck`` runs.
    private var nextCheck = NIODeadline.distantFuture
    /// A deadline passed and the connection is being closed.
    private var expired = false

    init(
        environment: OriginHTTPHandler.Environment,
        dates: NIOLoopBoundBox<ResponseDates>,
        accessLines: AccessLogLines,
        playlists: NIOLoopBoundBox<PreencodedPlaylists>,
        fileHeads: NIOLoopBoundBox<PreencodedFileHeads>,
        progress: FullPathProgress,
        maxHeadBytes: Int,
        idleTimeout: TimeAmount,
        fileBodies: FileBodySending = .sendfile,
        answers: Bool = true,
        tally: FastPathTally? = nil,
        installHTTP2: ((ChannelPipeline.SynchronousOperations) throws -> Void)? = nil,
        installFullPath: @escaping (ChannelPipeline.SynchronousOperations) throws -> Void
    ) {
        self.fileBodies = fileBodies
        self.answers = answers
        self.tally = tally
        self.installHTTP2 = installHTTP2
        self.environment = environment
        self.content = environment.responder.content
        self.dates = dates
        self.accessLines = accessLines
        self.playlists = playlists
        self.fileHeads = fileHeads
        self.progress = progress
        self.maxHeadBytes = maxHeadBytes
        self.installFullPath = installFullPath
        self.deadlines = ConnectionDeadlines(idleTimeout: idleTimeout, limits: environment.limits, now: .now())
    }

    // MARK: - Deadlines

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startDeadlines(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        startDeadlines(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopDeadlines()
        forgetHeld(context: context)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopDeadlines()
        forgetHeld(context: context)
    }

    private func startDeadlines(context: ChannelHandlerContext) {
        guard deadlineCheck == nil, !expired else { return }
        let now = NIODeadline.now()
        deadlines.read(0, at: now, body: false)
        deadlines.writabilityChanged(writable: context.channel.isWritable, at: now)
        checkDeadlines(at: now, context: context)
    }

    private func stopDeadlines() {
        deadlineCheck?.cancel()
        deadlineCheck = nil
        nextCheck = .distantFuture
    }

    /// What the connection is doing, from this handler's state and the full path's.
    private var activity: ConnectionDeadlines.Activity {
        if fileInFlight || holding != nil { return .responding }
        if case .fast = mode {
            return progress.headStarted.map { .head(since: $0) } ?? .betweenRequests
        }
        switch progress.phase {
        case .awaitingHead: return progress.headStarted.map { .head(since: $0) } ?? .betweenRequests
        case .receivingBody: return .body
        case .responding: return .responding
        }
    }

    /// Acts on a deadline that has passed, or makes sure the timer runs by the next one. Called by
    /// the timer, and when a deadline may have come closer (a head begun, a body arriving, the
    /// socket full); not for the plain request that arrives whole.
    private func checkDeadlines(at now: NIODeadline, context: ChannelHandlerContext) {
        guard context.channel.isActive, !expired else { return }
        if let sent = progress.lastSend {
            deadlines.sent(at: sent)
            progress.lastSend = nil
        }
        switch deadlines.check(at: now, activity: activity) {
        case .checkAgain(let next):
            guard next < nextCheck, next < .distantFuture else { return }
            deadlineCheck?.cancel()
            nextCheck = next
            deadlineCheck = context.eventLoop.assumeIsolated().scheduleTask(deadline: next) { [self] in
                deadlineCheck = nil
                nextCheck = .distantFuture
                checkDeadlines(at: .now(), context: context)
            }
        case .idle:
            // Checked again an idle timeout from now, should the handlers behind keep the connection.
            deadlines.read(0, at: now, body: false)
            checkDeadlines(at: now, context: context)
            // What `IdleStateHandler` sends, so the full path acts on it as before.
            userInboundEventTriggered(context: context, event: IdleStateHandler.IdleStateEvent.read)
        case .expired(let deadline):
            expire(deadline, context: context)
        }
    }

    /// Closes the connection for a passed deadline: counted, and for a request that is late
    /// (nothing being answered yet) a `408` with the reason first, as far as the client reads it.
    private func expire(_ deadline: ConnectionDeadlines.Expired, context: ChannelHandlerContext) {
        expired = true
        stopDeadlines()
        environment.deadlineCloses?.increment(deadline)
        environment.logger.debug(
            "closing a connection past its deadline",
            metadata: ["deadline": "\(deadline.rawValue)", "client.address": "\(context.channel.remoteAddress?.ipAddress ?? "-")"])
        let reason: String
        switch deadline {
        case .requestHead: reason = "the request head did not arrive within \(environment.limits.requestHeadTimeout)"
        case .requestBody: reason = "the request body arrived slower than \(environment.limits.minimumBodyRate) bytes per second"
        case .send:
            context.close(promise: nil)
            return
        }
        let bytes = dates.withValue { dates in
            ConnectionErrorResponse.bytes(
                .requestTimeout, reason, now: environment.now(), dates: &dates, allocator: context.channel.allocator)
        }
        // The client may not read it either: the connection closes within a second regardless.
        let giveUp = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(1)) { context.close(promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(bytes))).assumeIsolated().whenComplete { _ in
            giveUp.cancel()
            context.close(promise: nil)
        }
    }

    // MARK: - Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let arrived = NIODeadline.now()
        switch mode {
        case .handedOver:
            forwardToFullPath(data, arrived: arrived, context: context)
            return
        case .awaitingFullPath(let responses):
            guard progress.responsesFinished >= responses else {
                // Pipelined behind a request the full path is still answering: it keeps the connection.
                mode = .handedOver
                forwardToFullPath(data, arrived: arrived, context: context)
                return
            }
            mode = .fast
        case .fast:
            break
        }
        var input = unwrapInboundIn(data)
        deadlines.read(input.readableBytes, at: arrived, body: false)
        if holding != nil {
            keepBehindHeld(&input, context: context)
            return
        }
        receive(input, arrived: arrived, context: context)
    }

    /// Bytes at a request boundary, with nothing held: answered here, or handed to the full path.
    private func receive(_ input: ByteBuffer, arrived: NIODeadline, context: ChannelHandlerContext) {
        var input = input
        if fileInFlight {
            if var start = pending {
                pending = nil
                start.writeBuffer(&input)
                input = start
            }
            handOver(input, wholeRequest: false, context: context)
            return
        }
        if var start = pending {
            pending = nil
            start.writeBuffer(&input)
            input = start
        }
        if let http2 = installHTTP2 {
            switch HTTP2Preface.match(input) {
            case .incomplete:
                pending = input
                headBegan(at: arrived, context: context)
                return
            case .http2:
                switchToHTTP2(input, install: http2, context: context)
                return
            case .notHTTP2:
                installHTTP2 = nil
            }
        }
        if !answers {
            handOver(input, wholeRequest: false, context: context)
            return
        }
        while input.readableBytes > 0 {
            if fileInFlight {  // pipelined behind a file of ours: one file in flight at most
                handOver(input, wholeRequest: false, context: context)
                return
            }
            let scan = input.withUnsafeReadableBytes { raw in
                FastRequestScan.scan(raw.withMemoryRebound(to: UInt8.self) { $0 }, maxHeadBytes: maxHeadBytes)
            }
            switch scan {
            case .fast(let head) where context.channel.isWritable:
                if answer(head, in: input, arrived: arrived, context: context) {
                    tally?.add()
                    progress.headStarted = nil
                    input.moveReaderIndex(forwardBy: head.length)
                    if holding != nil {
                        // Held: what follows waits for its answer.
                        if input.readableBytes > 0 { pending = input }
                        return
                    }
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
                    headBegan(at: arrived, context: context)
                }
                return
            }
        }
    }

    /// Bytes for the full path, which has the connection: noted for the deadlines (a head begun, a
    /// body's progress), then passed on.
    private func forwardToFullPath(_ data: NIOAny, arrived: NIODeadline, context: ChannelHandlerContext) {
        let receivingBody = progress.phase == .receivingBody
        deadlines.read(unwrapInboundIn(data).readableBytes, at: arrived, body: receivingBody)
        forwarded = true
        let beginsHead = progress.phase == .awaitingHead && progress.headStarted == nil
        if beginsHead { progress.headStarted = arrived }
        context.fireChannelRead(data)
        if receivingBody || progress.phase == .receivingBody || (beginsHead && progress.headStarted != nil) {
            checkDeadlines(at: arrived, context: context)  // a body's period, or a head still incomplete
        }
    }

    /// The first bytes of a head arrived and the rest has not: its deadline starts now.
    private func headBegan(at arrived: NIODeadline, context: ChannelHandlerContext) {
        guard progress.headStarted == nil else { return }
        progress.headStarted = arrived
        checkDeadlines(at: arrived, context: context)
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

    /// Not passed on: no handler after this one acts on writability (NIO's HTTP/1 handlers and
    /// ``OriginHTTPHandler`` do not implement it; this handler reads `isWritable` when it decides).
    /// A file body larger than the write buffer's high water mark (64 KiB) flips writability off
    /// and on again on every response, and handing each flip down the six handlers behind this one
    /// cost about 5% of a 188 KiB range request's user time (`perf`).
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        let now = NIODeadline.now()
        deadlines.writabilityChanged(writable: writable, at: now)
        if !writable { checkDeadlines(at: now, context: context) }
    }

    /// While a file this handler wrote is going out, the connection is busy, not idle: the idle
    /// timeout does not close it, and graceful shutdown closes it once the file is out. (At any
    /// other time the full path's handlers, which see such a connection as idle, decide.)
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if holding != nil {
            // A held request has its own deadline (``HeldRequests``); shutdown waits for its answer.
            if event is IdleStateHandler.IdleStateEvent { return }
            if event is ChannelShouldQuiesceEvent {
                closeAfterHeld = true
                return
            }
        }
        if fileInFlight {
            if event is IdleStateHandler.IdleStateEvent { return }
            if event is ChannelShouldQuiesceEvent {
                closeAfterFile = true
                return
            }
        }
        if installFullPath != nil, event is IdleStateHandler.IdleStateEvent || event is ChannelShouldQuiesceEvent {
            // No full path yet: every request was answered here and nothing is in flight, so the
            // connection is idle (or stalled mid-head): close it, as the full path would.
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Before the full path is installed nothing behind this handler would close the connection on
    /// an error (an I/O error; this handler parses nothing it cannot answer), so it does; after, the
    /// full path's handlers decide, as for every connection.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard installFullPath != nil else {
            context.fireErrorCaught(error)
            return
        }
        environment.logger.debug("connection error", metadata: ["error.type": "\(error)"])
        context.close(promise: nil)
    }

    /// Hands the connection to HTTP/2 for good: its handlers go in behind this one, get the bytes
    /// read so far (the preface and whatever followed), and this handler leaves the pipeline (HTTP/2
    /// keeps its own idle and shutdown rules: ``HTTP2Connection``).
    private func switchToHTTP2(
        _ input: ByteBuffer, install: (ChannelPipeline.SynchronousOperations) throws -> Void, context: ChannelHandlerContext
    ) {
        installHTTP2 = nil
        installFullPath = nil
        mode = .handedOver
        do {
            try install(context.pipeline.syncOperations)
        } catch {
            environment.logger.error("cannot add the HTTP/2 handlers", metadata: ["error.type": "\(error)"])
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(wrapInboundOut(input))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// Gives `input` to the full path: to wait for its answer if it is one whole request, else for good.
    private func handOver(_ input: ByteBuffer, wholeRequest: Bool, context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            context.flush()
        }
        if let install = installFullPath {
            installFullPath = nil
            do {
                try install(context.pipeline.syncOperations)
            } catch {
                environment.logger.error("cannot add the HTTP/1 handlers", metadata: ["error.type": "\(error)"])
                context.close(promise: nil)
                return
            }
        }
        mode = wholeRequest ? .awaitingFullPath(responses: progress.responsesFinished + 1) : .handedOver
        forwarded = true
        let now = NIODeadline.now()
        if progress.headStarted == nil, progress.phase == .awaitingHead { progress.headStarted = now }
        context.fireChannelRead(wrapInboundOut(input))
        if progress.headStarted != nil || progress.phase == .receivingBody {
            checkDeadlines(at: now, context: context)  // a head still incomplete, or an upload begun
        }
    }

    /// Writes the answer to `head` if it is a shared playlist's 200, a segment or a static file;
    /// `false` to let the full path answer.
    private func answer(_ head: FastRequestHead, in input: ByteBuffer, arrived started: NIODeadline, context: ChannelHandlerContext) -> Bool {
        let now = environment.now()
        let isHead = head.method == .head
        func field(_ range: Range<Int>?) -> String? {
            range.flatMap { input.getString(at: input.readerIndex + $0.lowerBound, length: $0.count) }
        }
        if client == nil { client = context.remoteAddress?.ipAddress ?? "-" }
        /// The request as the responder sees it (``OriginRequest``), with `target` (a cached copy where
        /// there is one) and the fields the scanner kept.
        func request(target: String) -> OriginRequest {
            OriginRequest(method: isHead ? .HEAD : .GET, target: target, version: .http1_1, fields: head.fields(field))
        }
        func entry(uri: String, route: String, response: (status: HTTPResponseStatus, bytes: Int64, cache: CacheStatus), encoding: String?, uncompressed: Int64?) -> AccessLogEntry {
            // The fields the log records only: a cached answer reads no other.
            let logged = OriginRequest(
                method: isHead ? .HEAD : .GET, target: uri, version: .http1_1,
                fields: OriginRequest.Fields(
                    referer: field(head.referer), userAgent: field(head.userAgent), playbackSessionID: field(head.sessionID)))
            return AccessLogEntry(
                request: logged, route: route, client: client ?? "-", receivedAt: now, started: started,
                status: response.status, bytes: response.bytes, cacheStatus: response.cache, contentEncoding: encoding,
                uncompressedLength: uncompressed)
        }

        // The key of both caches, hashed once.
        let targetHash = input.withUnsafeReadableBytes { raw in
            PreencodedPlaylists.hash(UnsafeBufferPointer(rebasing: raw.withMemoryRebound(to: UInt8.self) { $0 }[head.target]))
        }
        if head.range == nil {
            let found: (PreencodedPlaylists.Entry, PreencodedPlaylists.Encoded)? = input.withUnsafeReadableBytes { raw in
                let bytes = raw.withMemoryRebound(to: UInt8.self) { $0 }
                return encoded(
                    target: UnsafeBufferPointer(rebasing: bytes[head.target]), hash: targetHash, gzip: head.acceptsGzip, now: now)
            }
            if let (playlist, encoded) = found {
                let bytes = isHead ? encoded.bytes.getSlice(at: encoded.bytes.readerIndex, length: encoded.headLength)! : encoded.bytes
                context.write(wrapOutboundOut(.byteBuffer(bytes)), promise: nil)
                unflushed = true
                let log = entry(
                    uri: playlist.uri, route: playlist.template, response: (.ok, isHead ? 0 : encoded.bodyLength, .hit),
                    encoding: encoded.contentEncoding, uncompressed: encoded.uncompressedLength)
                let series: OriginMetrics.RequestSeries
                if let known = isHead ? playlist.headSeries : playlist.getSeries {
                    series = known
                } else {
                    series = environment.metrics.requestSeries(route: playlist.template, method: isHead ? "HEAD" : "GET", status: 200)
                    if isHead { playlist.headSeries = series } else { playlist.getSeries = series }
                }
                let time = dates.withValue { $0.commonLogTime(now: now) }
                OriginHTTPHandler.record(log, error: nil, environment: environment, time: time, series: series, lines: accessLines)
                return true
            }
        }

        // Segments and static files: the head from ``PreencodedFileHeads``, the body from the file.
        let known: PreencodedFileHeads.Entry? = input.withUnsafeReadableBytes { raw in
            let bytes = raw.withMemoryRebound(to: UInt8.self) { $0 }
            return fileHeads.value.entry(for: UnsafeBufferPointer(rebasing: bytes[head.target]), hash: targetHash)
        }
        if let known {
            guard let file = currentFile(of: known, now: now) else { return false }
            let log = entry(uri: known.uri, route: known.route.template, response: (.ok, 0, .none), encoding: nil, uncompressed: nil)
            return answer(known, file: file, head: head, in: input, now: now, log: log, context: context)
        }

        // A target not seen yet; stitched playlists: the responder decides, this writes. (They
        // read no request field but these two; a session's start reads them all, so the full path
        // takes it.)
        guard let uri = field(head.target), case .success(let route) = Route.parse(uri) else { return false }
        switch route {
        case .segment, .staticFile:
            let publishCount = content.publishCount
            var response = environment.responder.respond(to: Self.plainGET(uri), route: route, quietly: true)
            if response.status == .ok, case .file(let file, 0, _) = response.body {
                let new = PreencodedFileHeads.Entry(
                    target: Array(uri.utf8), uri: uri, route: route, file: file, response: response)
                new.publishCount = publishCount
                let heads = fileHeads.value
                heads.remember(new)
                let shared = heads.hold(file, for: new, now: now)
                let log = entry(uri: uri, route: route.template, response: (.ok, 0, .none), encoding: nil, uncompressed: nil)
                return answer(new, file: shared, head: head, in: input, now: now, log: log, context: context)
            }
            response.discardBody()  // an error, most likely: answered below with the request's own fields
        case .stitchedPlaylist:
            break
        case .mediaPlaylist, .iFramePlaylist:
            // With delivery directives (a blocking reload, a delta update); without, the encoded
            // playlists above answer, or it is an error the full path answers.
            guard uri.utf8.contains(UInt8(ascii: "?")) else { return false }
        default:
            return false
        }
        let response = environment.responder.respond(to: request(target: uri), route: route)
        let log = entry(uri: uri, route: route.template, response: (response.status, 0, .none), encoding: nil, uncompressed: nil)
        if let hold = response.hold {
            self.hold(request(target: uri), route: route, isHead: isHead, log: log, hold, context: context)
            return true
        }
        return write(response, route: route, isHead: isHead, log: log, now: now, context: context)
    }

    /// Writes the responder's `response` to a request for `route` whose access-log entry is `log`
    /// (this sets its status, byte count and encoding); `false`, having written nothing, when the
    /// full path must answer instead: the response closes the connection, or its fields cannot be
    /// written (the full path then refuses the head and closes).
    private func write(
        _ response: OriginResponse, route: Route, isHead: Bool, log: AccessLogEntry, now: Int64, context: ChannelHandlerContext
    ) -> Bool {
        var response = response
        guard !response.closeConnection else {
            response.discardBody()
            return false
        }
        let bodyLength = response.bodyLength
        if isHead { response.discardBody() }
        let afterWritten = response.afterBodyWrittenIfSent
        let cors = environment.cors
        var bytes = context.channel.allocator.buffer(capacity: 512)
        HTTP1ResponseWriter.writeStatusLine(response.status, to: &bytes)
        let valid = dates.withValue { dates in
            var valid = true
            OriginHTTPHandler.forEachResponseField(
                of: response, bodyLength: bodyLength, keepAlive: true, version: .http1_1, now: now, cors: cors, dates: &dates
            ) { valid = HTTP1ResponseWriter.writeField($0, $1, to: &bytes) && valid }
            return valid
        }
        guard valid else {
            response.discardBody()
            return false
        }
        bytes.writeStaticString("\r\n")
        let log = Self.logged(log, response, isHead: isHead, bodyLength: bodyLength)
        let time = dates.withValue { $0.commonLogTime(now: now) }
        var series: OriginMetrics.RequestSeries?
        if case .stitchedPlaylist = route, response.status == .ok, !isHead {
            if stitchedSeries == nil {
                stitchedSeries = environment.metrics.requestSeries(route: route.template, method: "GET", status: 200)
            }
            series = stitchedSeries
        }
        switch response.body {
        case .empty:
            response.sharedHTTP1?.keep(bytes, second: now, isHead: isHead)
            context.write(wrapOutboundOut(.byteBuffer(bytes)), promise: nil)
            unflushed = true
            OriginHTTPHandler.record(log, error: nil, environment: environment, time: time, series: series, lines: accessLines)
        case .bytes(let body):
            bytes.writeImmutableBuffer(body)
            response.sharedHTTP1?.keep(bytes, second: now, isHead: isHead)
            context.write(wrapOutboundOut(.byteBuffer(bytes)), promise: Self.promise(calling: afterWritten, context: context))
            unflushed = true
            OriginHTTPHandler.record(log, error: nil, environment: environment, time: time, series: series, lines: accessLines)
        case .file(let file, let offset, let count):
            send(
                SharedFile(file, kept: false, openedSecond: now).use(), offset: offset, count: count, after: bytes, log: log,
                time: time, series: series, afterWritten: afterWritten, context: context)
        }
        return true
    }

    /// `log` completed with what `response` (to a `HEAD` when `isHead`, its body `bodyLength`
    /// bytes) says: status, bytes sent, cache status, encoding, identity size.
    private static func logged(_ log: AccessLogEntry, _ response: OriginResponse, isHead: Bool, bodyLength: Int64) -> AccessLogEntry {
        var log = log
        log.status = response.status
        log.bytes = isHead || !response.status.mayHaveResponseBody ? 0 : bodyLength
        log.cacheStatus = response.cacheStatus
        log.contentEncoding = response.headers.first(name: "content-encoding")
        log.uncompressedLength = response.uncompressedLength
        return log
    }

    /// Writes the bytes another connection of this request's group encoded for the same answer in
    /// this second (``SharedHTTP1Answer``): a shared playlist, never a stitched one, no file body.
    private func writeShared(
        _ bytes: ByteBuffer, of response: OriginResponse, isHead: Bool, log: AccessLogEntry, now: Int64, context: ChannelHandlerContext
    ) {
        context.write(wrapOutboundOut(.byteBuffer(bytes)), promise: nil)
        unflushed = true
        let log = Self.logged(log, response, isHead: isHead, bodyLength: response.bodyLength)
        let time = dates.withValue { $0.commonLogTime(now: now) }
        OriginHTTPHandler.record(log, error: nil, environment: environment, time: time, lines: accessLines)
    }

    // MARK: - Held requests

    /// A request held until a publish answers it (``OriginResponse/hold``: a blocking playlist
    /// reload, a hinted part): its entry in the loop's ``HeldRequests``, and what writing its answer
    /// takes.
    private struct Holding {
        var ticket: HeldRequests.Ticket
        var channel: String
        var route: Route
        var isHead: Bool
        var log: AccessLogEntry
    }

    /// Holds `request` here, as the full path would (``OriginHTTPHandler``), but without its
    /// handlers: an entry in the loop's table, which asks the responder again at each publish of
    /// its channel, and this connection's ``Holding``.
    private func hold(
        _ request: OriginRequest, route: Route, isHead: Bool, log: AccessLogEntry, _ hold: OriginResponse.Hold,
        context: ChannelHandlerContext
    ) {
        let ticket = environment.held.on(context.eventLoop).add(
            HeldRequests.Waiter(
                hold: hold, deadline: log.started + hold.timeout, request: request, route: route, connection: context.channel,
                respond: { [self] in environment.responder.respond(to: $0, route: $1) },
                answer: { [self] in answerHeld($0, context: context) }))
        holding = Holding(ticket: ticket, channel: hold.channel, route: route, isHead: isHead, log: log)
    }

    /// Answers the held request (already out of ``HeldRequests``), then goes on with what the client
    /// sent meanwhile, or closes if shutdown was asked for.
    private func answerHeld(_ response: OriginResponse, context: ChannelHandlerContext) {
        let holding = self.holding
        self.holding = nil
        guard let holding, context.channel.isActive else {
            var response = response
            response.discardBody()  // a hinted part's open file, which nobody will write
            return
        }
        let now = environment.now()
        if let shared = response.sharedHTTP1, let bytes = shared.bytes(second: now, isHead: holding.isHead) {
            writeShared(bytes, of: response, isHead: holding.isHead, log: holding.log, now: now, context: context)
        } else if !write(response, route: holding.route, isHead: holding.isHead, log: holding.log, now: now, context: context) {
            // Nothing the responder answers a held request with closes the connection or has
            // fields that cannot be written; were it so, closing is the one safe answer here
            // (`write` has already discarded the body: a file is closed once).
            context.close(promise: nil)
            return
        }
        if closeAfterHeld {
            if fileInFlight {
                closeAfterFile = true
            } else {
                // Written in order: once this empty write is done, so is the answer.
                context.writeAndFlush(wrapOutboundOut(.byteBuffer(ByteBuffer()))).assumeIsolated().whenComplete { _ in
                    context.close(promise: nil)
                }
            }
            unflushed = false
            pending = nil
            return
        }
        if let rest = pending {
            pending = nil
            receive(rest, arrived: .now(), context: context)
        }
        if unflushed {
            unflushed = false
            context.flush()
        }
    }

    /// Bytes that arrived while a request is held (pipelined behind it): kept, to be read once it
    /// is answered. A client that sends more than a request head's limit meanwhile is closed; no
    /// player pipelines behind a blocking reload.
    private func keepBehindHeld(_ input: inout ByteBuffer, context: ChannelHandlerContext) {
        if var kept = pending {
            kept.writeBuffer(&input)
            pending = kept
        } else {
            pending = input
        }
        if let pending, pending.readableBytes > maxHeadBytes {
            environment.logger.debug(
                "closing a connection that sent more than a request head behind a held request",
                metadata: ["client.address": "\(client ?? "-")"])
            context.close(promise: nil)
        }
    }

    /// The connection is going: its held request, if any, leaves the loop's table.
    private func forgetHeld(context: ChannelHandlerContext) {
        guard let holding else { return }
        self.holding = nil
        environment.held.on(context.eventLoop).remove(holding.ticket, channel: holding.channel)
    }

    /// A promise for the write that ends a response, which calls `afterWritten`
    /// (``OriginResponse/afterBodyWritten``) once that write has succeeded; `nil` — no promise, no
    /// allocation — when there is nothing to call, as for nearly every response. (A stitched
    /// playlist with beacons due pays for the future and its callback, 3 allocations in a debug
    /// build; `afterWritten` is passed as the callback itself, since a closure around it is one more.)
    private static func promise(
        calling afterWritten: (@Sendable () -> Void)?, context: ChannelHandlerContext
    ) -> EventLoopPromise<Void>? {
        guard let afterWritten else { return nil }
        let promise = context.eventLoop.makePromise(of: Void.self)
        promise.futureResult.whenSuccess(afterWritten)
        return promise
    }

    /// The file of `entry`'s target, open, for one response (``SharedFile/done()`` when it is sent),
    /// with `entry` brought up to date; `nil` if the full path must answer (the file is gone,
    /// shorter than listed, or no longer answers 200).
    private func currentFile(of entry: PreencodedFileHeads.Entry, now: Int64) -> SharedFile? {
        let heads = fileHeads.value
        let publishCount = content.publishCount
        let windowUnchanged: Bool
        if case .segment = entry.route, let publishCount, entry.publishCount == publishCount {
            windowUnchanged = true
        } else {
            windowUnchanged = false
        }
        if let held = entry.held {
            // The file kept open since an earlier request: no `open`, one `fstat`.
            let current = if case .segment = entry.route { windowUnchanged } else { held.openedSecond == now }
            if current && held.file.isUnchanged() { return held.use() }
            heads.release(entry)
        }
        if windowUnchanged {
            // The window lists the same file as when the entry was made: open it, no lookup.
            guard case .success(let file) = OpenFile.open(entry.path) else { return nil }
            guard file.size >= entry.length else {
                file.close()  // the full path logs it and answers 404
                return nil
            }
            return heads.hold(file, for: entry, now: now)
        }
        if case .staticFile = entry.route, case .success(let file) = OpenFile.open(entry.path) {
            if file.size == entry.length, file.modified == entry.lastModified { return heads.hold(file, for: entry, now: now) }
            file.close()
        }
        var response = environment.responder.respond(to: Self.plainGET(entry.uri), route: entry.route, quietly: true)
        guard response.status == .ok, case .file(let file, 0, _) = response.body else {
            response.discardBody()
            heads.forget(entry)
            return nil
        }
        entry.update(file: file, response: response)
        entry.publishCount = publishCount
        return heads.hold(file, for: entry, now: now)
    }

    /// Writes the answer to `head` for `entry`'s current version, `file`: 200, or 206 for a
    /// satisfiable `Range`; `false` (closing `file`) to let the full path answer a 416. `log` is
    /// the request's access-log entry, whose status and byte count this sets.
    private func answer(
        _ entry: PreencodedFileHeads.Entry,
        file: SharedFile,
        head: FastRequestHead,
        in input: ByteBuffer,
        now: Int64,
        log: AccessLogEntry,
        context: ChannelHandlerContext
    ) -> Bool {
        let length = entry.length
        var range = ByteRangeRequest.full
        if let field = head.range {
            range = input.withUnsafeReadableBytes { raw in
                let bytes = raw.withMemoryRebound(to: UInt8.self) { $0 }
                return ByteRangeRequest.evaluate(rangeField: UnsafeBufferPointer(rebasing: bytes[field]), length: length)
            }
        }
        let first: Int64
        let count: Int64
        switch range {
        case .full:
            (first, count) = (0, length)
        case .partial(let from, let last):
            (first, count) = (from, last - from + 1)
        case .unsatisfiable:
            file.done()
            return false
        }
        let partial = range != .full
        let cors = environment.cors
        let time = dates.withValue { dates in
            entry.encodeFields(now: now, cors: cors, dates: &dates)
            return dates.commonLogTime(now: now)
        }
        guard entry.fieldsAreValid else {
            file.done()
            return false  // the full path refuses the head and closes
        }
        let isHead = head.method == .head
        var bytes = context.channel.allocator.buffer(
            capacity: entry.leading.readableBytes + entry.trailing.readableBytes + 112
                + (isHead || count > OpenFile.smallBodyLimit ? 0 : Int(count)))
        HTTP1ResponseWriter.writeStatusLine(partial ? .partialContent : .ok, to: &bytes)
        bytes.writeImmutableBuffer(entry.leading)
        if partial {
            bytes.writeStaticString("Content-Range: bytes ")
            bytes.writeDecimal(first)
            bytes.writeStaticString("-")
            bytes.writeDecimal(first + count - 1)
            bytes.writeStaticString("/")
            bytes.writeDecimal(length)
            bytes.writeStaticString("\r\n")
        }
        bytes.writeStaticString("Content-Length: ")
        bytes.writeDecimal(count)
        bytes.writeStaticString("\r\n")
        bytes.writeImmutableBuffer(entry.trailing)
        let series = entry.series(head: isHead, partial: partial, metrics: environment.metrics)
        var line = log
        line.status = partial ? .partialContent : .ok
        line.bytes = isHead ? 0 : count
        if isHead {
            file.done()
            context.write(wrapOutboundOut(.byteBuffer(bytes)), promise: nil)
            unflushed = true
            OriginHTTPHandler.record(line, error: nil, environment: environment, time: time, series: series, lines: accessLines)
        } else {
            send(file, offset: first, count: count, after: bytes, log: line, time: time, series: series, context: context)
        }
        return true
    }

    /// Writes `head`, with the file body if it is small (``OpenFile/readSmallBody(offset:count:appendingTo:)``),
    /// else followed by the body by `sendfile`; logs the request once the body is out, and calls
    /// `afterWritten` (``OriginResponse/afterBodyWritten``) once it is written.
    private func send(
        _ shared: SharedFile,
        offset: Int64,
        count: Int64,
        after head: ByteBuffer,
        log: AccessLogEntry,
        time: String,
        series: OriginMetrics.RequestSeries?,
        afterWritten: (@Sendable () -> Void)? = nil,
        context: ChannelHandlerContext
    ) {
        var bytes = head
        let file = shared.file
        let prefix = file.readSmallBody(offset: offset, count: count, appendingTo: &bytes)
        context.write(
            wrapOutboundOut(.byteBuffer(bytes)),
            promise: prefix < count ? nil : Self.promise(calling: afterWritten, context: context))
        guard prefix < count else {
            shared.done()
            unflushed = true
            OriginHTTPHandler.record(log, error: nil, environment: environment, time: time, series: series, lines: accessLines)
            return
        }
        fileInFlight = true
        unflushed = false
        fileBodies.send(file, from: offset + prefix, to: offset + count, context: context, progress: progress) {
            self.wrapOutboundOut($0)
        }.assumeIsolated().whenComplete { result in
            shared.done()
            self.fileInFlight = false
            let error: (any Error)? = if case .failure(let error) = result { error } else { nil }
            // `self.environment`, not a copy captured up front: copying the struct retains
            // each of its references (~3% of a range request).
            OriginHTTPHandler.record(log, error: error, environment: self.environment, time: time, series: series, lines: self.accessLines)
            if error == nil { afterWritten?() }
            if error != nil || self.closeAfterFile { context.close(promise: nil) }
        }
    }

    /// The current encoded response for `target`, made (and remembered) if need be; `nil` if
    /// `target` is not a shared playlist that answers 200 now.
    private func encoded(
        target: UnsafeBufferPointer<UInt8>,
        hash: UInt64,
        gzip: Bool,
        now: Int64
    ) -> (PreencodedPlaylists.Entry, PreencodedPlaylists.Encoded)? {
        let playlists = self.playlists.value
        let entry: PreencodedPlaylists.Entry
        if let known = playlists.entry(for: target, hash: hash) {
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
            guard case .success(let (playlist, cachePolicy)) = responder.sharedPlaylist(channel: entry.channel, entry.playlist)
            else { return nil }
            if entry.entityTag != playlist.entityTag || entry.second != now {
                let cors = environment.cors
                let encodings = dates.withValue { dates in
                    (
                        PreencodedPlaylists.encode(
                            responder.serve(playlist, cachePolicy: cachePolicy, fields: .init()), now: now, cors: cors,
                            dates: &dates),
                        PreencodedPlaylists.encode(
                            responder.serve(playlist, cachePolicy: cachePolicy, fields: .init(acceptEncoding: "gzip")), now: now,
                            cors: cors,
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

    /// A `GET` of `target` with no fields: what a cached file head or playlist encoding answers.
    private static func plainGET(_ target: String) -> OriginRequest {
        OriginRequest(method: .GET, target: target, version: .http1_1, fields: .init())
    }

    /// A new entry if `target` routes to a shared playlist (`/live/{channel}/….m3u8`).
    private static func entry(for target: UnsafeBufferPointer<UInt8>) -> PreencodedPlaylists.Entry? {
        guard target.starts(with: "/live/".utf8), target.reversed().starts(with: "8u3m.".utf8) else { return nil }
        let uri = String(decoding: target, as: UTF8.self)
        guard case .success(let route) = Route.parse(uri) else { return nil }
        switch route {
        case .mediaPlaylist(let channel, let rendition):
            return .init(target: Array(target), channel: channel, playlist: .media(rendition: rendition), template: route.template)
        case .iFramePlaylist(let channel, let rendition):
            return .init(target: Array(target), channel: channel, playlist: .iFrames(rendition: rendition), template: route.template)
        case .multivariantPlaylist(let channel):
            return .init(target: Array(target), channel: channel, playlist: .multivariant, template: route.template)
        default:
            return nil
        }
    }
}

@available(*, unavailable)
extension OriginFastPath: Sendable {}
