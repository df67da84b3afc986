import Foundation
@testable import HeadwaterConfiguration
import HeadwaterHLS
@testable import HeadwaterLiveWindow
@testable import HeadwaterRuntime
@testable import HeadwaterSources
import HeadwaterStitching
import Logging
import Testing

/// Ingest, refusals and renders counted into an injected ``OriginMetrics`` (its own registry), so
/// the counts are exact whatever else runs in parallel.
@Suite("Origin metrics")
struct OriginMetricsTests {
    /// The value of the series written exactly as `series` (name and labels in registration order).
    static func value(_ metrics: OriginMetrics, _ series: String, channels: [ChannelHealth] = []) -> Double? {
        value(in: String(decoding: metrics.exposition(channels: channels), as: UTF8.self), series)
    }

    static func value(in text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    @Test func pushIngestCountsSegmentsRefusalsByReasonAndRenders() throws {
        let metrics = OriginMetrics()
        let state = NSTemporaryDirectory() + "headwater-metrics-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }
        var configuration = HeadwaterConfiguration()
        configuration.server.stateDirectory = state
        configuration.channels = [
            .init(name: "live", source: .push(.init(targetDuration: 2, maxUploadBytes: 1 << 20)), windowSeconds: 6)
        ]
        let clock = ManualWallClock()
        let ingest = try PushIngest(
            configuration: configuration, registry: ChannelRegistry(), clock: clock, logger: Logger(label: "test"),
            environment: ["HEADWATER_INGEST_TOKEN": "t"], metrics: metrics)

        func put(_ path: String, _ bytes: [UInt8]) throws {
            let components = path.split(separator: "/").map(String.init)
            let upload = try ingest.beginUpload(channel: "live", path: components, contentLength: bytes.count)
            try ingest.write(bytes, to: upload)
            try ingest.finish(upload)
        }
        let segment = PushIngestTests.segmentBytes
        for n in 0..<3 {
            clock.advance(seconds: 2)
            try put("x_0\(n).ts", segment)
            try put("x_0.m3u8", Array(PushIngestTests.playlist(first: 0, count: n + 1).utf8))
        }
        #expect(throws: IngestRefusal.self) { try ingest.authorize(channel: "live", authorization: "Bearer wrong") }
        #expect(throws: IngestRefusal.self) { try ingest.authorize(channel: "nosuch", authorization: "Bearer t") }
        #expect(throws: IngestRefusal.self) { try put("x_0.m3u8", Array("not a playlist".utf8)) }
        // Refused by the channel's window (a second playlist for rendition x_0): counted once too.
        let conflict = #expect(throws: IngestRefusal.self) {
            try put("x_0/index.m3u8", Array(PushIngestTests.playlist(first: 0, count: 3).utf8))
        }
        #expect(conflict?.reason == .renditionConflict, "\(String(describing: conflict))")

        #expect(Self.value(metrics, #"headwater_ingest_segments_total{channel="live"}"#) == 3)
        #expect(Self.value(metrics, #"headwater_ingest_bytes_total{channel="live"}"#) == Double(3 * segment.count))
        let rejected = "headwater_ingest_rejected_total"
        #expect(Self.value(metrics, rejected + #"{channel="live",reason="wrong_token"}"#) == 1)
        #expect(Self.value(metrics, rejected + #"{channel="live",reason="malformed_playlist"}"#) == 1)
        #expect(Self.value(metrics, rejected + #"{channel="live",reason="rendition_conflict"}"#) == 1)
        #expect(ingest.counters[.renditionConflict] == 1 && ingest.counters[.wrongToken] == 1)
        // An unknown channel's name (the client's choice) never becomes a label.
        #expect(Self.value(metrics, rejected + #"{channel="",reason="unknown_channel"}"#) == 1)
        #expect(!String(decoding: metrics.exposition(channels: []), as: UTF8.self).contains("nosuch"))
        // The channel went live: its playlists were rendered, into this registry.
        #expect((Self.value(metrics, #"headwater_playlist_renders_total{kind="media"}"#) ?? 0) >= 1)
        #expect((Self.value(metrics, #"headwater_playlist_renders_total{kind="multivariant"}"#) ?? 0) >= 1)
    }

