import HeadwaterLiveWindow
import NIOCore
import NIOHTTP1

/// Why a request was refused before it was routed (``ProtocolErrorResponder``); the raw value is
/// the metric's label (`headwater_http_protocol_errors_total{reason}`).
enum ProtocolError: String, CaseIterable, Sendable {
    case missingHost = "missing_host"
    case duplicateHost = "duplicate_host"
    case invalidHost = "invalid_host"
    /// The head (request line and fields) is larger than the server reads.
    case headerTooLarge = "header_too_large"
    /// A method NIO's decoder does not know at all (`FOO`); a known one no route takes
    /// (`PROPFIND`) gets the same 501 from the responder. Bytes that are no request line at all
    /// are ``malformed`` (``HTTP1RequestDecoder`` tells the two apart).
    case unknownMethod = "unknown_method"
    /// Anything else the decoder could not read: a bad field, chunk size or version.
    case malformed

    init(_ problem: HostField.Problem) {
        self =
            switch problem {
            case .missing: .missingHost
            case .repeated: .duplicateHost
            case .invalid: .invalidHost
            }
    }

    init(_ error: HTTPParserError) {
        self =
            switch error {
            case .headerOverflow: .headerTooLarge
            case .invalidMethod: .unknownMethod
            default: .malformed
            }
    }

    /// The refusal answered: its status (one mapping, ``OriginResponse/refused(_:cachePolicy:headers:realm:)``)
    /// and one-line reason. `decoderError` says more of a ``malformed`` head.
    func refusal(maxHeadBytes: Int, decoderError: HTTPParserError? = nil) -> Refusal {
        switch self {
        case .missingHost: Refusal(.badRequest, HostField.Problem.missing.reason)
        case .duplicateHost: Refusal(.badRequest, HostField.Problem.repeated.reason)
        case .invalidHost: Refusal(.badRequest, HostField.Problem.invalid.reason)
        case .headerTooLarge:
            Refusal(.headerFieldsTooLarge, "the request head (request line and header fields) is larger than \(maxHeadBytes) bytes")
        case .unknownMethod: .methodNotImplemented
        case .malformed: Refusal(.badRequest, "malformed request: \(Self.describe(decoderError))")
        }
    }

    /// What was wrong, in words, for the decoder's errors a client can cause.
    private static func describe(_ error: HTTPParserError?) -> String {
        switch error {
        case .invalidVersion: "not an HTTP/1.x request line"
        case .invalidURL, .invalidPath, .invalidQueryString, .invalidFragment, .invalidHost, .invalidPort: "invalid request-target"
        case .invalidConstant: "not an HTTP/1 request"
        case .invalidHeaderToken, .lfExpected, .invalidCharactersUsed: "invalid header field syntax"
        case .invalidContentLength, .unexpectedContentLength: "invalid Content-Length"
        case .invalidChunkSize: "invalid chunk size"
        default: "the request could not be read"
        }
    }
}

