import AsyncHTTPClient
import Foundation
import HeadwaterConfiguration
import HeadwaterHLS
@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterSources
import HeadwaterStitching
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// The repository, for the committed demo package and ad configuration.
private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// A wall clock the test moves.
final class StatusTestClock: WallClock {
    private let microseconds: Atomic<Int64>
    init(_ start: Int64) { microseconds = Atomic(start) }
    func now() -> Int64 { microseconds.load(ordering: .relaxed) }
    func advance(seconds: Int64) { microseconds.add(seconds * 1_000_000, ordering: .relaxed) }
}

/// Channels with known status timelines, plus `ghost`: configured, nothing published yet.
struct StatusTestContent: OriginContent {
    var channels: [String: ChannelSnapshot]
    func snapshot(of channel: String) -> ChannelSnapshot? { channels[channel] }
    var channelNames: [String] { (channels.keys + ["ghost"]).sorted() }
}

/// `GET /api/status` over a real socket: the JSON the status page reads, its values at a known
/// instant, and its headers.
@Suite("Status API")
struct StatusAPITests {
    /// The instant the server starts (µs); requests are made 42 s later.
    static let start: Int64 = 1_795_282_560_000_000
    static let now = start + 42_000_000

    /// `demo`: a push channel whose `v1` window has content, an ad break (cue-out, slate fill with a
    /// discontinuity, a gap, cue-in with a discontinuity back to the source); its newest segment
    /// (from `v1`) arrived 2.5 s before the request. `shaky`: degraded, 20 s behind. `slow`: starting.
    static let demoStatus: ChannelStatus = {
        var status = ChannelStatus(source: "push", targetDuration: 6, windowSeconds: 30)
        status.renditions = [
            .init(
                name: "v1", mediaSequence: 7, discontinuitySequence: 3,
                segments: [
                    .init(msn: 7, duration: 6, kind: .content, discontinuity: false),
                    .init(msn: 8, duration: 5.5, kind: .content, discontinuity: false, marker: "cue-out"),
                    .init(msn: 9, duration: 6, kind: .slate, discontinuity: true, marker: "cue-out-cont"),
                    .init(msn: 10, duration: 6, kind: .gap, discontinuity: false),
                    .init(msn: 11, duration: 4.25, kind: .content, discontinuity: true, marker: "cue-in"),
                ],
                lastSegmentAt: now - 2_500_000),
            .init(
                name: "audio", mediaSequence: 7, discontinuitySequence: 3,
                segments: [.init(msn: 7, duration: 6, kind: .content, discontinuity: false)],
                lastSegmentAt: now - 4_000_000),
        ]
        status.stalls = [
            .init(rendition: nil, startedAt: now - 30_000_000, endedAt: now - 18_000_000, fill: "slate"),
            .init(rendition: "audio", startedAt: now - 3_000_000, fill: "gap"),
        ]
        status.ingest = .init(segments: 120, bytes: 9_876_543, rejected: 2)
        return status
    }()

    static let content: StatusTestContent = {
        let base = Fixture.content()
        var demo = base.channels["demo"]!
        demo.status = demoStatus
        var shaky = base.channels["shaky"]!
        var shakyStatus = ChannelStatus(source: "pull", targetDuration: 6, windowSeconds: 30)
        shakyStatus.renditions = [
            .init(name: "v1", mediaSequence: 1, discontinuitySequence: 0, segments: [], lastSegmentAt: now - 20_000_000)
        ]
        shaky.status = shakyStatus
        var slow = base.channels["slow"]!
        slow.status = ChannelStatus(source: "loop", targetDuration: 4, windowSeconds: 24)
        return StatusTestContent(channels: ["demo": demo, "shaky": shaky, "slow": slow])
    }()

    private static func fetch(_ port: Int, method: HTTPMethod = .GET) async throws -> (HTTPClientResponse, [UInt8]) {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/status")
            request.method = method
            let response = try await client.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 20)
            try await client.shutdown()
            return (response, Array(body.readableBytesView))
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    @Test func routes() {
        #expect(Route.parse("/api/status") == .success(.status))
        #expect(Route.parse("/api/status?x=1") == .success(.status))
        #expect(Route.parse("/api/other") == .success(.staticFile(path: ["api", "other"])))
        #expect(Route.status.template == "/api/status")
        #expect(Route.status.allowedMethods == [.GET, .HEAD, .OPTIONS])
    }

