import NIOCore

/// Below HTTP/2, one flush per burst instead of one per stream: every stream answered while the
/// connection's bytes are being read (10 requests in one TCP read under `h2load -m10`, a player's
/// playlist and segment together) flushes its response, and each flush reached the socket — under
/// TLS, a record and a `write` each. Held until `channelReadComplete`, they leave as one. A flush
/// outside a read burst waits for the end of the event-loop task that asked for it: a publish
/// that releases 100 held streams of a connection in one task writes them with one `writev`, not
/// 100 (and a file piece written after its predecessor went out leaves a task later).
final class FlushCoalescing: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private var reading = false
    private var flushPending = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        reading = true
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.fireChannelReadComplete()  // HTTP/2 flushes its own frames here too: held like the rest
        reading = false
        if flushPending {
            flushPending = false
            context.flush()
        }
    }

    /// What is held goes out before the connection closes (a `GOAWAY` after a connection error).
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if flushPending {
            flushPending = false
            context.flush()
        }
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if flushPending {
            flushPending = false
            context.flush()
        }
    }

    func flush(context: ChannelHandlerContext) {
        guard !flushPending else { return }  // a flush is due already: at read complete, or scheduled
        flushPending = true
        guard !reading else { return }
        context.eventLoop.assumeIsolated().execute {
            // Done already if a read burst, a close or the removal of this handler came first.
            guard self.flushPending else { return }
            self.flushPending = false
            context.flush()
        }
    }
}

@available(*, unavailable)
extension FlushCoalescing: Sendable {}
