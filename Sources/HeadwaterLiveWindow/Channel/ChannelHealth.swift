/// Whether a channel is fresh enough to send viewers to: what `/readyz`, `/healthz` and the
/// `headwater_channel_*` gauges report, decided in one place.
///
/// A channel is **ready** when it is live and its newest segment arrived from the source no more
/// than ``maximumAge(targetDuration:)`` ago: 1½ target durations (the longest a live playlist may
/// go without a new segment, RFC 8216 §6.2.2) plus ``slack`` for the time between a segment's
/// arrival and its listing, and for scheduling.
public struct ChannelHealth: Sendable, Hashable {
    public var name: String
    public var state: ChannelState
    public var targetDuration: Int
    /// µs since the newest segment arrived from the source (never negative), or `nil` before the
    /// first one.
    public var liveEdgeAge: Int64?

    /// Allowance beyond 1½ target durations, µs.
    public static let slack: Int64 = 1_000_000

    public init(name: String, state: ChannelState, targetDuration: Int, liveEdgeAge: Int64?) {
        self.name = name
        self.state = state
        self.targetDuration = targetDuration
        self.liveEdgeAge = liveEdgeAge
    }

    /// 1½ × `targetDuration` + ``slack``, µs.
    public static func maximumAge(targetDuration: Int) -> Int64 {
        Int64(max(0, targetDuration)) * 1_500_000 + slack
    }

    /// Live, and the live edge no older than ``maximumAge(targetDuration:)``.
    public var isReady: Bool {
        guard case .live = state, let liveEdgeAge else { return false }
        return liveEdgeAge <= Self.maximumAge(targetDuration: targetDuration)
    }

    /// ``liveEdgeAge`` in seconds.
    public var liveEdgeAgeSeconds: Double? { liveEdgeAge.map { Double($0) / 1_000_000 } }

    /// `live`, `starting` or `degraded`.
    public var stateName: String {
        switch state {
        case .live: "live"
        case .starting: "starting"
        case .degraded: "degraded"
        }
    }

    /// Why the channel is degraded, if it is.
    public var degradedReason: String? {
        if case .degraded(let reason) = state { return reason }
        return nil
    }
}
