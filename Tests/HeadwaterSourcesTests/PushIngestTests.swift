import Foundation
import HeadwaterConfiguration
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterSources
import Logging
import NIOCore
import Synchronization
import Testing

/// A wall clock the test moves.
final class ManualWallClock: WallClock {
    private let microseconds: Atomic<Int64>
    init(_ start: Int64 = 1_795_282_560_000_000) { microseconds = Atomic(start) }
    func now() -> Int64 { microseconds.load(ordering: .relaxed) }
    func advance(seconds: Double) { microseconds.add(Int64(seconds * 1_000_000), ordering: .relaxed) }
}

/// PushIngest against a real temporary state directory.
@Suite("Push ingest")
final class PushIngestTests {
    static let token = "s3cret-token"
    /// A real MPEG-TS segment (the demo channel's), so probing fills CODECS.
    static let segmentBytes = Array(
        FileManager.default.contents(
            atPath: demoPackagePath.replacingOccurrences(of: "master.m3u8", with: "v0/seg-00000.ts"))!)

    let clock = ManualWallClock()
    let registry = ChannelRegistry()
    let state: String
    let ingest: PushIngest

    init(
        environment: [String: String] = ["HEADWATER_INGEST_TOKEN": PushIngestTests.token], maxUploadBytes: Int = 1 << 20
    ) throws {
        state = NSTemporaryDirectory() + "headwater-push-\(UUID().uuidString)"
        var configuration = HeadwaterConfiguration()
        configuration.server.stateDirectory = state
        configuration.channels = [
            .init(
                name: "live", source: .push(.init(targetDuration: 2, maxUploadBytes: maxUploadBytes)), windowSeconds: 6)
        ]
        ingest = try PushIngest(
            configuration: configuration, registry: registry, clock: clock, logger: Logger(label: "test"),
            environment: environment)
    }

    deinit { try? FileManager.default.removeItem(atPath: state) }

    var directory: String { "\(state)/push/live" }

    /// Files in the channel's directory.
    func storedFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    func put(_ path: String, _ bytes: [UInt8]) throws { try ingest.putWhole(channel: "live", path: path, bytes) }

    func put(_ path: String, _ text: String) throws { try put(path, Array(text.utf8)) }

    static func playlist(first: Int, count: Int) -> String {
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(first)\n"
        for n in first..<(first + count) { text += "#EXTINF:2.000,\nx_0\(n).ts\n" }
        return text
    }

    /// Uploads segment `n` and the playlist listing `first…n`, one segment duration later.
    func pushSegment(_ n: Int, first: Int = 0) throws {
        clock.advance(seconds: 2)
        try put("x_0\(n).ts", Self.segmentBytes)
        try put("x_0.m3u8", Self.playlist(first: first, count: n - first + 1))
    }

