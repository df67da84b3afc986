import HeadwaterRuntime
import NIOCore
import NIOHTTP1
import Synchronization

/// Requests waiting for a later version of their channel — a blocking playlist reload (`_HLS_msn`,
/// `_HLS_part`; HLS-RULES F7, F8) or a hinted part — on one event loop, for every handler that holds
/// them (``OriginFastPath`` on HTTP/1.1, ``OriginHTTPHandler`` on HTTP/2 streams and the full path).
///
/// A held request is a table entry, not a thread or a timer: what it asked, a deadline, and its
/// handler's two callbacks. The lifecycle is this type's; a handler only writes the answer it is
/// given. Each publish of a channel retries that channel's requests on this loop
/// (``published(_:)``): the responder decides again against the new snapshot — once for all equal
/// requests for a shared playlist (``SharedDecision``), so 5,000 players waiting for the same
/// segment cost one decision, not 5,000 — and every request the new version satisfies is answered.
/// One sweep a tenth of a second answers those past their deadline (``OriginResponse/Hold/timedOut``:
/// 503 after 3 target durations, F11), never early. A client that goes away is removed at once
/// (``remove(_:channel:)``).
///
/// Loop-bound state; the publish hook crosses threads only through ``heldCount`` and an `execute`
/// onto the loop.
final class HeldRequests: Sendable {
    /// One held request. `respond` asks its handler's responder again (given the request and its
    /// route, so that its closure holds only the handler); `answer` writes what it is given (a
    /// decision that no longer holds, or the timeout's answer) on its connection.
    struct Waiter {
        var hold: OriginResponse.Hold
        var deadline: NIODeadline
        var request: OriginRequest
        var route: Route
        var respond: (OriginRequest, Route) -> OriginResponse
        var answer: (OriginResponse) -> Void

        var channel: String { hold.channel }
    }

    /// Equal requests for a shared playlist (the same method, target, protocol version and fields)
    /// are decided alike against one snapshot: the responder's answer to them is a function of
    /// those and the channel's version alone, with no effect of its own. A stitched playlist is
    /// not (its session is touched, its beacons fire once per viewer); a hinted part's answer is an
    /// open file, which one writer owns.
    struct SharedDecision: Hashable {
        var method: String
        var target: String
        var version: Int
        var fields: OriginRequest.Fields

        init?(_ waiter: Waiter) {
            switch waiter.route {
            case .mediaPlaylist, .iFramePlaylist: break
            default: return nil
            }
            method = waiter.request.method.rawValue
            target = waiter.request.target
            version = waiter.request.version.major * 10 + waiter.request.version.minor
            fields = waiter.request.fields
        }

        /// Whether `response` may answer every request equal to the one it was decided for.
        static func isShareable(_ response: OriginResponse) -> Bool {
            guard response.afterBodyWritten == nil, !response.closeConnection else { return false }
            if case .file = response.body { return false }
            return true
        }
    }

    /// A held request's number, to remove it.
    struct Ticket: Hashable {
        fileprivate let id: UInt64
    }

    private final class State {
        var next: UInt64 = 0
        /// By channel, then ticket: a publish touches only its channel's requests.
        var waiters: [String: [UInt64: Waiter]] = [:]
        var sweep: RepeatedTask?
    }

    let eventLoop: any EventLoop
    private let metrics: OriginMetrics?
    private let state: NIOLoopBound<State>
    /// How many requests are held (read from publishing threads, to skip loops holding nothing).
    private let count = Atomic<Int>(0)

    /// How often deadlines are checked.
    static let sweepInterval: TimeAmount = .milliseconds(100)

    init(eventLoop: any EventLoop, metrics: OriginMetrics?) {
        self.eventLoop = eventLoop
        self.metrics = metrics
        self.state = NIOLoopBound(State(), eventLoop: eventLoop)
    }

    var heldCount: Int { count.load(ordering: .relaxed) }

