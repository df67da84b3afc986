#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HeadwaterHLS
import HeadwaterStitching
import NIOCore
import NIOHTTP1
import HeadwaterLiveWindow
import HeadwaterRuntime

/// `GET /api/status`: what the status page (`Public/index.html`) draws, as JSON. Every channel's
/// state and its ``ChannelStatus`` (renditions with their segment timelines, stalls, ingest
/// counts), its ad breaks and traffic, plus the figures that depend on the request's instant.
///
/// ```json
/// {"channels":[{"breaks":[…],"liveEdgeAgeSeconds":0.84,"name":"demo","sessionsStarted":12,"state":"live",
///   "status":{…},"traffic":{"clientErrors":3,"clientErrorsPerSecond":0.05,"requests":812,…}}],
///  "generatedAt":1763756400000,
///  "server":{"beacons":{"sent":40},"stitchedPlaylists":{"ok":300},"uptimeSeconds":42,"version":"0.1.0-dev"}}
/// ```
///
/// - `generatedAt`: ms since the Unix epoch, the instant ages are measured at;
/// - `server.version`: ``HeadwaterVersion/current``; `server.stitchedPlaylists` and
///   `server.beacons`: requests for stitched playlists by outcome, and tracking beacon URLs by
///   outcome (all events), since the server started, as `/metrics` counts them (server-wide: the
///   metrics carry no channel for either);
/// - `channels[].state`: `starting`, `live` or `degraded` (then `degradedReason` says why);
/// - `channels[].liveEdgeAgeSeconds`: now − `status.lastSegmentAt`, absent before the first
///   segment; clamped at 0 (a source clock slightly ahead is not a negative age);
/// - `channels[].status`: ``ChannelStatus`` as it encodes (times in µs since the epoch);
/// - `channels[].traffic`: `/live/{channel}/…` and `/ssai/{channel}/…` requests answered, 4xx and
///   5xx among them, since the server started, and per second over the last `windowSeconds`
///   (60, or less when the first request is more recent) (``ChannelTraffic``);
/// - `channels[].breaks`: the ad breaks in the channel's break log, when it stitches ads;
///   `endedEarly` once a break ended more than ``earlyReturnTolerance`` before its planned end
///   (a source's CUE-IN or an operator's return; a break that runs its planned time ends at the
///   first segment boundary at or after it);
/// - `channels[].adsUnfitReason`: why a channel configured for ads is not stitched (its ladder
///   does not fit the ad configuration), absent when it is or has no ads;
/// - `channels[].sessionsStarted`: viewer sessions started on the channel, when it has ads.
///
/// Keys are sorted so the output is stable. `Cache-Control: no-store`: it is about the present.
/// Each request costs one `JSONEncoder` pass and one metrics exposition (as a `/metrics` scrape
/// does), which is fine for a page polling every 2 s; this is not a hot path.
struct StatusAPI: Sendable {
    /// The instant ages and uptime are measured at.
    var clock: any WallClock
    /// When the server started, µs since the epoch.
    var startedAt: Int64
    var version: String
    /// Where sessions, stitched playlists and beacons are counted (the server's ``OriginMetrics``).
    var metrics: OriginMetrics
    /// Viewer requests per channel: counted by the server for every request it answers.
    let traffic: ChannelTraffic

    /// How much shorter than planned a break must be to count as an early return: more than a
    /// frame or two of rounding, less than any real return.
    static let earlyReturnTolerance = HLSDuration.milliseconds(500)

    /// The `/metrics` series read for the document.
    static let sessionsMetric = "headwater_sessions_started_total"
    static let stitchedMetric = "headwater_stitched_playlists_total"
    static let beaconsMetric = "headwater_beacons_total"

    init(
        clock: any WallClock = SystemWallClock(), startedAt: Int64? = nil, version: String = HeadwaterVersion.current,
        metrics: OriginMetrics = .shared, traffic: ChannelTraffic = ChannelTraffic()
    ) {
        self.clock = clock
        self.startedAt = startedAt ?? clock.now()
        self.version = version
        self.metrics = metrics
        self.traffic = traffic
    }

    struct Document: Encodable {
        struct Server: Encodable {
            var version: String
            var uptimeSeconds: Int64
            /// Stitched playlist requests by outcome (`ok`, `forbidden`, …), since the start.
            var stitchedPlaylists: [String: UInt64]
            /// Beacon URLs by outcome (`sent`, `failed`, `dropped`, `duplicate`), since the start.
            var beacons: [String: UInt64]
        }

        struct Channel: Encodable {
            var name: String
            var state: String
            var degradedReason: String?
            var liveEdgeAgeSeconds: Double?
            /// Absent only for a configured channel that has published nothing at all.
            var status: ChannelStatus?
            /// The ad breaks the channel's break log still holds (oldest first), when it stitches ads.
            var breaks: [Break]?
            /// Why the channel's ads cannot be stitched, when it has ads and they cannot.
            var adsUnfitReason: String?
            /// Viewer sessions started, when the channel has ads.
            var sessionsStarted: UInt64?
            var traffic = Traffic()
        }

        /// One ad break; times in µs since the epoch, like ``ChannelStatus``.
        struct Break: Encodable {
            var id: String
            var startMediaSequence: UInt64
            var startedAt: Int64
            var plannedDurationSeconds: Double
            /// Absent while the break is in progress.
            var endMediaSequence: UInt64?
            var endedAt: Int64?
            var durationSeconds: Double?
            var endedEarly: Bool?
        }

