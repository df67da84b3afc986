import HeadwaterStitching
import Prometheus

extension OriginMetrics {
    /// What a stitched playlist request was answered with (`headwater_stitched_playlists_total{outcome}`).
    public enum StitchedPlaylistOutcome: String, Sendable, Hashable, CaseIterable {
        case ok
        case badRequest = "bad_request"
        case forbidden
        case notFound = "not_found"
        case conflict
        case unavailable
        case error
    }

    /// Where ad breaks come from, in the `source` label of `headwater_ad_breaks_total`: every
    /// ``BreakSource`` (listed here because it is not `CaseIterable`).
    static let breakSources: [BreakSource] = [.cue, .schedule, .request]

    /// An ad break started on `channel`; `source` is where it came from (`cue`, `schedule`, `request`).
    public func adBreakStarted(channel: String, source: String) {
        adBreaks(channel: channel, source: source).increment()
    }

    /// A source ad cue could not be used (bad CRC, undecodable, inconsistent): not stitched, passed
    /// through. `reason` is one of ``BreakEvent/invalidCueLabels``.
    public func adCueRejected(channel: String, reason: String) {
        adCuesRejected(channel: channel, reason: reason).increment()
    }

    /// A stitched playlist request was answered with `outcome` (a ``StitchedPlaylistOutcome`` raw
    /// value: `ok`, `forbidden`, `bad_request`, `unavailable`, `error` …).
    public func stitchedPlaylist(outcome: String) {
        if outcome == StitchedPlaylistOutcome.ok.rawValue { return stitchedPlaylistsServed.increment() }
        stitchedPlaylists(outcome).increment()
    }

    static let stitchedPlaylistsHelp = "Per-session stitched media playlist requests, by outcome."

    /// A viewer session started (`/ssai/{channel}/master.m3u8`).
    public func sessionStarted(channel: String) {
        sessionsStarted(channel: channel).increment()
    }

    /// The ad series of `channel`, made at 0 (``registerChannelSeries(_:)``).
    func registerAdSeries(channel: String) {
        for source in Self.breakSources { _ = adBreaks(channel: channel, source: source.rawValue) }
        for reason in BreakEvent.invalidCueLabels { _ = adCuesRejected(channel: channel, reason: reason) }
        _ = sessionsStarted(channel: channel)
    }

    /// A request for a content key (`/keys/…`), by channel (configured channels only, else
    /// `unknown`) and outcome (`ok`, `forbidden`, `not_found`). Never the key or the token.
    public func keyRequested(channel: String, outcome: String) {
        counter(
            "headwater_key_requests_total", labels: [("channel", channel), ("outcome", outcome)],
            help: "Content key requests (/keys/...), by channel and outcome (ok, forbidden, not_found)."
        ).increment()
    }

    func stitchedPlaylists(_ outcome: String) -> Prometheus.Counter {
        counter("headwater_stitched_playlists_total", labels: [("outcome", outcome)], help: Self.stitchedPlaylistsHelp)
    }

    private func adBreaks(channel: String, source: String) -> Prometheus.Counter {
        counter(
            "headwater_ad_breaks_total", labels: [("channel", channel), ("source", source)],
            help: "Ad breaks started, by channel and by what started them (source cue, schedule, admin request)."
        )
    }

    private func adCuesRejected(channel: String, reason: String) -> Prometheus.Counter {
        counter(
            "headwater_ad_cues_rejected_total", labels: [("channel", channel), ("reason", reason)],
            help: "Ad cues in source playlists that were not acted on (invalid SCTE-35: bad CRC, truncated, not hexadecimal …), by reason."
        )
    }

    private func sessionsStarted(channel: String) -> Prometheus.Counter {
        counter(
            "headwater_sessions_started_total", labels: [("channel", channel)],
            help: "Viewer sessions started (signed session tokens issued), by channel."
        )
    }
}
