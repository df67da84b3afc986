import NIOCore

/// Passes a stream's errors on one event-loop tick later, so the handlers after it never close an
/// HTTP/2 stream while NIOHTTP2 is still opening it.
///
/// NIOHTTP2 activates a new stream channel, and delivers its first frames, before it tells the
/// connection manager (`NIOHTTP2ServerConnectionManagementHandler`) that the stream exists. A
/// request the HTTP/2-to-HTTP/1 codec refuses there (no `:authority`, say) reaches
/// ``OriginHTTPHandler/errorCaught(context:error:)``, which closes the stream; closed that early,
/// the manager hears of the close before the open: a debug build stops on NIOHTTP2's assertion
/// ("Can't close stream 1, it wasn't open"), and a release build counts the stream open forever,
/// so the connection's idle timeout never fires. One tick later the stream is known, and closing
/// it is an ordinary reset. Found by the `h2` fuzz target (`HTTPFuzzRegressionTests`).
final class StreamErrorDeferral: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.eventLoop.assumeIsolated().execute {
            context.fireErrorCaught(error)
        }
    }
}

@available(*, unavailable)
extension StreamErrorDeferral: Sendable {}
