import NIOCore

/// The deadlines of one HTTP/1 connection, as values: what the client did (bytes read, the socket
/// filling or draining) goes in, and ``check(at:activity:)`` says which deadline has passed, or when
/// to look again. ``OriginFastPath`` keeps one per connection and its one timer acts on the
/// verdict; the decision itself does no I/O, so tests drive it with made-up instants.
///
/// - idle: nothing read for the idle timeout while no response is being written (a keep-alive
///   connection between requests, or a client that stalled mid-request);
/// - request head: a head not whole ``ConnectionLimits/requestHeadTimeout`` after its first byte,
///   however steadily its bytes trickle in;
/// - request body: fewer than ``ConnectionLimits/minimumBodyRate`` bytes a second in a period of
///   ``ConnectionLimits/bodyTimeout`` while a body is being received;
/// - send: the socket's send buffer full (the connection not writable) for
///   ``ConnectionLimits/sendTimeout`` without a break — the client reads nothing.
struct ConnectionDeadlines {
    /// A deadline that passed (the raw value is the metric's label); the idle timeout is not one
    /// of them: the handlers that have the connection decide what idleness means (``Verdict/idle``).
    enum Expired: String, CaseIterable, Sendable {
        case requestHead = "request_head"
        case requestBody = "request_body"
        case send
    }

    /// What the connection is doing, as its handlers know it.
    enum Activity: Equatable {
        /// Between requests: no head begun, nothing being answered.
        case betweenRequests
        /// A request head has begun to arrive (at the instant given) and is not whole yet.
        case head(since: NIODeadline)
        /// A request's body is being received.
        case body
        /// A response is being written.
        case responding
    }

    enum Verdict: Equatable {
        /// Nothing was read for the idle timeout.
        case idle
        case expired(Expired)
        /// Nothing has passed; check again at this instant (or earlier, when something changes).
        case checkAgain(at: NIODeadline)
    }

    private let idleTimeout: TimeAmount
    private let headTimeout: TimeAmount
    private let bodyPeriod: TimeAmount
    private let bodyBytesPerPeriod: Int
    private let sendTimeout: TimeAmount

    /// When the client last sent bytes.
    private(set) var lastRead: NIODeadline
    /// Since when the connection has not been writable; `nil` while it is.
    private var unwritableSince: NIODeadline?
    /// The current body period: when it began and the bytes received in it.
    private var bodyPeriodStart: NIODeadline?
    private var bodyBytes = 0

    /// A zero timeout turns its deadline off.
    init(idleTimeout: TimeAmount, limits: ConnectionLimits, now: NIODeadline) {
        self.idleTimeout = idleTimeout
        self.headTimeout = TimeAmount(limits.requestHeadTimeout)
        self.bodyPeriod = TimeAmount(limits.bodyTimeout)
        let seconds = Double(limits.bodyTimeout.components.seconds) + Double(limits.bodyTimeout.components.attoseconds) / 1e18
        self.bodyBytesPerPeriod = Int((Double(limits.minimumBodyRate) * seconds).rounded(.up))
        self.sendTimeout = TimeAmount(limits.sendTimeout)
        self.lastRead = now
    }

    /// `count` bytes arrived; `body` when they are (or may be) a request body's.
    mutating func read(_ count: Int, at now: NIODeadline, body: Bool) {
        lastRead = now
        guard body else { return }
        if bodyPeriodStart == nil {
            bodyPeriodStart = now
            bodyBytes = 0
        }
        bodyBytes += count
    }

    /// A piece of a response left at `instant`: progress, as if the socket had drained.
    mutating func sent(at instant: NIODeadline) {
        if let since = unwritableSince, instant > since { unwritableSince = instant }
    }

    mutating func writabilityChanged(writable: Bool, at now: NIODeadline) {
        if writable {
            unwritableSince = nil
        } else if unwritableSince == nil {
            unwritableSince = now
        }
    }

    /// The deadline that has passed at `now`, if one has; else when the next one would.
    mutating func check(at now: NIODeadline, activity: Activity) -> Verdict {
        var next = NIODeadline.distantFuture
        func due(_ start: NIODeadline, _ timeout: TimeAmount) -> Bool {
            guard timeout > .zero else { return false }
            if now - start >= timeout { return true }
            next = min(next, start + timeout)
            return false
        }
        if let since = unwritableSince, due(since, sendTimeout) { return .expired(.send) }
        switch activity {
        case .responding:
            // A slow reader of a long response is not idle; but look again an idle timeout from
            // now, when the response may be over and the connection idle.
            bodyPeriodStart = nil
            if idleTimeout > .zero { next = min(next, now + idleTimeout) }
        case .betweenRequests:
            bodyPeriodStart = nil
            if due(lastRead, idleTimeout) { return .idle }
        case .head(let since):
            bodyPeriodStart = nil
            if due(since, headTimeout) { return .expired(.requestHead) }
            if due(lastRead, idleTimeout) { return .idle }
        case .body:
            if due(lastRead, idleTimeout) { return .idle }
            guard bodyPeriod > .zero else { break }
            let start = bodyPeriodStart ?? now
            if bodyPeriodStart == nil {
                bodyPeriodStart = now
                bodyBytes = 0
            }
            if now - start >= bodyPeriod {
                if bodyBytes < bodyBytesPerPeriod { return .expired(.requestBody) }
                bodyPeriodStart = now  // the next period
                bodyBytes = 0
                next = min(next, now + bodyPeriod)
            } else {
                next = min(next, start + bodyPeriod)
            }
        }
        return .checkAgain(at: next)
    }
}
