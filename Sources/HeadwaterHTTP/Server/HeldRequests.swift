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
/// (``published(_:)``): the responder decides again against the new snapshot — once for each
/// group of equal requests for a shared playlist (``SharedDecision``), so 5,000 players waiting
/// for the same segment cost one decision, not 5,000, whether or not it is published yet — and
/// every request the new version satisfies is answered, a group with one answer (encoded once for
/// HTTP/1.1: ``SharedHTTP1Answer``), connection by connection, ``answersPerTask`` per loop task.
/// One sweep a tenth of a second answers those past their deadline (``OriginResponse/Hold/timedOut``:
/// 503 after 3 target durations, F11), never early. A client that goes away is removed at once
/// (``remove(_:channel:)``).
///
/// Loop-bound state; the publish hook crosses threads only through ``heldCount`` and an `execute`
/// onto the loop.
final class HeldRequests: Sendable {
    /// One held request. `respond` asks its handler's responder again (given the request and its
    /// route, so that its closure holds only the handler); `answer` writes what it is given (a
    /// decision that no longer holds, or the timeout's answer) on its connection. A class: the
    /// table moves it between its maps and answers lists by reference, never copying its fields.
    final class Waiter {
        let hold: OriginResponse.Hold
        let deadline: NIODeadline
        let request: OriginRequest
        let route: Route
        let respond: (OriginRequest, Route) -> OriginResponse
        let answer: (OriginResponse) -> Void
        /// The connection it came on (an HTTP/2 stream's parent), so that one publish's answers
        /// on a connection are written together: `ObjectIdentifier`'s bits, 0 for none.
        let connection: UInt

        init(
            hold: OriginResponse.Hold, deadline: NIODeadline, request: OriginRequest, route: Route,
            connection: (any Channel)? = nil,
            respond: @escaping (OriginRequest, Route) -> OriginResponse, answer: @escaping (OriginResponse) -> Void
        ) {
            self.hold = hold
            self.deadline = deadline
            self.request = request
            self.route = route
            self.connection = connection.map { UInt(bitPattern: ObjectIdentifier($0)) } ?? 0
            self.respond = respond
            self.answer = answer
        }

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

    /// A held request's number (and its group, if it shares decisions), to remove it.
    struct Ticket: Hashable {
        fileprivate let id: UInt64
        fileprivate let decision: SharedDecision?
    }

    /// One channel's held requests: those that share decisions, by what they asked (a publish
    /// decides each group once, and a group its version does not satisfy costs nothing more), and
    /// those decided one by one.
    private struct ChannelWaiters {
        var groups: [SharedDecision: [UInt64: Waiter]] = [:]
        var alone: [UInt64: Waiter] = [:]

        var isEmpty: Bool { groups.isEmpty && alone.isEmpty }

        mutating func remove(_ ticket: Ticket) -> Waiter? {
            guard let decision = ticket.decision else { return alone.removeValue(forKey: ticket.id) }
            guard let waiter = groups[decision]?.removeValue(forKey: ticket.id) else { return nil }
            if groups[decision]!.isEmpty { groups[decision] = nil }
            return waiter
        }

        mutating func insert(_ waiter: Waiter, _ ticket: Ticket) {
            if let decision = ticket.decision {
                groups[decision, default: [:]][ticket.id] = waiter
            } else {
                alone[ticket.id] = waiter
            }
        }

        /// Takes out every request `publish` answers and returns them with their answers.
        /// `respond` is called once per group, and for each request decided alone.
        mutating func takeAnswered() -> [(Waiter, OriginResponse)] {
            var answered: [(Waiter, OriginResponse)] = []
            for (decision, group) in groups {
                guard let (firstID, first) = group.first else { continue }
                let response = first.respond(first.request, first.route)
                guard response.hold == nil else { continue }  // the whole group waits on
                guard SharedDecision.isShareable(response) else {
                    // This answer is the first request's alone; the others are asked one by one.
                    answered.append((first, response))
                    var rest = group
                    rest[firstID] = nil
                    Self.decideEach(&rest, into: &answered)
                    groups[decision] = rest.isEmpty ? nil : rest
                    continue
                }
                groups[decision] = nil
                var shared = response
                if group.count > 1 { shared.sharedHTTP1 = SharedHTTP1Answer() }
                answered.reserveCapacity(answered.count + group.count)
                for waiter in group.values { answered.append((waiter, shared)) }
            }
            Self.decideEach(&alone, into: &answered)
            return answered
        }

        /// Asks each of `waiters` on its own; those answered leave it, with their answers.
        private static func decideEach(_ waiters: inout [UInt64: Waiter], into answered: inout [(Waiter, OriginResponse)]) {
            for (id, waiter) in waiters {
                let response = waiter.respond(waiter.request, waiter.route)
                guard response.hold == nil else { continue }
                answered.append((waiter, response))
                waiters[id] = nil
            }
        }

