import Prometheus

extension OriginMetrics {
    /// An ad break started on `channel`; `source` is where it came from (`cue`, `schedule`, `request`).
    public func adBreakStarted(channel: String, source: String) {
        counter(
            "headwater_ad_breaks_total", labels: [("channel", channel), ("source", source)],
            help: "Ad breaks started, by channel and by what started them (source cue, schedule, admin request)."
        ).increment()
    }

    /// A source ad cue could not be used (bad CRC, undecodable, inconsistent): not stitched, passed through.
    public func adCueRejected(channel: String) {
        counter(
            "headwater_ad_cues_rejected_total", labels: [("channel", channel)],
            help: "Ad cues in source playlists that were not acted on (invalid SCTE-35, bad CRC, inconsistent)."
        ).increment()
    }

    /// A stitched playlist request was answered with `outcome` (`ok`, `forbidden`, `bad_request`,
    /// `unavailable`, `error`).
    public func stitchedPlaylist(outcome: String) {
        if outcome == "ok" { return stitchedPlaylistsServed.increment() }
        counter("headwater_stitched_playlists_total", labels: [("outcome", outcome)], help: Self.stitchedPlaylistsHelp)
            .increment()
    }

    static let stitchedPlaylistsHelp = "Per-session stitched media playlist requests, by outcome."

    /// A viewer session started (`/ssai/{channel}/master.m3u8`).
    public func sessionStarted(channel: String) {
        counter(
            "headwater_sessions_started_total", labels: [("channel", channel)],
            help: "Viewer sessions started (signed session tokens issued), by channel."
        ).increment()
    }
}