    @Test func documentOverSocket() async throws {
        let clock = StatusTestClock(Self.start)
        try await withServer(content: Self.content, clock: clock) { port in
            clock.advance(seconds: 42)
            let (response, body) = try await Self.fetch(port)
            #expect(response.status == .ok)
            #expect(response.headers.first(name: "Content-Type") == "application/json")
            #expect(response.headers.first(name: "Cache-Control") == "no-store")
            #expect(response.headers.first(name: "Expires") == nil)
            #expect(body.last == UInt8(ascii: "\n"))

            let json = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            #expect(Set(json.keys) == ["generatedAt", "server", "channels"])
            #expect(Set((json["server"] as? [String: Any] ?? [:]).keys) == ["version", "uptimeSeconds", "stitchedPlaylists", "beacons"])
            #expect(json["generatedAt"] as? Int64 == Self.now / 1_000)
            let server = try #require(json["server"] as? [String: Any])
            #expect(server["version"] as? String == HeadwaterVersion.current)
            #expect(server["uptimeSeconds"] as? Int == 42)

            let channels = try #require(json["channels"] as? [[String: Any]])
            #expect(channels.map { $0["name"] as? String } == ["demo", "ghost", "shaky", "slow"])
            let demo = channels[0]
            #expect(demo["state"] as? String == "live")
            #expect(demo["degradedReason"] == nil)
            // The newest segment of any rendition: v1's, 2.5 s ago (audio's is 4 s old).
            #expect(demo["liveEdgeAgeSeconds"] as? Double == 2.5)
            // No viewer request yet: zeros over the full minute; no ads on this content.
            let traffic = try #require(demo["traffic"] as? [String: Any])
            #expect(traffic["windowSeconds"] as? Int == 60)
            #expect(traffic["requests"] as? Int == 0)
            #expect(traffic["requestsPerSecond"] as? Double == 0)
            #expect(demo["sessionsStarted"] == nil)
            #expect(demo["adsUnfitReason"] == nil)
            // Nothing stitched yet: no outcome above 0 (some are exported at 0 from the start).
            #expect((server["stitchedPlaylists"] as? [String: Int])?.values.allSatisfy { $0 == 0 } == true)
            let status = try #require(demo["status"] as? [String: Any])
            #expect(status["source"] as? String == "push")
            #expect(status["targetDuration"] as? Int == 6)
            #expect(status["windowSeconds"] as? Int == 30)
            let renditions = try #require(status["renditions"] as? [[String: Any]])
            #expect(renditions.map { $0["name"] as? String } == ["v1", "audio"])
            #expect(renditions[0]["mediaSequence"] as? Int == 7)
            #expect(renditions[0]["discontinuitySequence"] as? Int == 3)
            #expect(renditions[0]["lastSegmentAt"] as? Int64 == Self.now - 2_500_000)
            let segments = try #require(renditions[0]["segments"] as? [[String: Any]])
            #expect(segments.map { $0["msn"] as? Int } == [7, 8, 9, 10, 11])
            #expect(segments.map { $0["kind"] as? String } == ["content", "content", "slate", "gap", "content"])
            #expect(segments.map { $0["duration"] as? Double } == [6, 5.5, 6, 6, 4.25])
            #expect(segments.map { $0["discontinuity"] as? Bool } == [false, false, true, false, true])
            #expect(segments.map { $0["marker"] as? String } == [nil, "cue-out", "cue-out-cont", nil, "cue-in"])
            // A segment without a marker has no `marker` key at all (not null).
            #expect(!segments[0].keys.contains("marker"))
            let stalls = try #require(status["stalls"] as? [[String: Any]])
            #expect(stalls.count == 2)
            #expect(stalls[0]["fill"] as? String == "slate")
            #expect(stalls[0]["rendition"] == nil)
            #expect(stalls[0]["endedAt"] as? Int64 == Self.now - 18_000_000)
            #expect(stalls[1]["rendition"] as? String == "audio")
            #expect(stalls[1]["endedAt"] == nil)
            let ingest = try #require(status["ingest"] as? [String: Any])
            #expect(ingest["segments"] as? Int == 120)
            #expect(ingest["bytes"] as? Int == 9_876_543)
            #expect(ingest["rejected"] as? Int == 2)

            // Configured but nothing published: starting, no status, no age.
            #expect(channels[1]["state"] as? String == "starting")
            #expect(channels[1]["status"] == nil)
            #expect(channels[1]["liveEdgeAgeSeconds"] == nil)

            #expect(channels[2]["state"] as? String == "degraded")
            #expect(channels[2]["degradedReason"] as? String == "source stalled")
            #expect(channels[2]["liveEdgeAgeSeconds"] as? Double == 20)

            #expect(channels[3]["state"] as? String == "starting")
            #expect(channels[3]["liveEdgeAgeSeconds"] == nil)
            #expect((channels[3]["status"] as? [String: Any])?["source"] as? String == "loop")
        }
    }