        /// Takes out every request whose deadline is at or before `now`; also the earliest
        /// deadline of those left (`nil`: none left), from the same pass.
        mutating func takeExpired(at now: NIODeadline) -> (expired: [Waiter], earliestLeft: NIODeadline?) {
            var expired: [Waiter] = []
            var earliest: NIODeadline?
            func sort(_ waiters: inout [UInt64: Waiter]) {
                for (id, waiter) in waiters {
                    if waiter.deadline <= now {
                        expired.append(waiter)
                        waiters[id] = nil
                    } else {
                        earliest = min(earliest ?? waiter.deadline, waiter.deadline)
                    }
                }
            }
            for decision in Array(groups.keys) {
                var group = groups.removeValue(forKey: decision)!
                sort(&group)
                if !group.isEmpty { groups[decision] = group }
            }
            sort(&alone)
            return (expired, earliest)
        }
    }

    private final class State {
        var next: UInt64 = 0
        /// By channel: a publish touches only its channel's requests.
        var channels: [String: ChannelWaiters] = [:]
        var sweep: RepeatedTask?
        /// No held request's deadline is before this: a sweep before it looks at none of them.
        var earliestDeadline: NIODeadline = .distantFuture
    }

    let eventLoop: any EventLoop
    private let metrics: OriginMetrics?
    private let state: NIOLoopBound<State>
    /// How many requests are held (read from publishing threads, to skip loops holding nothing).
    private let count = Atomic<Int>(0)

    /// How often deadlines are checked.
    static let sweepInterval: TimeAmount = .milliseconds(100)
    /// How many answers one event-loop task writes before the next task goes on with the rest.
    /// Between them the loop runs what the answers scheduled — an HTTP/2 connection's one flush for
    /// all its streams answered so far (``FlushCoalescing``) — so a publish releasing thousands
    /// sends its first answers after a few milliseconds, not after the last is written. Answers
    /// are written connection by connection, so a connection's streams leave in one write (two
    /// where a task ends among them), not one write each.
    static let answersPerTask = 500

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
        let ticket = Ticket(id: state.next, decision: SharedDecision(waiter))
        state.channels[waiter.channel, default: ChannelWaiters()].insert(waiter, ticket)
        state.earliestDeadline = min(state.earliestDeadline, waiter.deadline)
        count.add(1, ordering: .relaxed)
        metrics?.heldRequestsChanged(by: 1)
        if state.sweep == nil {
            state.sweep = eventLoop.scheduleRepeatedTask(initialDelay: Self.sweepInterval, delay: Self.sweepInterval) {
                [self] _ in sweep()
            }
        }
        return ticket
    }

    /// Forgets a held request (its client went away, or it was answered otherwise). On the loop.
    func remove(_ ticket: Ticket, channel: String) {
        let state = state.value
        guard state.channels[channel]?.remove(ticket) != nil else { return }
        if state.channels[channel]!.isEmpty { state.channels[channel] = nil }
        count.subtract(1, ordering: .relaxed)
        metrics?.heldRequestsChanged(by: -1)
        stopSweepIfIdle()
    }

    /// `channel` published a version: from any thread. Retries its requests on the loop.
    func channelPublished(_ channel: String) {
        guard count.load(ordering: .relaxed) > 0 else { return }
        eventLoop.execute { [self] in published(channel) }
    }

    /// Retries every request held for `channel`; those answered leave the table before any answer
    /// is written (a connection that then reads a pipelined request may hold again). On the loop.
    func published(_ channel: String) {
        let state = state.value
        guard var held = state.channels.removeValue(forKey: channel) else { return }
        let answered = held.takeAnswered()
        if !held.isEmpty { state.channels[channel] = held }
        guard !answered.isEmpty else { return }
        count.subtract(answered.count, ordering: .relaxed)
        metrics?.heldRequestsChanged(by: -answered.count)
        stopSweepIfIdle()
        answer(answered.sorted { $0.0.connection < $1.0.connection }[...])
    }

    /// Writes up to ``answersPerTask`` answers now and leaves the rest to a later task.
    private func answer(_ answered: ArraySlice<(Waiter, OriginResponse)>) {
        let now = answered.prefix(Self.answersPerTask)
        for (waiter, response) in now { waiter.answer(response) }
        let rest = answered.dropFirst(now.count)
        guard !rest.isEmpty else { return }
        eventLoop.assumeIsolated().execute { [self] in answer(rest) }
    }

    private func sweep() {
        let state = state.value
        let now = eventLoop.now
        guard state.earliestDeadline <= now else { return }
        var expired: [Waiter] = []
        var earliest = NIODeadline.distantFuture
        for channel in Array(state.channels.keys) {
            var held = state.channels.removeValue(forKey: channel)!
            let (due, earliestLeft) = held.takeExpired(at: now)
            expired += due
            if let earliestLeft {
                earliest = min(earliest, earliestLeft)
                state.channels[channel] = held
            }
        }
        state.earliestDeadline = earliest
        guard !expired.isEmpty else { return }
        count.subtract(expired.count, ordering: .relaxed)
        metrics?.heldRequestsChanged(by: -expired.count)
        stopSweepIfIdle()
        for waiter in expired { waiter.answer(waiter.hold.timedOut) }
    }

    private func stopSweepIfIdle() {
        let state = state.value
        guard state.channels.isEmpty, let sweep = state.sweep else { return }
        sweep.cancel()
        state.sweep = nil
        state.earliestDeadline = .distantFuture
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