    func expectError(_ kind: Refusal.Kind, containing text: String = "", _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected \(kind)")
        } catch let error as IngestRefusal {
            #expect(error.kind == kind, "\(error)")
            #expect(text.isEmpty || error.message.contains(text), "\(error.message)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("PUT segments and playlists are listed, served from disk, and described in the multivariant playlist")
    func listed() throws {
        #expect(registry.snapshot(of: "live")?.state == .starting)
        try pushSegment(0)
        try pushSegment(1)
        #expect(registry.snapshot(of: "live")?.state == .starting, "live once the window lasts 3×TD")
        try pushSegment(2)
        let snapshot = try #require(registry.snapshot(of: "live"))
        #expect(snapshot.state == .live)
        let rendered = try #require(snapshot.mediaPlaylists["x_0"])
        let playlist = try PlaylistParser().parseMedia(Array(rendered.body.readableBytesView))
        #expect(playlist.targetDuration == 2 && playlist.segments.count == 3)
        let name = try #require(playlist.segments.first?.uri.split(separator: "/").last.map(String.init))
        let file = try #require(snapshot.segments["x_0"]?[name])
        #expect(Array(FileManager.default.contents(atPath: file.path)!) == Self.segmentBytes)
        #expect(file.length == Int64(Self.segmentBytes.count) && file.contentType == "video/mp2t")
        let master = try PlaylistParser().parseMultivariant(
            Array(try #require(snapshot.multivariant).body.readableBytesView))
        #expect(master.variants.map(\.uri) == ["x_0.m3u8"])
        #expect(master.variants.first?.codecs?.first?.hasPrefix("avc1.") == true)
        #expect(!storedFiles().contains { $0.hasSuffix(".part") })
    }

    @Test("an aborted or truncated upload lists nothing and leaves no file")
    func aborted() throws {
        let upload = try ingest.beginUpload(channel: "live", path: ["x_00.ts"], contentLength: Self.segmentBytes.count)
        try ingest.write(Array(Self.segmentBytes.prefix(1000)), to: upload)
        #expect(storedFiles().count == 1)  // the partial file
        ingest.abort(upload)
        #expect(storedFiles().isEmpty)
        expectError(.badRequest, containing: "1000 of") {
            let truncated = try ingest.beginUpload(
                channel: "live", path: ["x_00.ts"], contentLength: Self.segmentBytes.count)
            try ingest.write(Array(Self.segmentBytes.prefix(1000)), to: truncated)
            try ingest.finish(truncated)
        }
        try put("x_0.m3u8", Self.playlist(first: 0, count: 1))
        #expect(storedFiles().isEmpty)
        #expect(registry.snapshot(of: "live")?.state == .starting)
        #expect(ingest.counters[.truncated] == 2)
    }

    @Test("a malformed playlist is refused with its line and changes nothing published")
    func malformed() throws {
        for n in 0..<3 { try pushSegment(n) }
        let before = try #require(registry.snapshot(of: "live")?.mediaPlaylists["x_0"])
        try put("x_03.ts", Self.segmentBytes)
        expectError(.unprocessable, containing: "line 5") {
            try put("x_0.m3u8", "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nx_00.ts\n#EXTINF:abc,\nx_01.ts\n")
        }
        let after = try #require(registry.snapshot(of: "live")?.mediaPlaylists["x_0"])
        #expect(after.entityTag == before.entityTag && after.body == before.body)
        #expect(ingest.counters[.malformedPlaylist] == 1)
    }

    @Test("credentials: 401 without a bearer token, 403 with a wrong one, 404 for an unknown channel")
    func credentials() throws {
        try ingest.authorize(channel: "live", authorization: "Bearer \(Self.token)")
        try ingest.authorize(channel: "live", authorization: "bearer  \(Self.token)")
        expectError(.unauthorized) { try ingest.authorize(channel: "live", authorization: nil) }
        expectError(.unauthorized) { try ingest.authorize(channel: "live", authorization: "Basic dXNlcjpwYXNz") }
        expectError(.forbidden, containing: "wrong") {
            try ingest.authorize(channel: "live", authorization: "Bearer \(Self.token)x")
        }
        expectError(.forbidden) { try ingest.authorize(channel: "live", authorization: "Bearer s3cret") }
        expectError(.notFound) { try ingest.authorize(channel: "other", authorization: "Bearer \(Self.token)") }
        #expect(ingest.counters[.missingCredentials] == 2 && ingest.counters[.wrongToken] == 2)
    }

    @Test("without its token variable a channel refuses every upload with 403")
    func disabled() throws {
        let disabled = try PushIngestTests(environment: [:])
        expectError(.forbidden, containing: "push ingest disabled: HEADWATER_INGEST_TOKEN is not set") {
            try disabled.ingest.authorize(channel: "live", authorization: "Bearer \(Self.token)")
        }
    }

    @Test(
        "hostile paths are refused with 400, unknown types with 415",
        arguments: [
            ["..", "etc", "passwd.ts"], ["v0", "..", "..", "x.ts"], ["", "x.ts"], ["v0", "", "x.ts"], ["x\u{0}.ts"],
            ["."], ["a\\b.ts"], [],
        ])
    func hostilePaths(_ path: [String]) throws {
        expectError(.badRequest) { _ = try ingest.beginUpload(channel: "live", path: path, contentLength: 10) }
        expectError(.badRequest) { try ingest.delete(channel: "live", path: path) }
        #expect(storedFiles().isEmpty)
    }

    @Test("an unknown file type is refused with 415")
    func unsupportedType() {
        expectError(.unsupportedMediaType) { _ = try ingest.beginUpload(channel: "live", path: ["run.sh"], contentLength: 10) }
    }

    @Test("an upload over max_upload_bytes is refused with 413, declared or streamed")
    func oversized() throws {
        expectError(.tooLarge) {
            _ = try ingest.beginUpload(channel: "live", path: ["x_00.ts"], contentLength: (1 << 20) + 1)
        }
        let upload = try ingest.beginUpload(channel: "live", path: ["x_00.ts"], contentLength: nil)
        try ingest.write([UInt8](repeating: 0x47, count: 1 << 20), to: upload)
        expectError(.tooLarge) { try ingest.write([0x47], to: upload) }
        #expect(storedFiles().isEmpty)
        expectError(.tooLarge) { _ = try ingest.beginUpload(channel: "live", path: ["x.m3u8"], contentLength: (1 << 20) + 1) }
    }

    @Test("a DELETE before the C7 deadline keeps the file; expiry removes it after")
    func deleteKeepsUntilDeadline() throws {
        for n in 0..<6 { try pushSegment(n, first: max(0, n - 3)) }
        let snapshot = try #require(registry.snapshot(of: "live"))
        let playlist = try PlaylistParser().parseMedia(Array(snapshot.mediaPlaylists["x_0"]!.body.readableBytesView))
        #expect(playlist.effectiveMediaSequence >= 1, "segment 0 slid out")
        // Segment 0 is the lowest MSN still fetchable (numbers start from the wall clock).
        func msn(_ name: String) -> UInt64 { UInt64(name.split(separator: "-").last!.dropLast(3)) ?? .max }
        let first = try #require(snapshot.segments["x_0"]?.min { msn($0.key) < msn($1.key) }?.value)
        // The encoder deletes segment 0 at once: it stays fetchable and on disk.
        try ingest.delete(channel: "live", path: ["x_00.ts"])
        #expect(FileManager.default.fileExists(atPath: first.path))
        #expect(registry.snapshot(of: "live")?.segments["x_0"]?.values.contains(first) == true)
        // Past its deadline (its duration + the playlist's), it goes.
        clock.advance(seconds: 30)
        ingest.expire()
        #expect(!FileManager.default.fileExists(atPath: first.path))
        #expect(registry.snapshot(of: "live")?.segments["x_0"]?.values.contains(first) == false)
    }

    @Test("a pushed multivariant playlist is published with URIs pointing at Headwater's renditions")
    func pushedMultivariant() throws {
        try put(
            "master.m3u8",
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=900000,CODECS=\"avc1.64001e,mp4a.40.2\"\nx_0.m3u8\n")
        for n in 0..<3 { try pushSegment(n) }
        let master = try PlaylistParser().parseMultivariant(
            Array(try #require(registry.snapshot(of: "live")?.multivariant).body.readableBytesView))
        #expect(master.variants.map(\.uri) == ["x_0.m3u8"] && master.variants[0].bandwidth == 900_000)
    }

    @Test("without server.state, uploads go to a temporary directory that is removed at shutdown")
    func temporaryState() async throws {
        var configuration = HeadwaterConfiguration()
        configuration.channels = [.init(name: "live", source: .push(.init(targetDuration: 2)), windowSeconds: 6)]
        let ingest = try PushIngest(
            configuration: configuration, registry: registry, clock: clock, logger: Logger(label: "test"),
            environment: ["HEADWATER_INGEST_TOKEN": Self.token])
        #expect(FileManager.default.fileExists(atPath: ingest.stateDirectory + "/push/live"))
        let upload = try ingest.beginUpload(channel: "live", path: ["x_00.ts"], contentLength: nil)
        try ingest.write(Self.segmentBytes, to: upload)
        try ingest.finish(upload)
        let task = Task { try await ingest.run() }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        try await task.value
        #expect(!FileManager.default.fileExists(atPath: ingest.stateDirectory))
    }
}

extension PushIngest {
    /// One whole upload of `bytes` to `path` (`v1/seg1.ts`) of `channel`, as one PUT does it.
    func putWhole(channel: String, path: String, _ bytes: [UInt8]) throws {
        let upload = try beginUpload(channel: channel, path: path.split(separator: "/").map(String.init), contentLength: bytes.count)
        try write(bytes, to: upload)
        try finish(upload)
    }
}