    /// The `status` member is `ChannelStatus`'s own encoding: it decodes back to the same value,
    /// and keys are sorted, so two requests at one instant give identical bytes.
    @Test func statusRoundTripsAndOutputIsStable() async throws {
        let clock = StatusTestClock(Self.now)
        try await withServer(content: Self.content, clock: clock) { port in
            let (_, first) = try await Self.fetch(port)
            let (_, second) = try await Self.fetch(port)
            #expect(first == second)
            let text = String(decoding: first, as: UTF8.self)
            #expect(text.hasPrefix(#"{"channels":[{"liveEdgeAgeSeconds":2.5,"name":"demo","state":"live","status":{"#))

            struct Document: Decodable {
                struct Channel: Decodable {
                    var name: String
                    var status: ChannelStatus?
                }
                var channels: [Channel]
            }
            let document = try JSONDecoder().decode(Document.self, from: Data(first))
            #expect(document.channels.first { $0.name == "demo" }?.status == Self.demoStatus)
        }
    }

    @Test func headAndMethods() async throws {
        try await withServer(content: Self.content) { port in
            let (get, body) = try await Self.fetch(port)
            let (head, headBody) = try await Self.fetch(port, method: .HEAD)
            #expect(head.status == .ok)
            #expect(headBody.isEmpty)
            #expect(head.headers.first(name: "Content-Type") == "application/json")
            #expect(head.headers.first(name: "Cache-Control") == "no-store")
            #expect(get.headers.first(name: "Content-Length") == String(body.count))
            let (post, _) = try await Self.fetch(port, method: .POST)
            #expect(post.status == .methodNotAllowed)
            #expect(post.headers.first(name: "Allow") == "GET, HEAD, OPTIONS")
        }
    }
}

/// What `/api/status` says about ads and viewers: breaks with their planned and actual ends, a
/// channel whose ladder the ad configuration does not fit, sessions, stitched-playlist and beacon
/// outcomes read back from the metrics, and per-channel request rates.
@Suite("Status API: ads and traffic")
struct StatusAPIAdsTests {
    /// 2026-11-21T17:36:00Z, on a minute: the demo schedule's break starts here.
    static let start: Int64 = 1_795_282_560_000_000

    /// A registry with the looping demo as `demo` (a 20 s break every minute) and as `wide`,
    /// whose ladder has a rendition (`v9`) no creative has; both published at `start` and 30 s later.
    static func registry(metrics: OriginMetrics) throws -> ChannelRegistry {
        let package = try LoopPackage.load(multivariantPath: repository.appendingPathComponent("Public/demo/master.m3u8").path)
        let ads = try AdConfiguration.load(
            file: repository.appendingPathComponent("Config/ads.yaml").path,
            publicDirectory: repository.appendingPathComponent("Public").path, version: 1)
        let ruleBook = AdRuleBook(ads.ruleSet)
        let registry = ChannelRegistry()
        let schedule = try BreakSchedule(every: .seconds(60), duration: .seconds(20))
        for name in ["demo", "wide"] {
            registry.setBreaks(
                ChannelBreaks(channel: name, schedule: schedule, ruleBook: ruleBook, logger: Logger(label: "test"), metrics: metrics),
                for: name)
        }
        for now in [start, start + 30_000_000] {
            registry.publish(LoopChannel(name: "demo", package: package, windowSeconds: 30, startedAt: 0).snapshot(at: now))
            var wide = LoopChannel(name: "wide", package: package, windowSeconds: 30, startedAt: 0).snapshot(at: now)
            var content = try #require(wide.content)
            content.media["v9"] = content.media["v0"]
            wide.content = content
            registry.publish(wide)
        }
        return registry
    }

