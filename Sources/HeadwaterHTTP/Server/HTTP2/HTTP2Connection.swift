import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// One HTTP/2 connection's handlers: `h2` after ALPN on the TLS listener, h2c after the preface on
/// the plain one. Each stream is one request, turned into NIO's HTTP/1 request parts by
/// `HTTP2FramePayloadToHTTP1ServerCodec` and answered by ``OriginHTTPHandler`` — the same handler,
/// responder, access log and metrics as HTTP/1.1 — with file bodies sent in pieces under the
/// stream's flow control (``FileBodyPieces``). The codec turns the response head into HPACK, with
/// lower-case names and without HTTP/1's connection-specific fields (`Connection`), and the access
/// log's protocol field says `HTTP/2.0`.
///
/// Limits (``HTTP2Limits``): concurrent streams and header list size are announced in the server's
/// SETTINGS and enforced by NIOHTTP2; a client resetting streams faster than the rapid-reset limit
/// gets `GOAWAY(ENHANCE_YOUR_CALM)` and the connection is closed. Idle connections (no stream open
/// for the idle timeout) and graceful shutdown (`GOAWAY`, then close once open streams finish) are
/// `NIOHTTP2ServerConnectionManagementHandler`'s.
enum HTTP2Connection {
    static func configure(
        _ pipeline: ChannelPipeline.SynchronousOperations,
        environment: OriginHTTPHandler.Environment,
        dates: NIOLoopBoundBox<ResponseDates>,
        accessLines: AccessLogLines,
        limits: HTTP2Limits,
        idleTimeout: TimeAmount
    ) throws {
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: limits.maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: limits.maxHeaderListSize),
            // Large enough that a 1 MiB upload is not paced by WINDOW_UPDATEs.
            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        ]
        connection.targetWindowSize = 1 << 20
        var stream = NIOHTTP2Handler.StreamConfiguration()
        stream.targetWindowSize = 1 << 20
        stream.streamResetFrameRateLimit.maximumCount = limits.maxResetsPerWindow
        stream.streamResetFrameRateLimit.windowLength = TimeAmount(limits.resetWindow)
        let management = NIOHTTP2ServerConnectionManagementHandler(
            eventLoop: pipeline.eventLoop,
            configuration: .init(
                maxIdleTime: idleTimeout > .zero ? idleTimeout : nil,
                maxAge: nil,
                maxGraceTime: nil,  // the server's shutdown grace period closes what is left
                keepalive: nil
            )
        )
        try pipeline.addHandler(SendDeadline(environment: environment))
        try pipeline.addHandler(FlushCoalescing())
        // Streams live on the connection's event loop, as the log lines do.
        let lines = NIOLoopBound(accessLines, eventLoop: pipeline.eventLoop)
        let uploadReads = NIOLoopBound(
            UploadReadPacing(readsOnParent: true), eventLoop: pipeline.eventLoop)
        _ = try pipeline.configureHTTP2Pipeline(
            mode: .server,
            connectionConfiguration: connection,
            streamConfiguration: stream,
            streamDelegate: management.http2StreamDelegate
        ) { streamChannel in
            streamChannel.eventLoop.makeCompletedFuture {
                let handlers = streamChannel.pipeline.syncOperations
                try handlers.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                try handlers.addHandler(StreamErrorDeferral())
                try handlers.addHandler(
                    OriginHTTPHandler(
                        environment: environment, dates: dates, accessLines: lines.value, fileBodies: .pieces,
                        uploadReads: uploadReads.value))
            }
        }
        try pipeline.addHandler(management)
        try pipeline.addHandler(ClosingOnError(logger: environment.logger))
    }

    /// The end of the connection's pipeline: a connection error (a protocol violation, a reset
    /// flood, a header list over the limit) has been answered with `GOAWAY` by NIOHTTP2, which leaves
    /// the closing to the application — so the client cannot keep the connection (and its
    /// descriptor) after breaking the rules.
    final class ClosingOnError: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame
        let logger: Logger

        init(logger: Logger) { self.logger = logger }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            logger.debug("HTTP/2 connection error", metadata: ["error.type": "\(error)"])
            context.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension HTTP2Connection.ClosingOnError: Sendable {}