    @Test func windowedChannelCountsRefusalsOfAnySource() {
        let metrics = OriginMetrics()
        let window = LiveWindow(configuration: .init(channel: "dir", targetDuration: 2, windowSeconds: 6, runTag: "r"))
        let channel = WindowedChannel(
            name: "dir", sourceType: "directory", window: window, directory: "/nonexistent", registry: ChannelRegistry(),
            clock: ManualWallClock(), logger: Logger(label: "test"), metrics: metrics)
        channel.rejected(IngestRefusal("bad", reason: .malformedPlaylist))
        channel.rejected(IngestRefusal("bad", reason: .malformedPlaylist))
        channel.rejected(IngestRefusal("big", reason: .tooLarge))
        let rejected = "headwater_ingest_rejected_total"
        #expect(Self.value(metrics, rejected + #"{channel="dir",reason="malformed_playlist"}"#) == 2)
        #expect(Self.value(metrics, rejected + #"{channel="dir",reason="too_large"}"#) == 1)
        #expect(channel.counters[.malformedPlaylist] == 2)
    }

    @Test("a window's renderer renders and counts each playlist once per version, into its own instance")
    func renderingCountsOncePerVersion() {
        let metrics = OriginMetrics()
        var playlist = MediaPlaylistFixture.minimal
        playlist.targetDuration = 2
        var renderer = WindowRenderer(metrics: metrics)
        func version(_ n: UInt64) -> WindowVersion {
            WindowVersion(
                channel: "c", state: .live,
                multivariant: .init(model: MultivariantPlaylist(), tag: "c-master", version: 1),
                media: ["v0": .init(model: playlist, tag: "c-v0", version: n)], segments: [:], targetDuration: 2,
                status: ChannelStatus(source: "push", targetDuration: 2, windowSeconds: 6), publishedAt: 0)
        }
        let first = renderer.snapshot(of: version(1))
        let again = renderer.snapshot(of: version(1))
        let next = renderer.snapshot(of: version(2))
        #expect(first.mediaPlaylists["v0"]?.entityTag == "\"c-v0-1\"" && again.mediaPlaylists["v0"]?.entityTag == "\"c-v0-1\"")
        #expect(next.mediaPlaylists["v0"]?.entityTag == "\"c-v0-2\"")
        #expect(Self.value(metrics, #"headwater_playlist_renders_total{kind="media"}"#) == 2)
        #expect(Self.value(metrics, #"headwater_playlist_renders_total{kind="multivariant"}"#) == 1)
    }

    @Test func stallAndReloadAPI() {
        let metrics = OriginMetrics()
        // Every result is exported from the start, at 0.
        for result in OriginMetrics.ConfigReloadResult.allCases {
            #expect(Self.value(metrics, #"headwater_config_reloads_total{result="\#(result.rawValue)"}"#) == 0)
        }
        metrics.stallDetected(channel: "demo")
        metrics.stallDetected(channel: "demo")
        metrics.configReload(result: .rejected)
        #expect(Self.value(metrics, #"headwater_stalls_total{channel="demo"}"#) == 2)
        #expect(Self.value(metrics, #"headwater_config_reloads_total{result="rejected"}"#) == 1)
        #expect(Self.value(metrics, #"headwater_config_reloads_total{result="applied"}"#) == 0)
    }
}

/// The smallest valid media playlist.
enum MediaPlaylistFixture {
    static var minimal: MediaPlaylist {
        try! PlaylistParser().parseMedia(
            Array("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:2.0,\ns0.ts\n".utf8))
    }
}

@Suite("Origin metrics: stitched playlists")
struct StitchedPlaylistMetricsTests {
    @Test("served stitched playlists count under outcome ok (a series made once), refusals under their own")
    func outcomes() {
        let metrics = OriginMetrics()
        #expect(OriginMetricsTests.value(metrics, #"headwater_stitched_playlists_total{outcome="ok"}"#) == 0)
        for _ in 0..<3 { metrics.stitchedPlaylist(outcome: "ok") }
        metrics.stitchedPlaylist(outcome: "forbidden")
        #expect(OriginMetricsTests.value(metrics, #"headwater_stitched_playlists_total{outcome="ok"}"#) == 3)
        #expect(OriginMetricsTests.value(metrics, #"headwater_stitched_playlists_total{outcome="forbidden"}"#) == 1)
    }
}

/// Every labelled counter with a known label set exists, at 0, before its first event, so
/// `increase()` and `rate()` (and an alert on them) see that event.
@Suite("Origin metrics: exported from the start")
struct ZeroInitialisedMetricsTests {
    static func live(_ name: String) -> ChannelHealth {
        ChannelHealth(name: name, state: .live, targetDuration: 6, liveEdgeAge: 1_000_000)
    }

