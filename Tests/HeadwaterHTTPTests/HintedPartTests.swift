import Foundation
import HeadwaterConfiguration
import HeadwaterHLS
@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterSources
import HeadwaterTesting
import Logging
import NIOCore
import Synchronization
import Testing

/// A request for the part a playlist hints, made before the part exists (HLS-RULES F5): held until a
/// version lists it, then answered whole from its file; a hint withdrawn unlisted is a 404, a name
/// never hinted a 404 at once, and a part never published a 503 after three target durations.
@Suite("Hinted parts (F5)", .serialized)
final class HintedPartTests: Sendable {
    let directory = NSTemporaryDirectory() + "headwater-hinted-\(UUID().uuidString)"

    init() throws { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(atPath: directory) }

    static func bytes(_ msn: UInt64, _ part: Int) -> [UInt8] {
        [UInt8](repeating: UInt8(truncatingIfNeeded: Int(msn) * 8 + part), count: 3_000 + part)
    }

    /// Channel `demo`, rendition `v1`: segment `last` complete, `openParts` parts of `last + 1`
    /// listed (each with its file), and the hint `hint` (part `openParts` of `last + 1` by default).
    func snapshot(last: UInt64, openParts: Int, hint: String? = nil, targetDuration: Int = 4) throws -> ChannelSnapshot {
        var playlist = MediaPlaylist(targetDuration: targetDuration, mediaSequence: last - 3)
        for msn in (last - 3)...last {
            var segment = MediaSegment(uri: "v1/\(msn).ts", duration: .seconds(1))
            if msn == last - 3 { segment.tags.programDateTime = ProgramDateTime(millisecondsSinceEpoch: 1_700_000_000_000) }
            playlist.segments.append(segment)
        }
        var files: [String: SegmentFile] = [:]
        for part in 0..<openParts {
            let name = "\(last + 1).\(part).ts"
            playlist.trailingTags.parts.append(PartialSegment(uri: "v1/\(name)", duration: .milliseconds(250), independent: part == 0))
            let path = "\(directory)/\(name)"
            let content = Self.bytes(last + 1, part)
            if !FileManager.default.fileExists(atPath: path) {
                try Data(content).write(to: URL(fileURLWithPath: path))
            }
            files[name] = segmentFile(path: path, length: content.count, tag: name)
        }
        playlist.partInformation = PartInformation(partTarget: .milliseconds(250))
        playlist.preloadHints = [
            PreloadHint(attributes: [
                Attribute("TYPE", .token("PART")), Attribute("URI", .quoted(hint ?? "v1/\(last + 1).\(openParts).ts")),
            ])
        ]
        let rendered = PlaylistRendering.render(
            playlist, tag: "demo-v1", version: last * 16 + UInt64(openParts), publishedAt: 1_700_000_000)
        return ChannelSnapshot(
            name: "demo", state: .live, multivariant: nil, mediaPlaylists: ["v1": rendered], segments: ["v1": files],
            targetDuration: targetDuration)
    }

    @Test func theHintedPartIsHeldUntilItsPublishThenSentWhole() async throws {
        let registry = ChannelRegistry()
        registry.publish(try snapshot(last: 100, openParts: 1))
        try await withServer(content: registry) { port in
            let publishedAt = Mutex<ContinuousClock.Instant?>(nil)
            async let held = BlockingReloadTests.get("/live/demo/v1/101.1.ts", port: port)
            try await Task.sleep(for: .milliseconds(300))
            // A version whose hint is still this part leaves it held.
            registry.publish(try self.snapshot(last: 100, openParts: 1))
            try await Task.sleep(for: .milliseconds(300))
            publishedAt.withLock { $0 = .now }
            registry.publish(try self.snapshot(last: 100, openParts: 2))
            let (response, at) = try await held
            let published = try #require(publishedAt.withLock { $0 })
            #expect(response.status == 200)
            let whole = response.body == Self.bytes(101, 1)
            #expect(whole, "the whole part, as published: \(response.body.count) bytes, \(response.text.prefix(80))")
            #expect(at >= published, "answered \(published - at) before the part was published")
            #expect(at - published < .seconds(1), "answered \(at - published) after the publish")
        }
    }

    @Test func aHintedByteRangeIsAnsweredWithTheRangeOnceThePartExists() async throws {
        // hls.js asks for an open-ended range from the hint's start (RFC 8673's 2^53 − 1).
        let registry = ChannelRegistry()
        registry.publish(try snapshot(last: 100, openParts: 1))
        try await withServer(content: registry) { port in
            async let held = RawClient.connect(port: port).run { inbound, outbound in
                var inbound = inbound
                try await outbound.write(
                    ByteBuffer(string: "GET /live/demo/v1/101.1.ts HTTP/1.1\r\nHost: o\r\nRange: bytes=1000-9007199254740991\r\n\r\n"))
                var bytes: [UInt8] = []
                return try #require(try await inbound.readResponses(1, into: &bytes).first)
            }
            try await Task.sleep(for: .milliseconds(200))
            registry.publish(try self.snapshot(last: 100, openParts: 2))
            let response = try await held
            #expect(response.status == 206)
            #expect(response.header("Content-Range") == "bytes 1000-3000/3001")
            let range = response.body == Array(Self.bytes(101, 1)[1000...])
            #expect(range, "the part from byte 1000: \(response.body.count) bytes, \(response.text.prefix(80))")
        }
    }