    /// Holds a request until a publish lets `waiter.respond` answer it, or its deadline passes. On
    /// the loop.
    func add(_ waiter: Waiter) -> Ticket {
        let state = state.value
        state.next += 1
        state.waiters[waiter.channel, default: [:]][state.next] = waiter
        count.add(1, ordering: .relaxed)
        metrics?.heldRequestsChanged(by: 1)
        if state.sweep == nil {
            state.sweep = eventLoop.scheduleRepeatedTask(initialDelay: Self.sweepInterval, delay: Self.sweepInterval) {
                [self] _ in sweep()
            }
        }
        return Ticket(id: state.next)
    }

    /// Forgets a held request (its client went away, or it was answered otherwise). On the loop.
    func remove(_ ticket: Ticket, channel: String) {
        let state = state.value
        guard state.waiters[channel]?.removeValue(forKey: ticket.id) != nil else { return }
        if state.waiters[channel]!.isEmpty { state.waiters[channel] = nil }
        count.subtract(1, ordering: .relaxed)
        metrics?.heldRequestsChanged(by: -1)
        stopSweepIfIdle()
    }

    /// `channel` published a version: from any thread. Retries its requests on the loop.
    func channelPublished(_ channel: String) {
        guard count.load(ordering: .relaxed) > 0 else { return }
        eventLoop.execute { [self] in published(channel) }
    }

    /// Retries every request held for `channel`; those answered leave the table before their
    /// answer is written (a connection that then reads a pipelined request may hold again). On
    /// the loop.
    func published(_ channel: String) {
        let state = state.value
        guard let held = state.waiters[channel] else { return }
        var decided: [SharedDecision: OriginResponse] = [:]
        var answered = 0
        for (id, waiter) in held {
            let response: OriginResponse
            if let key = SharedDecision(waiter) {
                if let known = decided[key] {
                    response = known
                } else {
                    response = waiter.respond(waiter.request, waiter.route)
                    if SharedDecision.isShareable(response) { decided[key] = response }
                }
            } else {
                response = waiter.respond(waiter.request, waiter.route)
            }
            guard response.hold == nil else { continue }
            state.waiters[channel]?[id] = nil
            answered += 1
            waiter.answer(response)
        }
        if state.waiters[channel]?.isEmpty == true { state.waiters[channel] = nil }
        if answered > 0 {
            count.subtract(answered, ordering: .relaxed)
            metrics?.heldRequestsChanged(by: -answered)
            stopSweepIfIdle()
        }
    }

    private func sweep() {
        let state = state.value
        let now = eventLoop.now
        var expired: [Waiter] = []
        for (channel, held) in state.waiters {
            for (id, waiter) in held where waiter.deadline <= now {
                state.waiters[channel]?[id] = nil
                expired.append(waiter)
            }
            if state.waiters[channel]?.isEmpty == true { state.waiters[channel] = nil }
        }
        guard !expired.isEmpty else { return }
        count.subtract(expired.count, ordering: .relaxed)
        metrics?.heldRequestsChanged(by: -expired.count)
        for waiter in expired { waiter.answer(waiter.hold.timedOut) }
        stopSweepIfIdle()
    }

    private func stopSweepIfIdle() {
        let state = state.value
        guard state.waiters.isEmpty, let sweep = state.sweep else { return }
        sweep.cancel()
        state.sweep = nil
    }
}

/// The ``HeldRequests`` of every event loop of a server, made on first use.
final class HeldRequestsByLoop: Sendable {
    private let loops = Mutex<[ObjectIdentifier: HeldRequests]>([:])
    /// Where the held requests are counted (`headwater_held_requests`).
    private let metrics: OriginMetrics?

    init(metrics: OriginMetrics? = nil) { self.metrics = metrics }

    /// `loop`'s held requests (once per connection).
    func on(_ loop: any EventLoop) -> HeldRequests {
        loops.withLock { loops in
            if let held = loops[ObjectIdentifier(loop)] { return held }
            let held = HeldRequests(eventLoop: loop, metrics: metrics)
            loops[ObjectIdentifier(loop)] = held
            return held
        }
    }

    /// A channel published a version: every loop holding requests retries them.
    func channelPublished(_ channel: String) {
        for held in loops.withLock({ Array($0.values) }) { held.channelPublished(channel) }
    }

    /// Requests held on all loops (tests, the bench's memory figure).
    var heldCount: Int { loops.withLock { $0.values.reduce(0) { $0 + $1.heldCount } } }
}