/// Answers the HTTP/1 requests the protocol itself refuses, before any is routed, in place of
/// NIO's `HTTPServerProtocolErrorHandler` (which answers every decoder error with a bare 400):
/// - a head NIO's decoder cannot read: 431 when it is larger than the head limit (the fast path
///   hands an oversized head to the decoder, so both paths answer it alike), 501 for a method the
///   decoder does not know, 400 with what was wrong otherwise;
/// - a head whose `Host` fields break RFC 9112 §3.2 (``HostField``): 400.
///
/// Each answer has a one-line body (``OriginResponse/refused(_:cachePolicy:headers:realm:)``), is
/// written by the one HTTP/1 writer with `Connection: close`, gets an access-log line and its
/// request counters like any response, and is counted by reason (``RefusalCounters``). Then the
/// output is closed and the connection lingers, dropping what the client still sends, until the
/// client closes or ``OriginHTTPHandler/lingerTimeout`` passes: closing at once with unread bytes
/// would reset the connection, and the client could lose the answer.
///
/// Sits after `HTTPServerPipelineHandler`, which hands it a decoder error only when no response
/// is being written (the error of a pipelined request waits for the responses before it).
final class ProtocolErrorResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let environment: OriginHTTPHandler.Environment
    private let dates: NIOLoopBoundBox<ResponseDates>
    private let accessLines: AccessLogLines
    private let maxHeadBytes: Int
    /// A response head was written and its `.end` not yet.
    private var responseInProgress = false
    /// This handler answered: everything inbound is dropped until the connection closes.
    private var refused = false
    private var lingerTimer: Scheduled<Void>?

    init(
        environment: OriginHTTPHandler.Environment, dates: NIOLoopBoundBox<ResponseDates>, accessLines: AccessLogLines,
        maxHeadBytes: Int
    ) {
        self.environment = environment
        self.dates = dates
        self.accessLines = accessLines
        self.maxHeadBytes = maxHeadBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        if case .head(let head) = unwrapInboundIn(data), let problem = HostField.problem(head) {
            let request = OriginRequest(head)
            let route = try? Route.parse(head.uri).get().template
            refuse(ProtocolError(problem), request: request, route: route, context: context)
            return
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if refused {
            // The decoder's complaints about bytes after its error are expected; anything else
            // (a reset) ends the linger.
            if !(error is ByteToMessageDecoderError) { closeNow(context: context) }
            return
        }
        guard let parserError = error as? HTTPParserError, !responseInProgress else {
            context.fireErrorCaught(error)
            return
        }
        // Not passed on: ``OriginHTTPHandler`` would close at once, before the answer is out.
        refuse(ProtocolError(parserError), decoderError: parserError, request: nil, route: nil, context: context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code >= 200: responseInProgress = true
        case .end: responseInProgress = false
        case .head, .body: break
        }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        lingerTimer?.cancel()
        lingerTimer = nil
        context.fireChannelInactive()
    }

    /// Answers `error` (for `request`, when its head was read), logs and counts it, and lingers.
    private func refuse(
        _ error: ProtocolError, decoderError: HTTPParserError? = nil, request: OriginRequest?, route: String?,
        context: ChannelHandlerContext
    ) {
        refused = true
        let started = NIODeadline.now()
        let now = environment.now()
        environment.responder.refusals.protocolError(error)
        var response = OriginResponse.refused(
            error.refusal(maxHeadBytes: maxHeadBytes, decoderError: decoderError),
            cachePolicy: CachePolicy(.error(targetDuration: nil)))
        let bodyLength = response.bodyLength
        let isHead = request?.method == .HEAD
        if isHead { response.discardBody() }
        let headers = dates.withValue { dates in
            OriginHTTPHandler.responseFields(
                of: response, bodyLength: bodyLength, keepAlive: false, version: .http1_1, now: now, cors: environment.cors,
                dates: &dates)
        }
        // A head the decoder could not read is logged as `"- -"`, as nginx logs one.
        let logged = request ?? OriginRequest(method: .RAW(value: "-"), target: "-", version: .http1_1, fields: .init())
        let entry = AccessLogEntry(
            request: logged, route: route, client: context.channel.remoteAddress?.ipAddress ?? "-", receivedAt: now,
            started: started, response: response, bytes: isHead ? 0 : bodyLength)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: response.status, headers: headers))), promise: nil)
        if case .bytes(let body) = response.body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { result in
            let failure: (any Error)? = if case .failure(let error) = result { error } else { nil }
            let time = self.dates.withValue { $0.commonLogTime(now: now) }
            OriginHTTPHandler.record(entry, error: failure, environment: self.environment, time: time, lines: self.accessLines)
            guard failure == nil else { return self.closeNow(context: context) }
            self.linger(context: context)
        }
    }

    /// Closes the output (the client reads the answer, then EOF) and closes the connection when
    /// the client does, or after ``OriginHTTPHandler/lingerTimeout``.
    private func linger(context: ChannelHandlerContext) {
        context.close(mode: .output).assumeIsolated().whenFailure { _ in self.closeNow(context: context) }
        lingerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: OriginHTTPHandler.lingerTimeout) {
            self.closeNow(context: context)
        }
    }

    private func closeNow(context: ChannelHandlerContext) {
        lingerTimer?.cancel()
        lingerTimer = nil
        context.close(promise: nil)
    }
}

@available(*, unavailable)
extension ProtocolErrorResponder: Sendable {}
