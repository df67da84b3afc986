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
    }

    private let state = Mutex(State())
    private let metrics: OriginMetrics

    /// - Parameter metrics: where open connections are counted; by default the task's
    ///   ``OriginMetrics/current`` (the process's, unless a test bound its own).
    init(metrics: OriginMetrics = .shared) {
        self.metrics = metrics
    }

    var count: Int { state.withLock { $0.channels.count } }

    /// Tracks a new connection until it closes. One accepted while shutting down is quiesced at
    /// once. Call after its pipeline is configured.
    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let quiescing = state.withLock { state in
            state.channels[id] = channel
            return state.quiescing
        }
        metrics.connectionOpened()
        channel.closeFuture.whenComplete { _ in self.remove(id) }
        if quiescing { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
    }

    private func remove(_ id: ObjectIdentifier) {
        metrics.connectionClosed()
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
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
