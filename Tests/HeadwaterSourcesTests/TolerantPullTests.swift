import AsyncHTTPClient
import Foundation
import HeadwaterConfiguration
import HeadwaterHLS
import HeadwaterRuntime
import HeadwaterSources
import HeadwaterTesting
import Logging
import NIOCore
import Testing

/// A pull source following an upstream whose playlists deviate from RFC 8216bis the way encoders
/// do: the channel goes live, serves the canonical form, counts each deviation by rule and logs
/// each rule once, however often the playlist is reloaded.
@Suite("Tolerant pull ingest", .serialized)
struct TolerantPullTests {
    /// Late MEDIA-SEQUENCE and TARGETDURATION (after PROGRAM-DATE-TIME), TAB and trailing-space
    /// EXTINF titles, a space after a comma and lower-case hex in a DATERANGE, a trailing space on
    /// a URI line.
    static let media = """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00.000Z
        #EXT-X-MEDIA-SEQUENCE:0
        #EXT-X-TARGETDURATION:2
        #EXTINF:2.000,\t
        seg0.ts\u{20}
        #EXT-X-DATERANGE:ID="promo", START-DATE="2026-11-21T17:36:02.000Z", X-COM-EXAMPLE-ID=0x1a2b
        #EXTINF:2.000,\u{20}
        seg1.ts
        #EXTINF:2.000,\t
        seg2.ts
        #EXTINF:2.000,\u{20}
        seg3.ts

        """

    static let rules: Set<IngestDeviation.Rule> = [
        .lateSequenceTag, .lateHeaderTag, .extinfTitleWhitespace, .attributeWhitespace, .lowercaseHex, .lineWhitespace,
    ]

    static func value(_ metrics: OriginMetrics, _ rule: IngestDeviation.Rule) -> Double? {
        let series = #"headwater_ingest_deviations_total{channel="live",rule="\#(rule.rawValue)"} "#
        let text = String(decoding: metrics.exposition(channels: []), as: UTF8.self)
        return text.split(separator: "\n").first { $0.hasPrefix(series) }.flatMap { Double($0.dropFirst(series.count)) }
    }

    @Test("a deviant upstream goes live, is served canonical, counted per rule and logged once per rule")
    func deviantUpstream() async throws {
        let upstream = ScriptedUpstream()
        upstream.set("/live/master.m3u8", "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=100000\nv0/index.m3u8\n")
        upstream.set("/live/v0/index.m3u8", Self.media)
        for n in 0..<4 { upstream.set("/live/v0/seg\(n).ts", Array("segment \(n);".utf8)) }
        try await upstream.start()
        let state = NSTemporaryDirectory() + "headwater-tolerant-pull-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let registry = ChannelRegistry()
        let metrics = OriginMetrics()
        let log = LogRecorder()
        let pull = HeadwaterConfiguration.Channel.PullSource(
            url: upstream.url("/live/master.m3u8"), targetDuration: 2, timeoutMilliseconds: 10_000)
        let channel = HeadwaterConfiguration.Channel(name: "live", source: .pull(pull), windowSeconds: 6)
        let source = try PullChannelSource(
            channel: channel, source: pull, stateDirectory: state, runTag: "t", registry: registry,
            clock: SystemWallClock(), logger: log.logger, httpClient: HTTPClient.shared, metrics: metrics)
        for rule in IngestDeviation.Rule.allCases { #expect(Self.value(metrics, rule) == 0, "\(rule.rawValue) from 0") }
        let task = Task { try await source.run() }
        defer { task.cancel() }

        var served: [UInt8]?
        // Generous, like the fetch timeout above: a full parallel test run (players, ffmpeg) can starve
        // this task and the source's polls and fetches for seconds (a 2 s fetch timeout failed once so).
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            // Wait for the window and for several reloads of the unchanged upstream playlist.
            if let rendered = registry.snapshot(of: "live")?.mediaPlaylists["v0"],
                case .media(let playlist)? = try? PlaylistParser().parse(Array(rendered.body.readableBytesView)),
                playlist.segments.count >= 3, source.counters.playlistsFetched >= 4
            {
                served = Array(rendered.body.readableBytesView)
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let bytes = try #require(served, "not live within 30 s: \(log.lines)")
        let playlist = try PlaylistParser().parseMedia(bytes)
        #expect(try PlaylistParser().parseTolerating(bytes).deviations.isEmpty)
        #expect(PlaylistValidator.validate(playlist).isEmpty, "\(PlaylistValidator.validate(playlist))")
        #expect(source.counters[.malformedPlaylist] == 0)
        for rule in IngestDeviation.Rule.allCases {
            let value = Self.value(metrics, rule) ?? -1
            #expect(Self.rules.contains(rule) ? value > 0 : value == 0, "\(rule.rawValue): \(value)")
        }
        for rule in Self.rules {
            let warnings = log.snapshot.filter { $0.level == .warning && $0.message.contains(rule.rawValue) }
            #expect(warnings.count == 1, "\(rule.rawValue): \(log.lines)")
        }
        #expect(source.deviations.loggedRules == Self.rules)
        await upstream.stop()
    }
}
