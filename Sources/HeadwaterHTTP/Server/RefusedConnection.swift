import HeadwaterRuntime
import Logging
import NIOCore
import Synchronization

/// A connection over a cap (``ConnectionAdmission``): on the plain listener it is answered `503`
/// with `Retry-After` and the reason, then closed; on the TLS listener — where answering would
/// first cost a handshake — closed at once. Its handler is the whole pipeline, reads nothing it
/// keeps, and gives up on a client that does not read within ``linger``.
final class RefusedConnection: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// How long the answer may take to leave (and the client's request be drained, so closing
    /// does not reset the connection under the answer) before the connection is closed anyway.
    static let linger: TimeAmount = .milliseconds(500)

    private let answer: ByteBuffer?

    /// - Parameter answer: the `503` to write; `nil` to close without a word.
    init(answer: ByteBuffer?) { self.answer = answer }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { refuse(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        refuse(context: context)
    }

    private var refused = false

    private func refuse(context: ChannelHandlerContext) {
        guard !refused else { return }
        refused = true
        guard let answer else {
            context.close(promise: nil)
            return
        }
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.linger) { context.close(promise: nil) }
        context.writeAndFlush(wrapOutboundOut(answer)).assumeIsolated().whenComplete { _ in
            context.close(mode: .output, promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}  // the request is not read

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, case .inputClosed = event { context.close(promise: nil) }
    }
}

@available(*, unavailable)
extension RefusedConnection: Sendable {}

/// Counts refused connections and logs them at most once per ``interval``: a flood refuses
/// thousands a second, and one line each would flood the log (and the journal's rate limit would
/// then drop the lines that matter). Each line says how many were refused since the previous one.
final class ConnectionRefusalLog: Sendable {
    static let interval: Duration = .seconds(10)

    private struct State {
        var lastLine: ContinuousClock.Instant?
        var unlogged: [ConnectionAdmission.Refusal: Int] = [:]
    }

    private let state = Mutex(State())
    private let counters: OriginMetrics.LabelledCounters<ConnectionAdmission.Refusal>
    private let logger: Logger
    private let limits: ConnectionLimits

    init(metrics: OriginMetrics, logger: Logger, limits: ConnectionLimits) {
        self.counters = metrics.connectionRefusals(ConnectionAdmission.Refusal.self)
        self.logger = logger
        self.limits = limits
    }

    func refused(_ reason: ConnectionAdmission.Refusal, client: String) {
        counters.increment(reason)
        let now = ContinuousClock.now
        let due = state.withLock { state -> [ConnectionAdmission.Refusal: Int]? in
            state.unlogged[reason, default: 0] += 1
            if let last = state.lastLine, now - last < Self.interval { return nil }
            state.lastLine = now
            defer { state.unlogged = [:] }
            return state.unlogged
        }
        guard let due else { return }
        logger.warning(
            "refusing connections: a connection cap is reached",
            metadata: [
                "refused.capacity": "\(due[.capacity] ?? 0)",
                "refused.client_capacity": "\(due[.clientCapacity] ?? 0)",
                "client.address": "\(client)",
                "limits.max_connections": "\(limits.maxConnections)",
                "limits.max_connections_per_client": "\(limits.maxConnectionsPerClient)",
                "log.interval": "\(Self.interval)",
            ])
    }
}