    @Test func aWithdrawnHintIsA404AndANeverHintedNameA404AtOnce() async throws {
        let registry = ChannelRegistry()
        registry.publish(try snapshot(last: 100, openParts: 1))
        try await withServer(content: registry) { port in
            let asked = ContinuousClock.now
            let (never, answered) = try await BlockingReloadTests.get("/live/demo/v1/101.2.ts", port: port)
            #expect(never.status == 404)
            #expect(answered - asked < .seconds(1), "a name not hinted is not held")

            async let held = BlockingReloadTests.get("/live/demo/v1/101.1.ts", port: port)
            try await Task.sleep(for: .milliseconds(300))
            // The hint moves elsewhere (an early return from an ad, an encoder restart) with the
            // hinted part never listed: withdrawn, so 404 (F5).
            registry.publish(try self.snapshot(last: 100, openParts: 1, hint: "v1/ad-0.0.ts"))
            let (withdrawn, _) = try await held
            #expect(withdrawn.status == 404)
            #expect(withdrawn.text.contains("\"101.1.ts\""), "\(withdrawn.text)")
        }
    }

    @Test func aHintedPartNeverPublishedGets503AfterThreeTargetDurations() async throws {
        let registry = ChannelRegistry()
        registry.publish(try snapshot(last: 100, openParts: 1, targetDuration: 1))
        try await withServer(content: registry) { port in
            let started = ContinuousClock.now
            let (response, at) = try await BlockingReloadTests.get("/live/demo/v1/101.1.ts", port: port)
            #expect(response.status == 503)
            #expect(response.text == "503 Service Unavailable: the hinted part \"101.1.ts\" was not published within 3 target durations\n")
            #expect(response.header("Cache-Control") == "public, max-age=1")  // a segment error: 1 × TD (F19)
            #expect(at - started >= .seconds(3), "answered after \(at - started), before 3 × TD")
            #expect(at - started < .seconds(6), "held \(at - started) past its deadline")
        }
    }

    @Test func anLLEncodersHintedPartIsServedOnceItsUploadCompletes() async throws {
        // The real push path: a synthetic LL encoder through PushIngest, a player's GET of the part
        // Headwater's playlist hints, made before the encoder uploads it.
        var configuration = HeadwaterConfiguration()
        configuration.server.stateDirectory = directory + "/state"
        configuration.channels = [
            .init(name: "live", source: .push(.init(targetDuration: 2, maxUploadBytes: 1 << 20)), windowSeconds: 8)
        ]
        let registry = ChannelRegistry()
        let clock = SteppingClock(1_795_282_560_000_000)
        let ingest = try PushIngest(
            configuration: configuration, registry: registry, clock: clock, logger: quietLogger,
            environment: ["HEADWATER_INGEST_TOKEN": "token"])
        var encoder = LowLatencyPushEncoder()
        @Sendable func upload(_ uploads: [(path: String, bytes: [UInt8])]) throws {
            clock.advance(milliseconds: 500)
            for (path, bytes) in uploads {
                let upload = try ingest.beginUpload(channel: "live", path: path.split(separator: "/").map(String.init), contentLength: bytes.count)
                try ingest.write(bytes, to: upload)
                try ingest.finish(upload)
            }
        }
        for _ in 0..<(4 * 4 + 1) { try upload(encoder.nextPart()) }
        let rendered = try #require(registry.snapshot(of: "live")?.mediaPlaylists["v0"])
        let hint = try #require(try PlaylistParser().parseMedia(Array(rendered.body.readableBytesView)).preloadHints.first?.uri)
        // The encoder's next part, whose name Headwater hints (F4): segment 4, part 1.
        let expected = LowLatencyPushEncoder.partBytes(encoder.open, encoder.openParts)
        let next = encoder.nextPart()
        try await withServer(content: registry) { port in
            async let held = BlockingReloadTests.get("/live/live/\(hint)", port: port)
            try await Task.sleep(for: .milliseconds(300))
            let uploaded = ContinuousClock.now
            try upload(next)
            let (response, at) = try await held
            #expect(response.status == 200, "\(response.text.prefix(120))")
            let whole = response.body == expected
            #expect(whole, "the encoder's part: \(response.body.count) bytes")
            #expect(at >= uploaded && at - uploaded < .seconds(1), "answered \(at - uploaded) after the upload")
            let listed = try PlaylistParser().parseMedia(
                Array(registry.snapshot(of: "live")!.mediaPlaylists["v0"]!.body.readableBytesView))
            #expect(listed.trailingTags.parts.last?.uri == hint, "the hinted URI is the one listed (F4)")
        }
        try? FileManager.default.removeItem(atPath: directory + "/state")
    }
}
