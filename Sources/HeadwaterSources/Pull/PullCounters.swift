import HeadwaterRuntime

/// What a pull source fetched, and its failures by kind, so an operator can tell a dead upstream
/// from a slow or a broken one without reading logs. Failures are also exported as
/// `headwater_pull_failures_total{channel,reason}` once ``export(to:channel:)`` named the channel.
public struct PullCounters: Sendable, Hashable {
    public enum Failure: String, Sendable, Hashable, CaseIterable {
        /// The upstream answered with a status other than 200/206.
        case httpStatus = "http_status"
        /// No complete answer within `timeout_ms`.
        case timeout
        /// Connection refused, reset or closed early, or the host not found.
        case connection
        /// A playlist that does not parse, or a media playlist where a multivariant one was expected
        /// (or the reverse).
        case malformedPlaylist = "malformed_playlist"
        /// A media playlist unchanged for more than 1.5 target durations (counted once per stall).
        case stalePlaylist = "stale_playlist"
        /// A segment larger than the limit (``PullChannelSource/maxSegmentBytes``).
        case tooLarge = "too_large"
        /// The segment store refused a write.
        case storage
    }

    /// Failures by kind.
    public private(set) var failures: [Failure: Int] = [:]
    /// Playlists fetched and parsed (changed or not).
    public var playlistsFetched = 0
    /// Segments (and init sections) downloaded into the store.
    public var segmentsFetched = 0
    public var bytesFetched: UInt64 = 0
    /// The exported failure series of this channel (every reason, from 0); not part of equality.
    private var exported: OriginMetrics.LabelledCounters<Failure>?

    public init() {}

    /// Failures of `kind` so far.
    public subscript(kind: Failure) -> Int { failures[kind] ?? 0 }

    /// Exports failures from now on to `metrics` as `channel`'s, making every reason's series (at
    /// 0) now, so an alert on `increase()` sees the first failure.
    mutating func export(to metrics: OriginMetrics, channel: String) {
        exported = metrics.counters(
            "headwater_pull_failures_total",
            help: "Failed upstream requests of pull channels, by channel and reason (retried with backoff).",
            labels: [("channel", channel)], by: "reason")
    }

    mutating func count(_ kind: Failure) {
        failures[kind, default: 0] += 1
        exported?.increment(kind)
    }

    public static func == (lhs: PullCounters, rhs: PullCounters) -> Bool {
        lhs.failures == rhs.failures && lhs.playlistsFetched == rhs.playlistsFetched
            && lhs.segmentsFetched == rhs.segmentsFetched && lhs.bytesFetched == rhs.bytesFetched
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(failures)
        hasher.combine(playlistsFetched)
        hasher.combine(segmentsFetched)
        hasher.combine(bytesFetched)
    }
}

/// Why one upstream request failed: its kind and a one-line reason for the log.
struct PullFailure: Error, Sendable, Hashable, CustomStringConvertible {
    var kind: PullCounters.Failure
    var message: String

    init(_ kind: PullCounters.Failure, _ message: String) {
        self.kind = kind
        self.message = message
    }

    var description: String { message }
}

/// Exponential backoff with jitter: `base`, `2×base`, … up to `cap`, each drawn uniformly from its
/// upper half, so many channels retrying one upstream do not hit it in step.
struct Backoff: Sendable {
    let base: Duration
    let cap: Duration
    private(set) var failures = 0

    init(base: Duration, cap: Duration) {
        self.base = base
        self.cap = max(base, cap)
    }

    /// The pause before the next attempt, after one more failure.
    mutating func next() -> Duration {
        failures += 1
        var delay = base
        for _ in 1..<min(failures, 32) where delay < cap { delay *= 2 }
        delay = min(delay, cap)
        return delay * Double.random(in: 0.5...1.0)
    }

    mutating func reset() { failures = 0 }
}
