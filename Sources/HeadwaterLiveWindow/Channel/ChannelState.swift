/// Whether a channel can be played: what its playlists answer.
public enum ChannelState: Sendable, Hashable {
    /// Not live yet (no segment published): playlists answer 503.
    case starting
    case live
    /// The source stalled past 1½ target durations: still served, flagged on the status page.
    case degraded(reason: String)
}
