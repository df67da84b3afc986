import HeadwaterLiveWindow
import HeadwaterRuntime
import Logging
import NIOCore
import NIOHTTP1

/// The application handler of one connection, after `configureHTTPServerPipeline`: routes each
/// request, writes its response (playlists from memory, files by `sendfile`), streams ingest bodies
/// to the ``IngestSink``, and logs one access line per request.
///
/// Ordering and back-pressure come from `HTTPServerPipelineHandler`: it hands over one request at
/// a time and stops reading until the response's `.end` is written. A file body's `.end` is written
/// only once the file region itself has gone out, so a pipelining client holds at most one open
/// file per connection and cannot make the server queue unbounded responses. An upload's body goes
/// to its sink in batches written off the event loop (``IngestBodyWriter``); while the writes lag
/// behind the client, the handler holds the connection's reads (``read(context:)``).
final class OriginHTTPHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What every connection shares.
    struct Environment: Sendable {
        var responder: OriginResponder
        var ingest: (any IngestSink)?
        var maxIngestBodyBytes: Int64
        var cors: Bool
        var logger: Logger
        /// Where the access log lines go (see ``AccessLogEntry``).
        var accessLogger: Logger
        /// Where each request is counted.
        var metrics: OriginMetrics
        /// Wall clock, Unix seconds.
        var now: @Sendable () -> Int64 = ResponseDates.now
        /// The connections' deadlines (``OriginFastPath`` keeps them).
        var limits = ConnectionLimits()
        /// `headwater_http_deadline_closes_total{deadline}`; `nil` in tests that do not count.
        var deadlineCloses: OriginMetrics.LabelledCounters<ConnectionDeadlines.Expired>? = nil
        /// Requests waiting for a later version of their channel (blocking reloads), per event loop.
        var held = HeldRequestsByLoop()
    }

    private enum State {
        /// Between requests.
        case idle
        /// A request answered once its `.end` arrives; body bytes (rare on `GET`) are ignored.
        case receiving(Exchange)
        /// An ingest request whose body goes to its upload through the writer.
        case uploading(Exchange, IngestBodyWriter)
        /// An ingest request whose body has ended: its last batches are being written and the
        /// upload finished (``IngestBodyWriter/Event/done(_:)`` brings the answer).
        case finishingUpload(Exchange)
        /// As ``finishingUpload(_:)``, but the client closed the connection after the body's end
        /// without waiting for the answer (ffmpeg's HTTP PUT does): the upload still finishes and
        /// publishes, and its access line is logged with the status it got.
        case finishingUploadUnanswered(Exchange)
        /// Answered before the request ended (a refused or oversized upload); the rest of the body
        /// is read and dropped. With `lingering`, the output is closed and the connection closes
        /// at the request's end or after ``lingerTimeout``, whichever comes first, so the client
        /// reads the answer instead of a reset.
        case discarding(lingering: Bool)
        /// A complete request waits for a later version of its channel (a blocking reload): it is in
        /// its loop's ``HeldRequests`` under this ticket until answered, expired, or its client goes.
        case held(Exchange, HeldRequests.Ticket, channel: String)
        /// The response to a complete request is being written.
        case responding
        /// The connection is closing; everything inbound is ignored.
        case closing
    }

    /// How long a refused upload may keep sending before the connection is closed under it.
    static let lingerTimeout: TimeAmount = .seconds(2)

    private let environment: Environment
    private let dates: NIOLoopBoundBox<ResponseDates>
    private let accessLines: AccessLogLines
    private var state: State = .idle
    private var lingerTimer: Scheduled<Void>?
    /// A `read` held back while an upload's writes lag behind (``IngestBodyWriter/holdsReads``).
    private var heldRead = false
    /// How the connection reads while an upload's body arrives (shared by an HTTP/2 connection's streams).
    private let uploadReads: UploadReadPacing?
    /// This handler's upload is counted in ``uploadReads``.
    private var pacedUpload = false
    /// Counts the responses this handler finished, for the connection's ``OriginFastPath``.
    private let progress: FullPathProgress
    /// `sendfile` on plain HTTP/1.1; pieces through memory under TLS and on HTTP/2 streams.
    private let fileBodies: FileBodySending

    init(
        environment: Environment, dates: NIOLoopBoundBox<ResponseDates>, accessLines: AccessLogLines,
        progress: FullPathProgress = FullPathProgress(), fileBodies: FileBodySending = .sendfile,
        uploadReads: UploadReadPacing? = nil
    ) {
        self.environment = environment
        self.dates = dates
        self.accessLines = accessLines
        self.progress = progress
        self.fileBodies = fileBodies
        self.uploadReads = uploadReads
    }

    // MARK: - Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            received(head, context: context)
        case .body(let chunk):
            received(chunk, context: context)
        case .end:
            receivedEnd(context: context)
        }
    }

    private func received(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard case .idle = state else { return }  // .closing: drop whatever follows
        progress.receivedHead()
        let exchange = Exchange(
            head: head,
            request: OriginRequest(head),
            route: Route.parse(head.uri),
            started: .now(),
            receivedAt: environment.now(),
            client: context.channel.remoteAddress?.ipAddress ?? "-",
            keepAlive: head.isKeepAlive
        )
        if case .success(.ingest(let channel, let path)) = exchange.route, environment.ingest != nil,
            let method = Self.ingestMethod(head.method)
        {
            beginUpload(exchange, channel: channel, path: path, method: method, context: context)
        } else {
            state = .receiving(exchange)
        }
    }

    private func received(_ chunk: ByteBuffer, context: ChannelHandlerContext) {
        // Only the writer is bound: copying the exchange for each of a million one-byte chunks
        // was a tenth of the loop's time.
        guard case .uploading(_, let writer) = state else { return }
        writer.append(chunk)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if case .uploading(_, let writer) = state { writer.readComplete() }
        context.fireChannelReadComplete()
    }

    private func receivedEnd(context: ChannelHandlerContext) {
        switch state {
        case .receiving(let exchange):
            state = .responding
            progress.phase = .responding
            let response = respond(to: exchange)
            if let hold = response.hold, case .success(let route) = exchange.route {
                self.hold(exchange, hold, route: route, context: context)
            } else {
                write(response, for: exchange, context: context)
            }
        case .uploading(let exchange, let writer):
            state = .finishingUpload(exchange)
            progress.phase = .responding
            writer.end()  // answered at `.done`
        case .discarding(let lingering):
            if lingering {
                closeNow(context: context)
            } else {
                state = .idle
                progress.phase = .awaitingHead
            }
        case .idle, .finishingUpload, .finishingUploadUnanswered, .held, .responding, .closing:
            break
        }
    }

    // MARK: - Held requests

    /// Holds `exchange` until a publish of its channel lets the responder answer it, or its
    /// timeout passes (then `hold.timedOut`). Costs a table entry on this loop, no timer; the
    /// table (``HeldRequests``) asks the responder again at each publish.
    private func hold(_ exchange: Exchange, _ hold: OriginResponse.Hold, route: Route, context: ChannelHandlerContext) {
        let ticket = environment.held.on(context.eventLoop).add(
            HeldRequests.Waiter(
                hold: hold, deadline: exchange.started + hold.timeout, request: exchange.request, route: route,
                connection: context.channel.parent ?? context.channel,
                respond: { self.environment.responder.respond(to: $0, route: $1) },
                answer: { self.answerHeld($0, context: context) }))
        state = .held(exchange, ticket, channel: hold.channel)
    }

    /// Writes the held request's answer (it is already out of ``HeldRequests``).
    private func answerHeld(_ response: OriginResponse, context: ChannelHandlerContext) {
        guard case .held(let exchange, _, _) = state else {
            var response = response
            response.discardBody()  // a hinted part's open file, which nobody will write
            return
        }
        state = .responding
        write(response, for: exchange, context: context)
    }

    /// Takes a held request out of its loop's table (its connection is going).
    private func releaseHeld(context: ChannelHandlerContext) {
        guard case .held(_, let ticket, let channel) = state else { return }
        environment.held.on(context.eventLoop).remove(ticket, channel: channel)
    }

    private func respond(to exchange: Exchange) -> OriginResponse {
        switch exchange.route {
        case .failure(let error):
            return .refused(error, cachePolicy: CachePolicy(.error(targetDuration: nil)))
        case .success(let route):
            return environment.responder.respond(to: exchange.request, route: route)
        }
    }

    // MARK: - Ingest

    private static func ingestMethod(_ method: HTTPMethod) -> IngestMethod? {
        switch method {
        case .PUT: .put
        case .POST: .post
        case .DELETE: .delete
        default: nil
        }
    }

    private func beginUpload(
        _ exchange: Exchange,
        channel: String,
        path: [String],
        method: IngestMethod,
        context: ChannelHandlerContext
    ) {
        guard let sink = environment.ingest else { return }
        let headers = exchange.head.headers
        let chunked = headers[canonicalForm: "transfer-encoding"].contains { $0.lowercased() == "chunked" }
        let contentLength = chunked ? nil : headers.first(name: "content-length").flatMap { Int64($0) }
        let upload: any IngestUpload
        do throws(Refusal) {
            // Credentials first: a client without them learns nothing of the limits.
            try sink.authorize(channel: channel, authorization: exchange.request.fields.authorization)
            if let contentLength, contentLength > environment.maxIngestBodyBytes {
                throw Refusal(.tooLarge, "Content-Length \(contentLength) is more than \(environment.maxIngestBodyBytes) bytes")
            }
            upload = try sink.begin(
                channel: channel,
                path: path,
                method: method,
                contentLength: method == .delete ? (contentLength ?? 0) : contentLength
            )
        } catch {
            refuse(exchange, error, context: context)
            return
        }
        let writer = IngestBodyWriter(
            upload: upload, eventLoop: context.eventLoop, limit: environment.maxIngestBodyBytes,
            dropsBody: method == .delete
        ) { event in
            self.uploadEvent(event, context: context)
        }
        state = .uploading(exchange, writer)
        if method != .delete, let uploadReads {
            uploadReads.uploadStarted(on: context.channel)
            pacedUpload = true
        }
        if method != .delete, headers.first(name: "expect")?.lowercased() == "100-continue" {
            context.writeAndFlush(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))),
                promise: nil
            )
        }
    }

    /// What the upload's writer reports: a held read may go on, or the upload is over (answered
    /// now: after the body's end as any response, before it as a refusal that drops the rest).
    private func uploadEvent(_ event: IngestBodyWriter.Event, context: ChannelHandlerContext) {
        if case .done(let result) = event {
            switch state {
            case .uploading(let exchange, _):
                uploadPacingEnded(context: context)
                if case .failure(let refusal) = result { refuse(exchange, refusal, context: context) }
            case .finishingUpload(let exchange):
                uploadPacingEnded(context: context)
                state = .responding
                write(Self.response(to: exchange, result), for: exchange, context: context)
            case .finishingUploadUnanswered(let exchange):
                state = .closing
                let response = Self.response(to: exchange, result)
                finish(Self.accessEntry(exchange, response: response, bytes: 0), error: nil)
            case .idle, .receiving, .discarding, .held, .responding, .closing:
                break  // the connection closed meanwhile
            }
        }
        releaseHeldRead(context: context)
    }

    // MARK: - Reading

    /// The upload's end for ``uploadReads`` (once per upload, however it ended: an HTTP/2
    /// connection's count of uploads must not leak a stream that was reset mid-body).
    private func uploadPacingEnded(context: ChannelHandlerContext) {
        guard pacedUpload else { return }
        pacedUpload = false
        uploadReads?.uploadEnded(on: context.channel)
    }

    /// Holds the connection's next read while an upload's writes lag behind its body
    /// (``IngestBodyWriter/holdsReads``): the socket buffers fill and TCP slows the client down.
    func read(context: ChannelHandlerContext) {
        if case .uploading(_, let writer) = state, writer.holdsReads {
            heldRead = true
        } else {
            context.read()
        }
    }

    private func releaseHeldRead(context: ChannelHandlerContext) {
        guard heldRead else { return }
        if case .uploading(_, let writer) = state, writer.holdsReads { return }
        heldRead = false
        context.read()
    }

    /// Answers an upload before its body has ended. If a body may still be coming, the
    /// connection cannot be reused: it is answered with `Connection: close`, then lingers.
    private func refuse(_ exchange: Exchange, _ error: Refusal, context: ChannelHandlerContext) {
        let bodyStillComing: Bool
        if case .uploading = state {
            bodyStillComing = true  // refused mid-body
        } else {
            let headers = exchange.head.headers
            bodyStillComing =
                headers.contains(name: "transfer-encoding")
                || (headers.first(name: "content-length").flatMap { Int64($0) } ?? 0) > 0
        }
        state = .discarding(lingering: bodyStillComing)
        var response = Self.response(for: error)
        response.closeConnection = bodyStillComing
        write(response, for: exchange, context: context, lingerAfterwards: bodyStillComing)
    }

    /// The answer to a finished upload: 201 (204 for `DELETE`) or its refusal.
    private static func response(to exchange: Exchange, _ result: Result<Void, Refusal>) -> OriginResponse {
        switch result {
        case .success:
            OriginResponse(status: exchange.head.method == .DELETE ? .noContent : .created, cachePolicy: CachePolicy(.health))
        case .failure(let refusal): response(for: refusal)
        }
    }

    private static func response(for refusal: Refusal) -> OriginResponse {
        .refused(refusal, cachePolicy: CachePolicy(.health))
    }

    // MARK: - Writing

    /// Writes `response` with the connection-level fields. When the request is complete
    /// (``State/responding``), the handler returns to ``State/idle`` just before the final `.end`
    /// (whose write lets `HTTPServerPipelineHandler` deliver the next pipelined request), or closes.
    /// Once the `.end` is written — so the body before it too — it calls the response's
    /// ``OriginResponse/afterBodyWritten`` (a `GET`'s `200` only; a failed write calls nothing).
    private func write(
        _ response: OriginResponse,
        for exchange: Exchange,
        context: ChannelHandlerContext,
        lingerAfterwards: Bool = false
    ) {
        var response = response
        let keepAlive = exchange.keepAlive && !response.closeConnection
        let now = environment.now()
        let bodyLength = response.bodyLength
        if exchange.head.method == .HEAD { response.discardBody() }
        let afterWritten = response.afterBodyWrittenIfSent

        let headers = dates.withValue { dates in
            Self.responseFields(
                of: response, bodyLength: bodyLength, keepAlive: keepAlive, version: exchange.head.version, now: now,
                cors: environment.cors, dates: &dates)
        }

        let head = HTTPResponseHead(version: .http1_1, status: response.status, headers: headers)
        let log = Self.accessEntry(
            exchange, response: response,
            bytes: exchange.head.method == .HEAD || !response.status.mayHaveResponseBody ? 0 : bodyLength)
        context.write(wrapOutboundOut(.head(head)), promise: nil)

        switch response.body {
        case .empty:
            writeEnd(log: log, keepAlive: keepAlive, lingerAfterwards: lingerAfterwards, context: context)
        case .bytes(let buffer):
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            writeEnd(
                log: log, keepAlive: keepAlive, lingerAfterwards: lingerAfterwards, afterWritten: afterWritten, context: context)
        case .file(let file, let offset, let count):
            // A small body goes in the head's `writev`; the rest by `sendfile` or in pieces.
            var start = context.channel.allocator.buffer(capacity: count <= OpenFile.smallBodyLimit ? Int(count) : 0)
            let prefix = file.readSmallBody(offset: offset, count: count, appendingTo: &start)
            if prefix > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(start))), promise: nil) }
            guard prefix < count else {
                file.close()
                writeEnd(
                    log: log, keepAlive: keepAlive, lingerAfterwards: lingerAfterwards, afterWritten: afterWritten,
                    context: context)
                return
            }
            fileBodies.send(
                file, from: offset + prefix, to: offset + count, context: context, progress: progress,
                stall: sendStall
            ) {
                self.wrapOutboundOut(.body($0))
            }.assumeIsolated().whenComplete { result in
                file.close()
                switch result {
                case .success:
                    self.writeEnd(
                        log: log, keepAlive: keepAlive, lingerAfterwards: false, afterWritten: afterWritten, context: context)
                case .failure(let error):
                    self.finish(log, error: error)
                    self.closeNow(context: context)
                }
            }
        }
    }

    private static func accessEntry(_ exchange: Exchange, response: OriginResponse, bytes: Int64) -> AccessLogEntry {
        AccessLogEntry(
            request: exchange.request,
            route: try? exchange.route.get().template,
            client: exchange.client,
            receivedAt: exchange.receivedAt,
            started: exchange.started,
            response: response,
            bytes: bytes
        )
    }

    /// `TCP_CORK` around the `sendfile` of a large body (nginx: `tcp_nopush`): `sendfile` returns
    /// whenever the socket buffer is full, and with `TCP_NODELAY` the partial segment at the end of
    /// each call would go out at once; corked, the body leaves in full segments and the client reads
    /// it in fewer, larger pieces (`headwater-bench all`, 1 MiB segments: 0.96× nginx's MB/s corked,
    /// 0.61× not). Smaller bodies skip it: a body of up to 16 KiB travels in its head's write
    /// (``OpenFile/readSmallBody(offset:count:appendingTo:)``), one up to 256 KiB leaves in one or a
    /// few `sendfile` calls behind a head of its own, and the two `setsockopt` calls would cost ~7%
    /// of a 188 KiB range request.
    static func cork(_ on: Bool, context: ChannelHandlerContext) {
        #if os(Linux)
        try? context.channel.syncOptions?.setOption(Self.tcpCork, value: on ? 1 : 0)
        #endif
    }

    /// Bodies larger than this are sent corked (see ``cork(_:context:)``).
    static let corkedBodyThreshold: Int64 = 256 * 1024

    #if os(Linux)
    private static let tcpCork = ChannelOptions.Types.SocketOption(
        level: NIOBSDSocket.OptionLevel.tcp, name: NIOBSDSocket.Option(rawValue: 3))  // TCP_CORK, linux/tcp.h
    #endif

    /// The fields of `response`'s head: its own, plus `Date`, `Cache-Control`/`Expires`, `Server`,
    /// `Last-Modified`, `Content-Length`, CORS and `Connection`. Shared by ``write(_:for:context:lingerAfterwards:)``
    /// and ``OriginFastPath`` (which encodes a playlist's whole response once per version and
    /// second), so both paths send the same head.
    static func responseFields(
        of response: OriginResponse,
        bodyLength: Int64,
        keepAlive: Bool,
        version: HTTPVersion,
        now: Int64,
        cors: Bool,
        dates: inout ResponseDates
    ) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.reserveCapacity(response.headers.count + 10)
        forEachResponseField(
            of: response, bodyLength: bodyLength, keepAlive: keepAlive, version: version, now: now, cors: cors, dates: &dates
        ) { headers.add(name: $0, value: $1) }
        return headers
    }

    /// Calls `field` with each of ``responseFields(of:bodyLength:keepAlive:version:now:cors:dates:)``
    /// in order, for a caller that writes them straight into bytes (``OriginFastPath``'s stitched
    /// playlists: building `HTTPHeaders` for each one, and encoding them, was about a tenth of
    /// the request's CPU).
    static func forEachResponseField(
        of response: OriginResponse,
        bodyLength: Int64,
        keepAlive: Bool,
        version: HTTPVersion,
        now: Int64,
        cors: Bool,
        dates: inout ResponseDates,
        _ field: (String, String) -> Void
    ) {
        field("Date", dates.date(now: now))
        if let policy = response.cachePolicy {
            field("Cache-Control", policy.cacheControl)
            if let maxAge = policy.maxAge {
                field("Expires", dates.expires(now: now, maxAge: maxAge))
            }
        }
        field("Server", "headwater")
        if let lastModified = response.lastModified {
            field("Last-Modified", HTTPDate.format(unixSeconds: lastModified))
        }
        for (name, value) in response.headers { field(name, value) }
        if response.status.mayHaveResponseBody {
            field("Content-Length", String(bodyLength))
        }
        if cors {
            field("Access-Control-Allow-Origin", CORS.allowOrigin)
            field("Access-Control-Expose-Headers", CORS.exposeHeaders)
        }
        if !keepAlive {
            field("Connection", "close")
        } else if version == .http1_0 {
            field("Connection", "keep-alive")
        }
    }

    /// Writes the response's `.end` and, once it is written, logs the request and calls
    /// `afterWritten` (``OriginResponse/afterBodyWritten``: the `.end` goes out after the body, so
    /// its write succeeding means the body's did; no promise of its own).
    private func writeEnd(
        log: AccessLogEntry,
        keepAlive: Bool,
        lingerAfterwards: Bool,
        afterWritten: (@Sendable () -> Void)? = nil,
        context: ChannelHandlerContext
    ) {
        if case .responding = state {
            state = keepAlive ? .idle : .closing
            progress.phase = .awaitingHead
        }
        progress.responsesFinished += 1
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { result in
            switch result {
            case .success:
                self.finish(log, error: nil)
                afterWritten?()
                if lingerAfterwards {
                    self.linger(context: context)
                } else if !keepAlive {
                    self.closeNow(context: context)
                }
            case .failure(let error):
                self.finish(log, error: error)
                self.closeNow(context: context)
            }
        }
    }

    private func finish(_ entry: AccessLogEntry, error: (any Error)?) {
        let time = dates.withValue { $0.commonLogTime(now: entry.receivedAt) }
        Self.record(entry, error: error, environment: environment, time: time, lines: accessLines)
    }

    /// Logs a request's access line and counts it in the metrics (also for ``OriginFastPath``).
    /// - Parameter time: the access log's time of ``AccessLogEntry/receivedAt`` (``ResponseDates/commonLogTime(now:)``).
    /// - Parameter series: the request's metric series, if the caller has looked it up already.
    static func record(
        _ entry: AccessLogEntry, error: (any Error)?, environment: Environment, time: String,
        series: OriginMetrics.RequestSeries? = nil, lines: AccessLogLines
    ) {
        let finished = NIODeadline.now()  // one clock read for the log line and the metrics
        lines.log(entry, error: error, time: time, finished: finished)
        let metrics = environment.metrics
        environment.responder.statusAPI.traffic.record(
            route: entry.route, path: entry.path, status: Int(entry.status.code), at: entry.receivedAt)
        let duration = Duration.nanoseconds((finished - entry.started).nanoseconds)
        if let series {
            series.record(duration: duration, bytes: entry.bytes)
        } else {
            metrics.requestServed(
                route: entry.route, method: entry.method.rawValue, status: Int(entry.status.code), duration: duration,
                bytes: entry.bytes)
        }
        if let uncompressed = entry.uncompressedLength, entry.bytes > 0 {
            metrics.playlistSent(
                gzip: entry.contentEncoding == "gzip",
                bytes: entry.bytes,
                uncompressedBytes: uncompressed
            )
        }
    }

    /// A piece of a file body not written within the send timeout closes this channel (an HTTP/2
    /// stream: reset), counted as a send deadline.
    private var sendStall: FileBodyPieces.Stall {
        let environment = environment
        return FileBodyPieces.Stall(timeout: TimeAmount(environment.limits.sendTimeout)) {
            environment.deadlineCloses?.increment(.send)
        }
    }

    // MARK: - Closing

    /// Closes the output (the client sees the end of the response, then EOF) and keeps reading
    /// and dropping the request body until it ends or ``lingerTimeout`` passes.
    private func linger(context: ChannelHandlerContext) {
        guard case .discarding(lingering: true) = state else { return }
        context.close(mode: .output).assumeIsolated().whenFailure { _ in self.closeNow(context: context) }
        lingerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerTimeout) {
            self.closeNow(context: context)
        }
    }

    private func closeNow(context: ChannelHandlerContext) {
        closing(context: context)
        lingerTimer?.cancel()
        lingerTimer = nil
        context.close(promise: nil)
    }

    /// The connection is going: an upload still receiving its body is aborted (a truncated
    /// upload is never published), one whose body has ended finishes unanswered.
    private func closing(context: ChannelHandlerContext) {
        releaseHeld(context: context)
        switch state {
        case .uploading(_, let writer):
            state = .closing
            writer.abort()
        case .finishingUpload(let exchange):
            state = .finishingUploadUnanswered(exchange)
        case .finishingUploadUnanswered:
            break
        case .idle, .receiving, .discarding, .held, .responding, .closing:
            state = .closing
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closing(context: context)
        uploadPacingEnded(context: context)
        lingerTimer?.cancel()
        lingerTimer = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Parse errors were answered 400 by HTTPServerProtocolErrorHandler (when no response had
        // started); I/O errors (a reset) need no answer. Either way the connection is done.
        environment.logger.debug("connection error", metadata: ["error.type": "\(error)"])
        closeNow(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is IdleStateHandler.IdleStateEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        switch state {
        case .finishingUpload, .finishingUploadUnanswered, .held, .responding, .closing:
            break  // a held request has its own deadline; a slow reader of a long response is not idle; `.closing` is on its way
        case .discarding(lingering: true):
            break  // the linger timer closes it
        case .idle, .receiving, .uploading, .discarding(lingering: false):
            // An idle keep-alive connection, or a client that stalled mid-request.
            closeNow(context: context)
        }
    }
}

@available(*, unavailable)
extension OriginHTTPHandler: Sendable {}

/// One request, from its head to its access-log line.
private struct Exchange {
    let head: HTTPRequestHead
    /// What the responder and the access log read of `head`.
    let request: OriginRequest
    let route: Result<Route, Refusal>
    let started: NIODeadline
    /// Unix seconds.
    let receivedAt: Int64
    /// The peer's IP address, `-` if unknown.
    let client: String
    let keepAlive: Bool
}
