import NIOCore
import NIOSSL
import NIOTLS

/// One connection on the TLS listener until its protocol is known: the TLS handler with the
/// certificate current when the connection arrived, a deadline for the handshake, and ALPN's
/// verdict (`h2`, or HTTP/1.1 — also for a client that offers no ALPN or only protocols Headwater
/// does not speak, as HTTP/1.1 servers have always answered such clients).
enum TLSConnection {
    /// Adds the handlers to `channel`'s pipeline; call on its event loop.
    /// - Parameter protocolNegotiated: adds the handlers of the negotiated protocol (`"h2"`,
    ///   `"http/1.1"` or `nil`) behind the TLS handler, on the connection's event loop.
    static func configure(
        _ channel: any Channel,
        context: NIOSSLContext,
        handshakeTimeout: TimeAmount,
        protocolNegotiated: @escaping (String?, ChannelPipeline.SynchronousOperations) throws -> Void
    ) throws {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(NIOSSLServerHandler(context: context))
        // A client that connects and never finishes its handshake holds a descriptor; the
        // deadlines of the protocol that follows only start once ALPN has decided. The handshake
        // gets the request head's deadline (``ConnectionLimits/requestHeadTimeout``).
        let deadline: Scheduled<Void>? =
            handshakeTimeout > .zero
            ? channel.eventLoop.assumeIsolated().scheduleTask(in: handshakeTimeout) { channel.close(promise: nil) }
            : nil
        try pipeline.addHandler(
            ApplicationProtocolNegotiationHandler { result, channel in
                deadline?.cancel()
                return channel.eventLoop.makeCompletedFuture {
                    let negotiated: String? = if case .negotiated(let name) = result { name } else { nil }
                    try protocolNegotiated(negotiated, channel.pipeline.syncOperations)
                }
            })
    }
}