    static func json(_ response: OriginResponse) throws -> [String: Any] {
        guard case .bytes(let buffer) = response.body else {
            Issue.record("not a byte body")
            return [:]
        }
        return try #require(try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any])
    }

    @Test("breaks carry planned and actual ends; an unfit ladder is flagged with its reason; sessions, stitched and beacon outcomes come from the metrics")
    func adsInTheDocument() throws {
        let metrics = OriginMetrics()
        let registry = try Self.registry(metrics: metrics)
        metrics.sessionStarted(channel: "demo")
        metrics.sessionStarted(channel: "demo")
        metrics.sessionStarted(channel: "demo")
        metrics.stitchedPlaylist(outcome: "ok")
        metrics.stitchedPlaylist(outcome: "ok")
        metrics.stitchedPlaylist(outcome: "forbidden")
        let now = Self.start + 31_000_000
        let api = StatusAPI(clock: StatusTestClock(now), startedAt: Self.start, metrics: metrics)
        let json = try Self.json(api.response(content: registry))

        let server = try #require(json["server"] as? [String: Any])
        #expect(server["version"] as? String == HeadwaterVersion.current)
        // `ok` and `forbidden` counted; other outcomes may be exported at 0.
        let stitched = try #require(server["stitchedPlaylists"] as? [String: Int])
        #expect(stitched.filter { $0.value > 0 } == ["ok": 2, "forbidden": 1])
        #expect((server["beacons"] as? [String: Int])?.values.allSatisfy { $0 == 0 } == true)

        let channels = try #require(json["channels"] as? [[String: Any]])
        #expect(channels.map { $0["name"] as? String } == ["demo", "wide"])
        let demo = channels[0], wide = channels[1]
        #expect(demo["sessionsStarted"] as? Int == 3)
        #expect(demo["adsUnfitReason"] == nil)
        // The break at 17:36:00 ran its planned 20 s and ended on time: not early.
        let breaks = try #require(demo["breaks"] as? [[String: Any]])
        let first = try #require(breaks.first)
        #expect(first["startedAt"] as? Int64 == Self.start)
        #expect(first["plannedDurationSeconds"] as? Double == 20)
        let aired = try #require(first["durationSeconds"] as? Double)
        #expect(aired >= 20 && aired < 22, "ends at the first segment boundary at or after 20 s: \(aired)")
        #expect(first["endedAt"] as? Int64 == Self.start + Int64(aired * 1e6))
        #expect(first["endedEarly"] as? Bool == false)
        #expect((first["endMediaSequence"] as? Int ?? 0) > (first["startMediaSequence"] as? Int ?? .max))

        // `wide` publishes and plays, but its ads cannot be stitched: flagged, with the reason.
        #expect(wide["state"] as? String == "live")
        let reason = try #require(wide["adsUnfitReason"] as? String)
        #expect(reason.contains("v9"), "\(reason)")
        #expect(wide["breaks"] == nil)
        #expect(wide["sessionsStarted"] as? Int == 0)

        // Beacons as the dispatcher's counters appear in the exposition (HeadwaterTracking reports
        // them through swift-metrics into the same registry), summed over events per outcome.
        let exposition = """
            headwater_beacons_total{event="impression",outcome="sent"} 4
            headwater_beacons_total{event="complete",outcome="sent"} 1
            headwater_beacons_total{event="impression",outcome="failed"} 2
            headwater_beacons_total{event="complete",outcome="dropped"} 0

            """
        let samples = MetricSamples(exposition: Array(exposition.utf8), names: [StatusAPI.beaconsMetric])
        let document = api.document(content: registry, now: now, samples: samples)
        #expect(document.server.beacons == ["sent": 5, "failed": 2, "dropped": 0])
    }

