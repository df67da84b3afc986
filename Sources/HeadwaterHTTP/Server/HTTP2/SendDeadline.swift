import HeadwaterRuntime
import Logging
import NIOCore

/// The send deadline of an HTTP/2 connection (``ConnectionLimits/sendTimeout``): a client that
/// reads nothing — its connection's send buffer full without a break for the timeout — is
/// disconnected, with every stream on it. Progress is the connection turning writable: a stream's
/// piece of a file body counts as written once HTTP/2 has taken it, before it reaches the socket,
/// so pieces leaving are no sign of the client reading (on HTTP/1 they are: ``FileBodySending``). (Its other deadlines are HTTP/2's own: a head arrives
/// whole in a HEADERS frame, idleness is the connection manager's.) HTTP/1 connections have theirs
/// in ``OriginFastPath``, which judges the same way (``ConnectionDeadlines``).
final class SendDeadline: ChannelInboundHandler {
    typealias InboundIn = Any

    private var deadlines: ConnectionDeadlines
    private var check: Scheduled<Void>?
    private let counters: OriginHTTPHandler.Environment

    init(environment: OriginHTTPHandler.Environment) {
        self.deadlines = ConnectionDeadlines(idleTimeout: .zero, limits: environment.limits, now: .now())
        self.counters = environment
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        deadlines.writabilityChanged(writable: context.channel.isWritable, at: now)
        check?.cancel()
        check = nil
        if !context.channel.isWritable { schedule(at: now, context: context) }
        context.fireChannelWritabilityChanged()
    }

    private func schedule(at now: NIODeadline, context: ChannelHandlerContext) {
        switch deadlines.check(at: now, activity: .responding) {
        case .expired(let deadline):
            counters.deadlineCloses?.increment(deadline)
            counters.logger.debug("closing an HTTP/2 connection whose client reads nothing", metadata: ["deadline": "\(deadline.rawValue)"])
            context.close(promise: nil)
        case .checkAgain(let next) where next < .distantFuture:
            check = context.eventLoop.assumeIsolated().scheduleTask(deadline: next) { [self] in
                check = nil
                schedule(at: .now(), context: context)
            }
        case .checkAgain, .idle:
            break
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
        context.fireChannelInactive()
    }
}

@available(*, unavailable)
extension SendDeadline: Sendable {}
