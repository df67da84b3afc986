import HeadwaterRuntime
import NIOCore
import Synchronization

/// The open connections of one ``OriginServer``, for graceful shutdown: NIO-extras'
/// `ServerQuiescingHelper` idea, in the few lines this server needs.
///
/// Quiescing sends each connection `ChannelShouldQuiesceEvent`, which
/// `HTTPServerPipelineHandler` turns into: close now if idle; otherwise finish the request in
/// flight (an upload, a segment being sent), answer it with `Connection: close`, then close.
///
/// It also keeps `headwater_http_open_connections`: every accepted connection is tracked here,
/// whether the fast path answers its requests or hands them to the NIO pipeline.
final class ConnectionTracker: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var quiescing = false
        var emptyWaiters: [CheckedContinuation<Void, Never>] = []
        /// The public listeners' connections, against their caps.
        var admission: ConnectionAdmission
    }

    private let state: Mutex<State>
    private let metrics: OriginMetrics

    /// - Parameters:
    ///   - metrics: where open connections are counted.
    ///   - limits: the caps on the public listeners' connections.
    init(metrics: OriginMetrics = .shared, limits: ConnectionLimits = ConnectionLimits()) {
        self.metrics = metrics
        self.state = Mutex(State(admission: ConnectionAdmission(limits: limits)))
    }

    var count: Int { state.withLock { $0.channels.count } }

    /// Tracks a new connection until it closes, unless a cap refuses it (then it is not tracked,
    /// and the caller answers and closes it). One accepted while shutting down is quiesced at once.
    /// Call after its pipeline is configured.
    ///
    /// - Parameter capped: the connection came to a public listener, whose caps apply (the ingest
    ///   listener's do not: a flood of viewers must not lock encoders out).
    @discardableResult
    func add(_ channel: any Channel, capped: Bool = true) -> ConnectionAdmission.Refusal? {
        let id = ObjectIdentifier(channel)
        let client = capped ? channel.remoteAddress?.ipAddress : nil
        let outcome = state.withLock { state -> (refusal: ConnectionAdmission.Refusal?, quiescing: Bool) in
            if capped, let refusal = state.admission.admit(client: client) { return (refusal, false) }
            state.channels[id] = channel
            return (nil, state.quiescing)
        }
        if let refusal = outcome.refusal { return refusal }
        metrics.connectionOpened()
        channel.closeFuture.whenComplete { _ in self.remove(id, capped: capped, client: client) }
        if outcome.quiescing { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
        return nil
    }

    private func remove(_ id: ObjectIdentifier, capped: Bool, client: String?) {
        metrics.connectionClosed()
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if capped { state.admission.release(client: client) }
            state.channels[id] = nil
            guard state.channels.isEmpty else { return [] }
            defer { state.emptyWaiters = [] }
            return state.emptyWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Asks every connection, present and future, to finish what it is doing and close.
    func quiesceAll() {
        let channels = state.withLock { state in
            state.quiescing = true
            return Array(state.channels.values)
        }
        for channel in channels { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
    }

    /// Closes every connection now, whatever it is doing.
    func closeAll() {
        let channels = state.withLock { state in
            state.quiescing = true
            return Array(state.channels.values)
        }
        for channel in channels { channel.close(promise: nil) }
    }

    /// Returns once no connection is open.
    func waitUntilEmpty() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let empty = state.withLock { state in
                if state.channels.isEmpty { return true }
                state.emptyWaiters.append(continuation)
                return false
            }
            if empty { continuation.resume() }
        }
    }
}