    @Test("a break that ends more than ½ s before its planned end is an early return; on time or late is not")
    func earlyReturn() {
        let planned = HLSDuration.seconds(20)
        #expect(StatusAPI.endedEarly(planned: planned, actual: .milliseconds(12_000)))
        #expect(StatusAPI.endedEarly(planned: planned, actual: .milliseconds(19_499)))
        #expect(!StatusAPI.endedEarly(planned: planned, actual: .milliseconds(19_500)))
        #expect(!StatusAPI.endedEarly(planned: planned, actual: planned))
        #expect(!StatusAPI.endedEarly(planned: planned, actual: .milliseconds(21_333)))
    }

    @Test("the channel of a viewer request is its path's second segment, query ignored")
    func channelInPath() {
        #expect(ChannelTraffic.channel(inPath: "/live/demo/v1.m3u8") == "demo")
        #expect(ChannelTraffic.channel(inPath: "/ssai/news/master.m3u8?device=tv") == "news")
        #expect(ChannelTraffic.channel(inPath: "/live/demo?x=/y") == "demo")
        #expect(ChannelTraffic.channel(inPath: "/live/") == nil)
        #expect(ChannelTraffic.channel(inPath: "/live//v1.m3u8") == nil)
        #expect(ChannelTraffic.channel(inPath: "/live?a=/b/c") == nil)
        #expect(ChannelTraffic.channel(inPath: "") == nil)
    }

    @Test("requests per channel: rates over the last minute by status class, totals since the start, only /live and /ssai")
    func trafficPerChannel() throws {
        let traffic = ChannelTraffic()
        let t: Int64 = 1_795_282_560
        // 120 requests over the minute before t (2 a second), 6 of them 404s and 3 503s; then 2 more at t.
        for second in (t - 59)...t {
            traffic.record(route: "/live/{channel}/{rendition}.m3u8", path: "/live/demo/v1.m3u8", status: 200, at: second)
            traffic.record(route: "/live/{channel}/{rendition}/{segment}", path: "/live/demo/v1/\(second).ts", status: 200, at: second)
        }
        for second in (t - 5)..<t {
            traffic.record(route: "/live/{channel}/{rendition}/{segment}", path: "/live/demo/v1/9.ts", status: 404, at: second)
        }
        traffic.record(route: "/ssai/{channel}/{rendition}.m3u8", path: "/ssai/demo/v1.m3u8?session=x", status: 404, at: t)
        for _ in 0..<3 { traffic.record(route: "/ssai/{channel}/master.m3u8", path: "/ssai/demo/master.m3u8?device=tv", status: 503, at: t) }
        // Not a channel's viewer request: not counted.
        traffic.record(route: "/api/status", path: "/api/status", status: 200, at: t)
        traffic.record(route: "/ingest/{channel}/{path}", path: "/ingest/demo/v1.m3u8", status: 401, at: t)
        // Another channel, first seen 10 s ago: its rate is over those 10 s, not diluted over 60.
        for second in (t - 9)...t {
            traffic.record(route: "/live/{channel}/master.m3u8", path: "/live/news/master.m3u8", status: 200, at: second)
        }

        let demo = try #require(traffic.reading(channel: "demo", at: t))
        #expect(demo.seconds == 60)
        #expect(demo.total == .init(requests: 129, clientErrors: 6, serverErrors: 3))
        #expect(demo.recent == demo.total)
        let document = StatusAPI.traffic(demo)
        #expect(document.requestsPerSecond == 2.15)
        #expect(document.clientErrorsPerSecond == 0.1)
        #expect(document.serverErrorsPerSecond == 0.05)
        #expect(document.requests == 129)

        let news = try #require(traffic.reading(channel: "news", at: t))
        #expect(news.seconds == 10)
        #expect(StatusAPI.traffic(news).requestsPerSecond == 1)

        // 30 s later only the last minute counts (the seconds after t − 30); totals stay.
        let later = try #require(traffic.reading(channel: "demo", at: t + 30))
        #expect(later.total.requests == 129)
        #expect(later.recent == .init(requests: 2 * 30 + 5 + 4, clientErrors: 6, serverErrors: 3))
        #expect(traffic.reading(channel: "demo", at: t + 61)?.recent == .init())
        #expect(traffic.reading(channel: "sports", at: t) == nil)
        #expect(StatusAPI.traffic(nil).windowSeconds == 60)
        #expect(StatusAPI.traffic(nil).requests == 0)

        // Names that are not channels are dropped at the next document, and never more than the cap are kept.
        traffic.forget(allBut: ["demo"])
        #expect(traffic.reading(channel: "news", at: t) == nil)
        #expect(traffic.reading(channel: "demo", at: t) != nil)
        for index in 0..<(ChannelTraffic.maxChannels + 10) {
            traffic.record(route: "/live/{channel}/master.m3u8", path: "/live/junk\(index)/master.m3u8", status: 404, at: t)
        }
        #expect(traffic.reading(channel: "junk\(ChannelTraffic.maxChannels + 5)", at: t) == nil)
        #expect(traffic.reading(channel: "junk0", at: t) != nil)
    }

