import Foundation
import HeadwaterConfiguration
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
@testable import HeadwaterSources
import HeadwaterStitching
import HeadwaterTesting
import Logging
import Testing

/// `{channel}.window.json`, the saved state of a durable channel: what it says, and what a start does with a
/// file that is unknown, torn, or whose segment files are gone.
@Suite("Durable channels: the state file")
struct DurableStateFileTests {
    /// A channel with six segments pushed (four listed, two removed and still fetchable), saved.
    static func saved() throws -> DurablePush {
        let push = try DurablePush()
        for number in 0..<6 { try push.encode(number) }
        push.windowed.flushState()
        return push
    }

    static func file(_ push: DurablePush) -> String { ChannelStateFile.path(of: push.directory) }

    static func json(_ push: DurablePush) throws -> [String: Any] {
        let data = try #require(FileManager.default.contents(atPath: file(push)))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("the file states its version and lists each segment: number, discontinuity number, date, duration, file, size, ETag")
    func contents() throws {
        let push = try Self.saved()
        let json = try Self.json(push)
        #expect(json["version"] as? Int == 1)
        let window = try #require(json["window"] as? [String: Any])
        let rendition = try #require((window["renditions"] as? [[String: Any]])?.first)
        #expect(rendition["name"] as? String == "x_0")
        let listed = try #require(push.parsedPlaylist)
        let served = try #require(push.playlist).replacingOccurrences(of: "#EXT-X-VERSION:3\n", with: "")
        #expect(rendition["playlist"] as? String == served, "the playlist is kept as M3U8 (its version is computed when served)")
        let segments = try #require(rendition["segments"] as? [[String: Any]])
        #expect(segments.count == listed.segments.count && segments.count == 4)
        for (index, segment) in segments.enumerated() {
            #expect(segment["msn"] as? UInt64 == listed.mediaSequenceNumber(at: index))
            #expect(segment["dsn"] as? UInt64 == listed.discontinuitySequenceNumbers()[index])
            #expect(segment["uri"] as? String == listed.segments[index].uri)
            #expect(segment["duration"] as? Int == 2_000_000)
            #expect(ProgramDateTime(iso8601: segment["date"] as? String ?? "") != nil)
            let file = try #require(segment["file"] as? [String: Any])
            #expect(file["length"] as? Int == PushIngestTests.segmentBytes.count)
            #expect((file["entityTag"] as? String)?.hasPrefix("\"") == true)
            let path = try #require(file["path"] as? String)
            #expect(!path.hasPrefix("/"), "stored paths are relative to the store directory: \(path)")
            #expect(FileManager.default.fileExists(atPath: push.directory + "/" + path))
        }
        #expect((rendition["retained"] as? [Any])?.count == 2, "removed segments still fetchable (C7)")
        #expect(!FileManager.default.fileExists(atPath: Self.file(push) + ".tmp"))
    }

    @Test("encoded, decoded and encoded again, the file is the same; restored, the playlists are the same bytes")
    func roundTrip() throws {
        let push = try Self.saved()
        let bytes = try #require(FileManager.default.contents(atPath: Self.file(push)))
        let decoded = try ChannelStateFile.decode(bytes)
        #expect(try decoded.encoded() == bytes)
        let before = (push.playlist, push.multivariant)
        try push.restart()
        #expect(push.playlist != nil && push.playlist == before.0)
        #expect(push.multivariant != nil && push.multivariant == before.1)
        // The restored window saves itself again: the same window, a later time.
        push.windowed.flushState()
        let again = try ChannelStateFile.decode(try #require(FileManager.default.contents(atPath: Self.file(push))))
        #expect(again.window.renditions == decoded.window.renditions)
        #expect(again.window.savedAt > decoded.window.savedAt)
    }

    @Test("a file of an unknown version is refused with a clear log line; the channel starts empty")
    func unknownVersion() throws {
        let push = try Self.saved()
        var json = try Self.json(push)
        json["version"] = 2
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: Self.file(push)))
        try push.restart()
        #expect(push.log.count("format version 2; this build reads version 1", atLeast: .error) == 1, "\(push.log.lines)")
        #expect(push.registry.snapshot(of: "live")?.state == .starting && push.playlist == nil)
        #expect(push.storedFiles.filter { $0.hasSuffix(".ts") }.isEmpty, "the unused files of the earlier run are removed")
        #expect(throws: ChannelStateFile.Problem.self) { try ChannelStateFile.decode(Data(#"{"window":{}}"#.utf8)) }
    }

    @Test("a torn file (cut short, or not JSON) is refused with a clear log line; the channel starts empty")
    func tornFile() throws {
        for damage in ["cut", "garbage"] {
            let push = try Self.saved()
            let bytes = try #require(FileManager.default.contents(atPath: Self.file(push)))
            let damaged = damage == "cut" ? bytes.prefix(bytes.count / 2) : Data("\u{0}\u{0}garbage".utf8)
            try damaged.write(to: URL(fileURLWithPath: Self.file(push)))
            try push.restart()
            #expect(push.log.count("the saved window cannot be used", atLeast: .error) == 1, "\(damage): \(push.log.lines)")
            #expect(push.registry.snapshot(of: "live")?.state == .starting, "\(damage)")
            // The channel works as a new one, and saves a good file again.
            for number in 0..<3 { try push.encode(number) }
            #expect(push.parsedPlaylist?.segments.count == 3, "\(damage)")
            push.windowed.flushState()
            #expect(try ChannelStateFile.read(from: push.directory)?.window.renditions.first?.segments.count == 3)
        }
    }

