import Foundation
import HeadwaterCore
import HeadwaterHLS
import Logging
import Testing

/// Ingest, refusals and renders counted into an injected ``OriginMetrics`` (its own registry), so
/// the counts are exact whatever else runs in parallel.
@Suite("Origin metrics")
struct OriginMetricsTests {
    /// The value of the series written exactly as `series` (name and labels in registration order).
    static func value(_ metrics: OriginMetrics, _ series: String) -> Double? {
        let text = String(decoding: metrics.exposition(channels: []), as: UTF8.self)
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
            let upload = try ingest.beginUpload(channel: "live", path: [path], contentLength: bytes.count)
            try upload.write(bytes)
            try upload.finish()
        }
        let segment = PushIngestTests.segmentBytes
        for n in 0..<3 {
            clock.advance(seconds: 2)
            try put("x_0\(n).ts", segment)
            try put("x_0.m3u8", Array(PushIngestTests.playlist(first: 0, count: n + 1).utf8))
        }
        #expect(throws: PushError.self) { try ingest.authorize(channel: "live", authorization: "Bearer wrong") }
        #expect(throws: PushError.self) { try ingest.authorize(channel: "nosuch", authorization: "Bearer t") }
        #expect(throws: PushError.self) { try put("x_0.m3u8", Array("not a playlist".utf8)) }

        #expect(Self.value(metrics, #"headwater_ingest_segments_total{channel="live"}"#) == 3)
        #expect(Self.value(metrics, #"headwater_ingest_bytes_total{channel="live"}"#) == Double(3 * segment.count))
        let rejected = "headwater_ingest_rejected_total"
        #expect(Self.value(metrics, rejected + #"{channel="live",reason="wrong_token"}"#) == 1)
        #expect(Self.value(metrics, rejected + #"{channel="live",reason="malformed_playlist"}"#) == 1)
        // An unknown channel's name (the client's choice) never becomes a label.
        #expect(Self.value(metrics, rejected + #"{channel="",reason="unknown_channel"}"#) == 1)
        #expect(!String(decoding: metrics.exposition(channels: []), as: UTF8.self).contains("nosuch"))
        // The channel went live: its playlists were rendered, into this registry.
        #expect((Self.value(metrics, #"headwater_playlist_renders_total{kind="media"}"#) ?? 0) >= 1)
        #expect((Self.value(metrics, #"headwater_playlist_renders_total{kind="multivariant"}"#) ?? 0) >= 1)
    }

    @Test func windowedChannelCountsRefusalsOfAnySource() {
        let metrics = OriginMetrics()
        let window = PushWindow(configuration: .init(channel: "dir", targetDuration: 2, windowSeconds: 6, runTag: "r"))
        let channel = WindowedChannel(
            name: "dir", sourceType: "directory", window: window, directory: "/nonexistent", registry: ChannelRegistry(),
            clock: ManualWallClock(), logger: Logger(label: "test"), metrics: metrics)
        channel.rejected(PushError(status: 422, "bad", reason: .malformedPlaylist))
        channel.rejected(PushError(status: 422, "bad", reason: .malformedPlaylist))
        channel.rejected(PushError(status: 413, "big", reason: .tooLarge))
        let rejected = "headwater_ingest_rejected_total"
        #expect(Self.value(metrics, rejected + #"{channel="dir",reason="malformed_playlist"}"#) == 2)
        #expect(Self.value(metrics, rejected + #"{channel="dir",reason="too_large"}"#) == 1)
        #expect(channel.counters[.malformedPlaylist] == 2)
    }

    @Test func renderingCountsIntoTheTaskLocalInstance() {
        let metrics = OriginMetrics()
        var playlist = MediaPlaylistFixture.minimal
        playlist.targetDuration = 2
        OriginMetrics.$current.withValue(metrics) {
            _ = PlaylistRendering.render(playlist, tag: "t", version: 1, publishedAt: 0)
            _ = PlaylistRendering.render(playlist, tag: "t", version: 2, publishedAt: 0)
        }
        #expect(Self.value(metrics, #"headwater_playlist_renders_total{kind="media"}"#) == 2)
        #expect(Self.value(metrics, #"headwater_playlist_renders_total{kind="multivariant"}"#) == nil)
    }

    @Test func stallAndReloadAPI() {
        let metrics = OriginMetrics()
        // Every result is exported from the start, at 0.
        for result in OriginMetrics.ConfigReloadResult.allCases {
            #expect(Self.value(metrics, #"headwater_config_reloads_total{result="\#(result.rawValue)"}"#) == 0)
        }
        metrics.stallDetected(channel: "demo")
        OriginMetrics.$current.withValue(metrics) {
            OriginMetrics.stallDetected(channel: "demo")
            OriginMetrics.configReload(result: .rejected)
        }
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
