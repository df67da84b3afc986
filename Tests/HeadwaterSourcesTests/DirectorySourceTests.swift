import Foundation
@testable import HeadwaterConfiguration
import HeadwaterHLS
@testable import HeadwaterLiveWindow
@testable import HeadwaterRuntime
@testable import HeadwaterSources
import Logging
import NIOCore
import Testing

/// A packager writing `-f hls` output into a folder, the way ffmpeg does (optionally with
/// `temp_file`: files written as `.tmp` and renamed into place).
struct FakePackager {
    let directory: String
    var tempFile = false
    /// A real MPEG-TS segment (the demo channel's), so probing fills CODECS.
    static let segment = PushIngestTests.segmentBytes

    init(tempFile: Bool = false) throws {
        directory = NSTemporaryDirectory() + "headwater-packager-\(UUID().uuidString)"
        self.tempFile = tempFile
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    /// Writes `bytes` to `name` (through `name.tmp` and a rename with `tempFile`).
    func write(_ name: String, _ bytes: [UInt8]) throws {
        let path = "\(directory)/\(name)"
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        if tempFile {
            try Data(bytes).write(to: URL(fileURLWithPath: path + ".tmp"))
            _ = rename(path + ".tmp", path)
        } else {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
    }

    func write(_ name: String, _ text: String) throws { try write(name, Array(text.utf8)) }

    func delete(_ name: String) { unlink("\(directory)/\(name)") }

    /// A media playlist listing `x_0{first}.ts` … (2 s each), as ffmpeg's HLS muxer writes it.
    static func playlist(first: Int, count: Int, prefix: String = "x_0") -> String {
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(first)\n"
        for n in first..<(first + count) { text += "#EXTINF:2.000000,\n\(prefix)\(n).ts\n" }
        return text
    }
}

@Suite("Directory source")
final class DirectorySourceTests {
    let clock = ManualWallClock()
    let registry = ChannelRegistry()
    let state = NSTemporaryDirectory() + "headwater-state-\(UUID().uuidString)"
    let packager: FakePackager

    init() throws { packager = try FakePackager() }

    deinit {
        packager.remove()
        try? FileManager.default.removeItem(atPath: state)
    }

    func source(
        _ packager: FakePackager? = nil, watch: DirectoryChannelSource.WatchMode = .polling, pollMilliseconds: Int = 50
    ) throws -> DirectoryChannelSource {
        let folder = (packager ?? self.packager).directory
        let directory = HeadwaterConfiguration.Channel.DirectorySource(
            path: folder, targetDuration: 2, pollIntervalMilliseconds: pollMilliseconds)
        let channel = HeadwaterConfiguration.Channel(name: "live", source: .directory(directory), windowSeconds: 6)
        return try DirectoryChannelSource(
            channel: channel, source: directory, stateDirectory: state, runTag: "t", registry: registry, clock: clock,
            logger: Logger(label: "test"), watch: watch)
    }

    /// The served media playlist of `rendition`, parsed, or `nil` while it is not served.
    func served(_ rendition: String = "x_0") -> MediaPlaylist? {
        guard let rendered = registry.snapshot(of: "live")?.mediaPlaylists[rendition],
            case .media(let playlist)? = try? PlaylistParser().parse(Array(rendered.body.readableBytesView))
        else { return nil }
        return playlist
    }

    /// The stored file behind every segment `rendition` lists (`nil` for one that is not fetchable).
    func files(_ rendition: String = "x_0") -> [SegmentFile?] {
        let segments = registry.snapshot(of: "live")?.segments[rendition] ?? [:]
        return (served(rendition)?.segments ?? []).map { segments[String($0.uri.split(separator: "/").last!)] }
    }

    func storeNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "\(state)/directory/live")) ?? []).sorted()
    }

    @Test("a segment is taken only once the playlist lists it, and a half-written one is never served")
    func listedOnly() throws {
        let source = try source()
        let segment = FakePackager.segment
        try packager.write("x_00.ts", segment)
        source.scan()
        #expect(storeNames().isEmpty, "nothing listed, nothing taken")
        try packager.write("x_01.ts", segment)
        try packager.write("x_02.ts", segment)
        try packager.write("x_03.ts", Array(segment.prefix(segment.count / 2)))  // still being written
        try packager.write("x_0.m3u8", FakePackager.playlist(first: 0, count: 3))
        clock.advance(seconds: 6)
        source.scan()
        let playlist = try #require(served(), "live once three target durations are listed")
        #expect(playlist.segments.count == 3)
        #expect(files().allSatisfy { $0?.length == Int64(segment.count) })
        #expect(storeNames().count == 3, "\(storeNames())")
        // The packager finishes x_03 and lists it.
        try packager.write("x_03.ts", segment)
        try packager.write("x_0.m3u8", FakePackager.playlist(first: 0, count: 4))
        clock.advance(seconds: 2)
        source.scan()
        #expect(served()?.segments.count == 4)
        #expect(files().allSatisfy { $0?.length == Int64(segment.count) })
        let master = try #require(registry.snapshot(of: "live")?.multivariant)
        #expect(String(buffer: master.body).contains("CODECS=\"avc1."), "probed codecs")
        // Scanning again without a change links nothing again.
        let before = storeNames()
        source.scan()
        try packager.write("x_0.m3u8", FakePackager.playlist(first: 0, count: 4) + "\n")
        source.scan()
        #expect(storeNames() == before, "the same (path, mtime, size) is not linked twice")
    }

    @Test("temp_file renames and deletions: removed segments stay fetchable (C7) after the packager deletes them")
    func tempFileAndDelete() throws {
        let packager = try FakePackager(tempFile: true)
        defer { packager.remove() }
        let source = try source(packager)
        let segment = FakePackager.segment
        var checker = ServedChecker()
        for n in 0..<12 {
            try packager.write("x_0\(n).ts", segment)
            let first = max(0, n - 4)
            try packager.write("x_0.m3u8", FakePackager.playlist(first: first, count: n - first + 1))
            if first > 0 { packager.delete("x_0\(first - 1).ts") }  // delete_segments
            clock.advance(seconds: 2)
            source.scan()
            checker.check(served(), files(), "after x_0\(n)")
        }
        #expect(checker.problems.isEmpty, "\(checker.problems)")
        #expect(checker.versions >= 8)
        // What slid out is still fetchable, and its bytes are intact though the packager deleted it.
        let fetchable = registry.snapshot(of: "live")?.segments["x_0"] ?? [:]
        #expect(fetchable.count > served()!.segments.count, "removed segments kept for C7")
        for file in fetchable.values {
            #expect(FileManager.default.contents(atPath: file.path)?.count == segment.count)
        }
        #expect(source.counters.encoderRestarts == 0)
    }

    @Test("a playlist caught mid-write is counted, never published, and read again when it changes")
    func midWritePlaylist() throws {
        let source = try source()
        for n in 0..<3 { try packager.write("x_0\(n).ts", FakePackager.segment) }
        try packager.write("x_0.m3u8", FakePackager.playlist(first: 0, count: 3))
        source.scan()
        let published = try #require(served())
        // Truncated after an EXTINF: the next segment's URI is not written yet.
        try packager.write("x_03.ts", FakePackager.segment)
        let full = FakePackager.playlist(first: 0, count: 4)
        try packager.write("x_0.m3u8", String(full.dropLast("x_03.ts\n".count)))
        source.scan()
        source.scan()
        #expect(source.counters[.malformedPlaylist] == 1, "counted once, not at every scan")
        #expect(served() == published, "nothing published changed")
        try packager.write("x_0.m3u8", full)
        source.scan()
        #expect(served()?.segments.count == 4)
    }

    @Test("byte ranges of a growing single file: every listed range lies inside its stored file")
    func growingSingleFile() throws {
        let source = try source()
        let segment = FakePackager.segment
        var text = "#EXTM3U\n#EXT-X-VERSION:4\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n"
        try packager.write("x.ts", [])
        let file = try #require(FileHandle(forWritingAtPath: "\(packager.directory)/x.ts"))
        defer { try? file.close() }
        for n in 0..<5 {
            try file.seekToEnd()
            try file.write(contentsOf: n == 0 ? segment : Array(segment.dropFirst(1000)))
            text += "#EXTINF:2.000000,\n#EXT-X-BYTERANGE:\(segment.count)@\(n * segment.count)\nx.ts\n"
            try packager.write("x.m3u8", text)
            try file.write(contentsOf: segment.prefix(1000))  // the next segment is being written already
            clock.advance(seconds: 2)
            source.scan()
        }
        let playlist = try #require(served("x"))
        #expect(playlist.segments.count == 4, "a window of 3 target durations plus a segment")
        #expect(playlist.segments.first?.byteRange?.offset == UInt64(segment.count), "the first segment slid out")
        for (segment, file) in zip(playlist.segments, files("x")) {
            let range = try #require(segment.byteRange)
            let file = try #require(file)
            #expect(range.offset != nil, "explicit offsets")
            #expect((range.offset ?? 0) + range.length <= UInt64(file.length), "\(range) within \(file.length)")
        }
    }

    @Test(
        "the running source follows a packager, subdirectories created later included",
        arguments: [DirectoryChannelSource.WatchMode.inotify, .polling])
    func follows(mode: DirectoryChannelSource.WatchMode) async throws {
        // A long poll interval: with inotify, events (not rescans) must drive it.
        let source = try source(watch: mode, pollMilliseconds: mode == .inotify ? 10_000 : 50)
        let task = Task { try await source.run() }
        defer { task.cancel() }
        try await Task.sleep(for: .milliseconds(200))
        for n in 0..<4 {
            try packager.write("v0/seg\(n).ts", FakePackager.segment)
            try packager.write(
                "v0/index.m3u8", FakePackager.playlist(first: 0, count: n + 1, prefix: "seg"))
            clock.advance(seconds: 2)
            try await Task.sleep(for: .milliseconds(150))
        }
        var listed = 0
        for _ in 0..<50 {
            listed = served("v0")?.segments.count ?? 0
            if listed == 4 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(listed == 4, "\(mode): listed \(listed)")
        task.cancel()
        _ = try? await task.value
        #expect(!FileManager.default.fileExists(atPath: "\(state)/directory/live"), "store removed at the end")
    }
}

/// Checks consecutive served versions of one rendition: valid live updates (C1–C6), everything
/// listed fetchable from an intact file (B14).
struct ServedChecker {
    var previous: MediaPlaylist?
    var problems: [String] = []
    var versions = 0

    mutating func check(_ playlist: MediaPlaylist?, _ files: [SegmentFile?], _ label: String) {
        guard let playlist else { return }
        if let previous, previous != playlist {
            versions += 1
            for issue in LiveUpdateChecker.check(previous: previous, next: playlist) where issue.severity == .error {
                problems.append("\(label): \(issue)")
            }
        }
        for (segment, file) in zip(playlist.segments, files) where !segment.tags.gap {
            if file.map({ FileManager.default.fileExists(atPath: $0.path) }) != true {
                problems.append("\(label): \(segment.uri) listed but not fetchable")
            }
        }
        previous = playlist
    }
}