    /// The series of every channel-independent label set, and of each channel listed at a scrape.
    static func expectedZeroSeries(channels: [String]) -> [String] {
        var series = [
            #"headwater_playlist_sent_bytes_total{encoding="gzip"}"#,
            #"headwater_playlist_sent_bytes_total{encoding="identity"}"#,
            #"headwater_playlist_uncompressed_bytes_total{encoding="gzip"}"#,
            #"headwater_playlist_uncompressed_bytes_total{encoding="identity"}"#,
            #"headwater_playlist_renders_total{kind="media"}"#,
            #"headwater_playlist_renders_total{kind="multivariant"}"#,
            "headwater_http_open_connections",
            "headwater_held_requests",
        ]
        series += OriginMetrics.ConfigReloadResult.allCases.map { #"headwater_config_reloads_total{result="\#($0.rawValue)"}"# }
        series += OriginMetrics.StitchedPlaylistOutcome.allCases.map {
            #"headwater_stitched_playlists_total{outcome="\#($0.rawValue)"}"#
        }
        for channel in [""] + channels {
            series += IngestCounters.Reason.allCases.map {
                #"headwater_ingest_rejected_total{channel="\#(channel)",reason="\#($0.rawValue)"}"#
            }
        }
        for channel in channels {
            series += [
                #"headwater_ingest_segments_total{channel="\#(channel)"}"#,
                #"headwater_ingest_bytes_total{channel="\#(channel)"}"#,
                #"headwater_stalls_total{channel="\#(channel)"}"#,
                #"headwater_sessions_started_total{channel="\#(channel)"}"#,
            ]
            series += BreakEvent.invalidCueLabels.map {
                #"headwater_ad_cues_rejected_total{channel="\#(channel)",reason="\#($0)"}"#
            }
            series += ["cue", "schedule", "request"].map {
                #"headwater_ad_breaks_total{channel="\#(channel)",source="\#($0)"}"#
            }
        }
        return series
    }

    @Test("every known label set is at 0 from the first scrape; a channel added by a reload gets its own")
    func zeroSeriesFromTheStartAndAfterAReload() {
        let metrics = OriginMetrics()
        let first = String(decoding: metrics.exposition(channels: [Self.live("demo")]), as: UTF8.self)
        for series in Self.expectedZeroSeries(channels: ["demo"]) {
            #expect(OriginMetricsTests.value(in: first, series) == 0, "\(series) missing or not 0")
        }
        #expect(!first.contains(#"channel="news""#))

        // A reload adds "news": the next scrape has its series, at 0; demo's counts are kept.
        metrics.ingestRejected(channel: "demo", reason: .wrongToken)
        let second = String(
            decoding: metrics.exposition(channels: [Self.live("demo"), Self.live("news")]), as: UTF8.self)
        for series in Self.expectedZeroSeries(channels: ["news"]) {
            #expect(OriginMetricsTests.value(in: second, series) == 0, "\(series) missing or not 0")
        }
        #expect(
            OriginMetricsTests.value(in: second, #"headwater_ingest_rejected_total{channel="demo",reason="wrong_token"}"#)
                == 1)
    }

    @Test("every metric family has HELP and TYPE lines, counters end in _total, none has a unit in the middle")
    func everyFamilyIsDescribed() {
        let metrics = OriginMetrics()
        let text = String(decoding: metrics.exposition(channels: [Self.live("demo")]), as: UTF8.self)
        var help: Set<Substring> = []
        var types: [Substring: Substring] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("# ") {
            let fields = line.split(separator: " ", maxSplits: 3)
            if fields[1] == "HELP" { help.insert(fields[2]) }
            if fields[1] == "TYPE" { types[fields[2]] = fields[3] }
        }
        #expect(types.count >= 20, "\(types.keys.sorted())")
        for (name, type) in types {
            #expect(help.contains(name), "\(name) has no HELP")
            #expect((type == "counter") == name.hasSuffix("_total"), "\(name) is a \(type)")
            #expect(!name.contains("_bytes_sent") && !name.contains("_bytes_uncompressed"), "\(name)")
        }
    }

    @Test("headwater_build_info says the version and toolchain, always 1; held requests are 0")
    func buildInfo() {
        let text = String(decoding: OriginMetrics().exposition(channels: []), as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("headwater_build_info{") }
        #expect(line?.contains(#"version="\#(HeadwaterVersion.current)""#) == true, "\(line ?? "no build info")")
        #expect(line?.contains(#"swift_version="\#(OriginMetrics.swiftVersion)""#) == true)
        #expect(line?.hasSuffix(" 1.0") == true || line?.hasSuffix(" 1") == true, "\(line ?? "")")
        #expect(OriginMetricsTests.value(in: text, "headwater_held_requests") == 0)
    }

    @Test("open connections: accepted minus closed")
    func openConnections() {
        let metrics = OriginMetrics()
        for _ in 0..<3 { metrics.connectionOpened() }
        metrics.connectionClosed()
        #expect(OriginMetricsTests.value(metrics, "headwater_http_open_connections") == 2)
    }

    enum Outcome: String, CaseIterable, Sendable { case good, bad }

    @Test("labelled counters: every value's series made at 0, counted without a lookup, shared by name")
    func labelledCounters() {
        let metrics = OriginMetrics()
        let counters = metrics.counters(
            "headwater_test_outcomes_total", help: "Test.", labels: [("channel", "c")], by: "outcome",
            values: Outcome.self)
        #expect(OriginMetricsTests.value(metrics, #"headwater_test_outcomes_total{channel="c",outcome="good"}"#) == 0)
        #expect(OriginMetricsTests.value(metrics, #"headwater_test_outcomes_total{channel="c",outcome="bad"}"#) == 0)
        counters.increment(.bad)
        metrics.counters(
            "headwater_test_outcomes_total", help: "Test.", labels: [("channel", "c")], by: "outcome",
            values: Outcome.self
        ).increment(.bad, by: 2)
        #expect(OriginMetricsTests.value(metrics, #"headwater_test_outcomes_total{channel="c",outcome="bad"}"#) == 3)
        #expect(OriginMetricsTests.value(metrics, #"headwater_test_outcomes_total{channel="c",outcome="good"}"#) == 0)
    }
}

@Suite("Process metrics")
struct ProcessMetricsTests {
    /// proc(5): a command name with spaces and parentheses does not shift the fields after it.
    @Test func statLineParsedFromTheLastParenthesis() throws {
        let stat =
            "4242 (head water) (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 9 0 12345 "
            + "1048576000 25600 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0"
        let parsed = try #require(
            ProcessSample.parse(stat: stat, bootTime: 1_700_000_000, ticksPerSecond: 100, pageSize: 4096))
        #expect(parsed.cpuSeconds == 3.0)  // (250 + 50) ticks
        #expect(parsed.startTimeSeconds == 1_700_000_000 + 123.45)
        #expect(parsed.virtualBytes == 1_048_576_000)
        #expect(parsed.residentBytes == 25_600 * 4096)
        #expect(ProcessSample.parse(stat: "4242 (x) S 1 2", bootTime: 0, ticksPerSecond: 100, pageSize: 4096) == nil)
        #expect(ProcessSample.bootTime(procStat: "cpu  1 2 3\nintr 5\nbtime 1764200000\nprocesses 9\n") == 1_764_200_000)
    }