    @Test("a listed segment whose file is gone or torn is never listed: out of the head, EXT-X-GAP behind it")
    func missingSegmentFiles() throws {
        let push = try Self.saved()
        let before = try #require(push.parsedPlaylist)
        let files = try #require(push.registry.snapshot(of: "live")?.segments["x_0"])
        func path(_ index: Int) throws -> String {
            let name = try #require(before.segments[index].uri.split(separator: "/").last.map(String.init))
            return try #require(files[name]?.path)
        }
        try FileManager.default.removeItem(atPath: try path(0))  // the head: gone
        try Data(PushIngestTests.segmentBytes.prefix(100)).write(to: URL(fileURLWithPath: try path(2)))  // torn
        try push.restart()
        let after = try #require(push.parsedPlaylist)
        #expect(after.effectiveMediaSequence == before.effectiveMediaSequence + 1, "the head went")
        #expect(after.segments.map(\.uri) == Array(before.segments.dropFirst().map(\.uri)), "the same URIs, numbers kept")
        #expect(after.segments.map(\.tags.gap) == [false, true, false], "the torn one behind the head is a gap")
        let fetchable = try #require(push.registry.snapshot(of: "live")?.segments["x_0"])
        #expect(fetchable[String(after.segments[1].uri.split(separator: "/").last!)] == nil, "and cannot be fetched")
        #expect(push.log.count("missing or torn", atLeast: .warning) == 1, "\(push.log.lines)")
    }

    @Test("at start, a half-written upload is removed and never listed; a segment past its retention goes, one within it stays")
    func leftovers() throws {
        let push = try Self.saved()
        let saved = try #require(try ChannelStateFile.read(from: push.directory))
        let retained = try #require(saved.window.renditions.first?.retained)
        #expect(retained.count == 2)
        let part = push.directory + "/zz9-17.ts.part"
        try Data(PushIngestTests.segmentBytes.prefix(1000)).write(to: URL(fileURLWithPath: part))
        let stray = push.directory + "/zz9-18.ts"  // an earlier run's file no window refers to
        try Data(PushIngestTests.segmentBytes).write(to: URL(fileURLWithPath: stray))
        let operatorFile = push.directory + "/notes.txt"
        try Data("mine".utf8).write(to: URL(fileURLWithPath: operatorFile))
        // Restart between the two deadlines: the first removed segment's retention ended, not the second's.
        let deadlines = retained.map(\.deadline).sorted()
        push.clock.advance(seconds: Double(deadlines[0] - push.clock.now()) / 1_000_000 + 0.5)
        try push.restart()
        #expect(!FileManager.default.fileExists(atPath: part) && !FileManager.default.fileExists(atPath: stray))
        #expect(FileManager.default.fileExists(atPath: operatorFile), "what an operator put there stays")
        let restored = try #require(push.registry.snapshot(of: "live")?.segments["x_0"])
        let gone = try #require(retained.first { $0.deadline == deadlines[0] })
        let kept = try #require(retained.first { $0.deadline == deadlines[1] })
        #expect(restored[gone.name] == nil, "no longer fetchable")
        #expect(restored[kept.name] != nil, "still fetchable until its deadline (C7)")
        #expect(push.parsedPlaylist?.segments.count == 4, "the listed ones all stay")
        // Its file goes once nothing refers to it (its upload is forgotten after the window and
        // four target durations); the other's stays.
        push.ingest.expire()
        #expect(!FileManager.default.fileExists(atPath: push.directory + "/" + gone.file!.path))
        #expect(FileManager.default.fileExists(atPath: push.directory + "/" + kept.file!.path))
    }

    @Test("without server.state nothing is saved, and the start says so once")
    func temporaryDirectory() throws {
        let log = LogRecorder()
        var configuration = HeadwaterConfiguration()
        configuration.channels = [.init(name: "live", source: .push(.init(targetDuration: 2)), windowSeconds: 8)]
        let ingest = try PushIngest(
            configuration: configuration, registry: ChannelRegistry(), clock: ManualWallClock(), logger: log.logger,
            environment: ["HEADWATER_INGEST_TOKEN": PushIngestTests.token])
        defer { try? FileManager.default.removeItem(atPath: ingest.stateDirectory) }
        #expect(!ingest.isDurable)
        #expect(log.count("server.state is not set", atLeast: .notice) == 1, "\(log.lines)")
        let windowed = try #require(ingest.channels["live"]?.windowed)
        windowed.flushState()
        #expect(!FileManager.default.fileExists(atPath: ChannelStateFile.path(of: windowed.directory)))
        windowed.close()
        #expect(!FileManager.default.fileExists(atPath: windowed.directory), "a temporary store goes at shutdown")
    }
}