        /// Viewer requests (``ChannelTraffic``); rates per second over the last `windowSeconds`.
        struct Traffic: Encodable {
            var windowSeconds = 0
            var requests: UInt64 = 0
            var clientErrors: UInt64 = 0
            var serverErrors: UInt64 = 0
            var requestsPerSecond = 0.0
            var clientErrorsPerSecond = 0.0
            var serverErrorsPerSecond = 0.0
        }

        /// ms since the epoch.
        var generatedAt: Int64
        var server: Server
        var channels: [Channel]
    }

    /// The document for `content` at `now` (µs), with the counters in `samples` and ``traffic``.
    func document(content: any OriginContent, now: Int64, samples: MetricSamples) -> Document {
        let sessions = samples.sum(Self.sessionsMetric, by: "channel")
        var channels: [Document.Channel] = []
        for name in content.channelNames {
            var channel = Document.Channel(name: name, state: "starting")
            channel.traffic = Self.traffic(traffic.reading(channel: name, at: now / 1_000_000))
            // ChannelRegistry is the content that stitches (tests serve others): it holds the
            // channel's break desk, which knows whether the ladder fits the ad configuration.
            let desk = (content as? ChannelRegistry)?.breaks(of: name)
            channel.adsUnfitReason = desk?.unfitReason
            guard let snapshot = content.snapshot(of: name) else {
                channels.append(channel)
                continue
            }
            channel.status = snapshot.status
            switch snapshot.state {
            case .starting: channel.state = "starting"
            case .live: channel.state = "live"
            case .degraded(let reason):
                channel.state = "degraded"
                channel.degradedReason = reason
            }
            channel.breaks = snapshot.stitching?.breaks.breaks.map(Self.adBreak)
            // Every configured channel's series is exported (at 0 without ads): shown for those with ads.
            if desk != nil || channel.breaks != nil {
                channel.sessionsStarted = sessions[name] ?? 0
            }
            if let last = snapshot.status.lastSegmentAt {
                // Whole milliseconds: enough for a page, and stable output for tests.
                channel.liveEdgeAgeSeconds = Double(max(0, now - last) / 1_000) / 1_000
            }
            channels.append(channel)
        }
        return Document(
            generatedAt: now / 1_000,
            server: Document.Server(
                version: version, uptimeSeconds: max(0, now - startedAt) / 1_000_000,
                stitchedPlaylists: samples.sum(Self.stitchedMetric, by: "outcome"),
                beacons: samples.sum(Self.beaconsMetric, by: "outcome")),
            channels: channels
        )
    }

    static func adBreak(_ adBreak: AdBreak) -> Document.Break {
        let seconds = { (duration: HLSDuration) in Double(duration.microseconds) / 1e6 }
        return Document.Break(
            id: adBreak.id, startMediaSequence: adBreak.startMediaSequence,
            startedAt: adBreak.startDate.millisecondsSinceEpoch * 1000,
            plannedDurationSeconds: seconds(adBreak.plannedDuration),
            endMediaSequence: adBreak.end?.mediaSequence,
            endedAt: adBreak.end.map { $0.date.millisecondsSinceEpoch * 1000 },
            durationSeconds: adBreak.actualDuration.map(seconds),
            endedEarly: adBreak.actualDuration.map { endedEarly(planned: adBreak.plannedDuration, actual: $0) })
    }

    /// Whether a break that aired `actual` of its `planned` duration returned early.
    static func endedEarly(planned: HLSDuration, actual: HLSDuration) -> Bool {
        actual.microseconds < planned.microseconds - earlyReturnTolerance.microseconds
    }

    static func traffic(_ reading: ChannelTraffic.Reading?) -> Document.Traffic {
        guard let reading else { return Document.Traffic(windowSeconds: ChannelTraffic.windowSeconds) }
        let perSecond = { (count: UInt64) in (Double(count) / Double(reading.seconds) * 1000).rounded() / 1000 }
        return Document.Traffic(
            windowSeconds: reading.seconds, requests: reading.total.requests, clientErrors: reading.total.clientErrors,
            serverErrors: reading.total.serverErrors, requestsPerSecond: perSecond(reading.recent.requests),
            clientErrorsPerSecond: perSecond(reading.recent.clientErrors),
            serverErrorsPerSecond: perSecond(reading.recent.serverErrors))
    }

    func response(content: any OriginContent) -> OriginResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body: Data
        do {
            let now = clock.now()
            traffic.forget(allBut: Set(content.channelNames))
            // The exposition `/metrics` answers, made the same way (a scrape's side effects: the
            // channels' gauges set to their current values).
            let exposition = metrics.exposition(channels: ChannelHealth.all(content, now: now))
            let samples = MetricSamples(exposition: exposition, names: [Self.sessionsMetric, Self.stitchedMetric, Self.beaconsMetric])
            body = try encoder.encode(document(content: content, now: now, samples: samples))
        } catch {
            // Only a non-finite Double could fail, and durations and ages are finite.
            return .refused(Refusal(.failed, "cannot encode the status"), cachePolicy: CachePolicy(.health))
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: ContentType.json.value)
        var buffer = ByteBuffer()
        buffer.reserveCapacity(body.count + 1)
        buffer.writeBytes(body)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return OriginResponse(status: .ok, headers: headers, body: .bytes(buffer), cachePolicy: CachePolicy(.health))
    }
}