    #if os(Linux)
    @Test("process_* read from /proc at scrape time: plausible values, CPU time only grows")
    func processSeriesOnLinux() throws {
        let metrics = OriginMetrics()
        let first = String(decoding: metrics.exposition(channels: []), as: UTF8.self)
        let now = Date().timeIntervalSince1970
        let start = try #require(OriginMetricsTests.value(in: first, "process_start_time_seconds"))
        #expect(start > now - 86_400 && start <= now + 1, "started \(now - start) s ago")
        let resident = try #require(OriginMetricsTests.value(in: first, "process_resident_memory_bytes"))
        #expect(resident > 1_048_576)
        let open = try #require(OriginMetricsTests.value(in: first, "process_open_fds"))
        let max = try #require(OriginMetricsTests.value(in: first, "process_max_fds"))
        #expect(open >= 3 && open < max)
        let cpu = try #require(OriginMetricsTests.value(in: first, "process_cpu_seconds_total"))
        #expect(cpu > 0)
        // Burn a little CPU; the counter follows.
        var x: UInt64 = 1
        for i in 0..<50_000_000 { x = x &* 6364136223846793005 &+ UInt64(i) }
        #expect(x != 0)
        let second = String(decoding: metrics.exposition(channels: []), as: UTF8.self)
        #expect(try #require(OriginMetricsTests.value(in: second, "process_cpu_seconds_total")) > cpu)
    }
    #endif
}