    @Test("the traffic a StatusAPI is given appears per channel in its document")
    func trafficInTheDocument() throws {
        let metrics = OriginMetrics()
        let registry = try Self.registry(metrics: metrics)
        let now = Self.start + 31_000_000
        let api = StatusAPI(clock: StatusTestClock(now), startedAt: Self.start, metrics: metrics)
        for _ in 0..<30 {
            api.traffic.record(route: "/live/{channel}/{rendition}.m3u8", path: "/live/wide/v1.m3u8", status: 200, at: now / 1_000_000)
        }
        api.traffic.record(route: "/live/{channel}/{rendition}.m3u8", path: "/live/wide/v9.m3u8", status: 500, at: now / 1_000_000)
        let channels = try #require(Self.json(api.response(content: registry))["channels"] as? [[String: Any]])
        let wide = try #require(channels.first { $0["name"] as? String == "wide" }?["traffic"] as? [String: Any])
        #expect(wide["requests"] as? Int == 31)
        #expect(wide["serverErrors"] as? Int == 1)
        #expect(wide["windowSeconds"] as? Int == 1)
        #expect(wide["requestsPerSecond"] as? Double == 31)
        #expect(wide["serverErrorsPerSecond"] as? Double == 1)
        let demo = try #require(channels.first { $0["name"] as? String == "demo" }?["traffic"] as? [String: Any])
        #expect(demo["requests"] as? Int == 0)
    }

    @Test("metric samples: labels (escaped values included) and values of the named series only")
    func metricSamples() {
        let text = """
            # HELP headwater_beacons_total Beacons.
            # TYPE headwater_beacons_total counter
            headwater_beacons_total{event="impression",outcome="sent"} 7
            headwater_beacons_total{event="complete",outcome="sent"} 2.0
            headwater_beacons_total{outcome="failed",event="midpoint"} 1
            headwater_sessions_started_total{channel="a \\"quoted\\" \\\\ name"} 3
            headwater_other_total 9
            headwater_broken_total{channel="x 1

            """
        let samples = MetricSamples(
            exposition: Array(text.utf8), names: ["headwater_beacons_total", "headwater_sessions_started_total", "headwater_broken_total"])
        #expect(samples.sum("headwater_beacons_total", by: "outcome") == ["sent": 9, "failed": 1])
        #expect(samples.sum("headwater_beacons_total", by: "event", where: ["outcome": "sent"]) == ["impression": 7, "complete": 2])
        #expect(samples.sum("headwater_sessions_started_total", by: "channel") == [#"a "quoted" \ name"#: 3])
        #expect(samples.sum("headwater_other_total", by: "channel").isEmpty)
        #expect(samples.sum("headwater_broken_total", by: "channel").isEmpty)
    }
}
