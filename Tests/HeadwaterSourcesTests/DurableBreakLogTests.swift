import Foundation
@testable import HeadwaterConfiguration
import HeadwaterHLS
@testable import HeadwaterRuntime
@testable import HeadwaterSources
import HeadwaterStitching
import HeadwaterTesting
import Logging
import Testing

/// The ad breaks of a durable channel survive a restart with its window: a viewer's stitched
/// playlists are the same as if Headwater had never stopped, even when it stops in the middle of
/// a break whose start has already left the window (a tracker starting afresh would miss it), and
/// the stitched discontinuity numbering (which counts every break since the channel started)
/// carries on.
@Suite("Durable channels: ad breaks")
struct DurableBreakLogTests {
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// What viewers saw, and the breaks the channel recorded.
    struct Run {
        var stitched: [String] = []
        var breaks: [String] = []
    }

    /// Pushes 22 segments with a 20 s break on segments 4–13 (canonical CUE-OUT/CUE-IN), three
    /// viewers reloading their stitched playlists after each; restarts after segment `restartAfter`.
    static func run(restartAfter: Int?) throws -> Run {
        let push = try DurablePush()
        let ads = try AdConfiguration.load(
            file: repository.appendingPathComponent("Config/ads.yaml").path,
            publicDirectory: repository.appendingPathComponent("Public").path, version: 1)
        let signer = try SessionSigner(secret: Array("0123456789abcdef".utf8))
        /// What `headwater serve` does at start (AdWiring) and its first tick.
        func wire() -> AdInsertion {
            let ruleBook = AdRuleBook(ads.ruleSet)
            push.registry.setBreaks(
                ChannelBreaks(channel: "live", schedule: nil, ruleBook: ruleBook, logger: Logger(label: "test")), for: "live")
            push.ingest.expire()
            return AdInsertion(registry: push.registry, ruleBook: ruleBook, signer: signer, adminToken: nil, logger: Logger(label: "test"))
        }
        var insertion = wire()
        let epoch = push.clock.now() / 1000
        var run = Run()
        var tokens: [String] = []
        for n in 0..<22 {
            try push.put("v0-\(n).ts", PushIngestTests.segmentBytes)
            try push.put("v0.m3u8", Array(AdMarkerDialect.cueOut.playlist(first: max(0, n - 3), last: n, epochMilliseconds: epoch).utf8))
            push.clock.advance(seconds: 2)
            if n == restartAfter {
                try push.restart(clean: false)
                insertion = wire()
            }
            let now = push.clock.now() / 1000
            if n == 2 {
                for device in ["tv", "phone", "other"] {
                    let master = try insertion.startSession(
                        channel: "live", query: [("device", device)],
                        headers: [(name: "X-Playback-Session-Id", value: "viewer-\(device)")], now: now
                    ).get()
                    let uri = try #require(try PlaylistParser().parseMultivariant(master.bytes).variants.first?.uri)
                    tokens.append(String(uri.split(separator: "=", maxSplits: 1)[1]))
                }
            }
            for token in tokens {
                let playlist = try insertion.stitchedPlaylist(channel: "live", rendition: "v0", token: token, now: now).get()
                // Segment names carry the run that stored them; everything else must be equal.
                let text = String(decoding: playlist.bytes, as: UTF8.self)
                    .replacing(/\/[0-9a-z]+-(\d+)\.ts/) { "/RUN-\($0.1).ts" }
                run.stitched.append("segment \(n):\n" + text)
            }
        }
        let breaks = try #require(push.registry.snapshot(of: "live")?.stitching?.breaks.breaks)
        run.breaks = breaks.map { "\($0.id) \($0.startMediaSequence) \($0.end.map { "\($0.mediaSequence)" } ?? "open")" }
        return run
    }

    @Test("a restart in the middle of a break: every viewer's stitched playlists are those of a run without restart")
    func sameStitchedPlaylists() throws {
        let expected = try Self.run(restartAfter: nil)
        #expect(expected.stitched.contains { $0.contains("/ads/") }, "ads are stitched")
        #expect(expected.breaks.count == 1)
        let restarted = try Self.run(restartAfter: 8)
        #expect(restarted.breaks == expected.breaks)
        #expect(restarted.stitched.count == expected.stitched.count)
        for (got, want) in zip(restarted.stitched, expected.stitched) where got != want {
            Issue.record("stitched playlists differ after the restart:\n\(got)\n--- without restart:\n\(want)")
            break
        }
    }
}
