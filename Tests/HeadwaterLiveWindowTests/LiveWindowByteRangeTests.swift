import HeadwaterHLS
import HeadwaterLiveWindow
import Testing

/// Encoders that list EXT-X-BYTERANGE sub-ranges of uploaded files: several segments per file, or
/// one growing file uploaded again as it grows. Headwater passes the ranges through, offsets
/// explicit, so the head segment always carries its offset (B8).
@Suite("Push window: EXT-X-BYTERANGE sources")
struct PushWindowByteRangeTests {
    static let segmentBytes: UInt64 = 1_000
    static let clockStart: Int64 = 1_795_282_560_000_000

    static func file(_ path: String, upload: Int, length: UInt64) -> SegmentFile {
        SegmentFile(
            path: "/store/\(path)/\(upload)", length: Int64(length), entityTag: "\"\(path)-\(upload)\"",
            contentType: "video/mp2t", lastModified: 0)
    }

    /// An encoder playlist listing segments `first..<end`, three per chunk file `c{n}.ts`, offsets
    /// written only at the start of each file (as ffmpeg writes them).
    static func chunkedPlaylist(_ first: Int, _ end: Int) -> MediaPlaylist {
        var playlist = MediaPlaylist(targetDuration: 2, mediaSequence: UInt64(first))
        playlist.segments = (first..<end).map { index in
            var segment = MediaSegment(uri: "c\(index / 3).ts", duration: .seconds(2))
            let offset = UInt64(index % 3) * segmentBytes
            segment.byteRange = ByteRange(length: segmentBytes, offset: index == first || index % 3 == 0 ? offset : nil)
            return segment
        }
        return playlist
    }

    @Test("several segments per uploaded file: ranges pass through, the head always has its offset, names shared")
    func chunkFiles() throws {
        var window = LiveWindow(
            configuration: .init(channel: "live", targetDuration: 2, windowSeconds: 12, runTag: "t1"))
        var checker = PushChecker()
        var clock = Self.clockStart
        for index in 0..<30 {
            clock += 2_000_000
            if index % 3 == 2 {  // a chunk file is uploaded once its three segments are encoded
                let chunk = index / 3
                _ = window.segmentStored(
                    path: "c\(chunk).ts", file: Self.file("c\(chunk).ts", upload: chunk, length: 3 * Self.segmentBytes),
                    completedAt: clock)
            }
            let outcome = try window.playlistReceived(
                path: "x.m3u8", Self.chunkedPlaylist(max(0, index - 5), index + 1), now: clock)
            checker.check(&window, after: outcome, now: clock, "segment \(index)")
        }
        #expect(checker.problems.isEmpty, "\(checker.problems)")
        let playlist = try #require(window.mediaPlaylist(rendition: "x"))
        #expect(playlist.segments.count >= 6)
        #expect(playlist.segments.allSatisfy { !$0.tags.gap && $0.byteRange?.offset != nil })
        let snapshot = window.snapshot(now: clock)
        for (index, segment) in playlist.segments.enumerated() {
            let msn = Int(playlist.mediaSequenceNumber(at: index))
            #expect(segment.byteRange == ByteRange(length: Self.segmentBytes, offset: UInt64(msn % 3) * Self.segmentBytes))
            // Served under the chunk upload's name, which maps to that chunk's file.
            let name = PushChecker.name(segment.uri)
            #expect(snapshot.segments["x"]?[name]?.path == "/store/c\(msn / 3).ts/\(msn / 3)", "\(segment.uri)")
        }
        // A window that starts inside a chunk: the head's offset is explicit and not 0.
        let heads = Set((0..<3).map { UInt64($0) * Self.segmentBytes })
        #expect(heads.contains(try #require(playlist.segments.first?.byteRange?.offset)))
        let serialized = String(decoding: PlaylistSerializer.serialize(playlist), as: UTF8.self)
        #expect(serialized.contains("#EXT-X-BYTERANGE:1000@"))
    }

    @Test("a growing file uploaded again: a range is listed once an upload reaches it; no restart is seen")
    func growingFile() throws {
        var window = LiveWindow(
            configuration: .init(channel: "live", targetDuration: 2, windowSeconds: 12, runTag: "t1"))
        var checker = PushChecker()
        var reports: [PushReport] = []
        var clock = Self.clockStart
        func playlist(_ count: Int) -> MediaPlaylist {
            var playlist = MediaPlaylist(targetDuration: 2, mediaSequence: 0)
            playlist.segments = (0..<count).map { index in
                var segment = MediaSegment(uri: "all.ts", duration: .seconds(2))
                segment.byteRange = ByteRange(length: Self.segmentBytes, offset: index == 0 ? 0 : nil)
                return segment
            }
            return playlist
        }
        // The playlist runs one segment ahead of the upload: that segment waits, it is never a gap.
        for count in 1...20 {
            clock += 2_000_000
            var outcome = window.segmentStored(
                path: "all.ts", file: Self.file("all.ts", upload: count, length: UInt64(count - 1) * Self.segmentBytes),
                completedAt: clock)
            checker.check(&window, after: outcome, now: clock, "upload \(count)")
            outcome = try window.playlistReceived(path: "x.m3u8", playlist(count), now: clock)
            reports += outcome.reports
            checker.check(&window, after: outcome, now: clock, "playlist \(count)")
            let listed = window.mediaPlaylist(rendition: "x")?.segments.count ?? 0
            #expect(count == 1 || listed > 0)
            let snapshot = window.snapshot(now: clock)
            if window.liveRenditions == ["x"], let last = window.mediaPlaylist(rendition: "x")?.segments.last {
                let file = try #require(snapshot.segments["x"]?[PushChecker.name(last.uri)])
                let range = try #require(last.byteRange)
                let offset = try #require(range.offset, "served without an explicit offset")
                #expect(UInt64(file.length) >= offset + range.length, "listed beyond its upload")
                #expect(!last.tags.gap)
            }
        }
        #expect(checker.problems.isEmpty, "\(checker.problems)")
        #expect(!reports.contains { $0.kind == .encoderRestart || $0.kind == .missingSegment }, "\(reports)")
        let last = try #require(window.mediaPlaylist(rendition: "x"))
        #expect(last.mediaSequenceNumber(at: last.segments.count - 1) == 18, "the 20th segment waits for its bytes")
    }

    @Test("a range with no offset to follow is listed as EXT-X-GAP, not guessed")
    func rangeWithoutOffset() throws {
        var window = LiveWindow(
            configuration: .init(channel: "live", targetDuration: 2, windowSeconds: 12, runTag: "t1"))
        var clock = Self.clockStart
        var reports: [PushReport] = []
        for index in 0..<6 {
            clock += 2_000_000
            _ = window.segmentStored(
                path: "s\(index).ts", file: Self.file("s\(index).ts", upload: index, length: 5_000), completedAt: clock)
            var playlist = MediaPlaylist(targetDuration: 2, mediaSequence: 0)
            playlist.segments = (0...index).map { i in
                var segment = MediaSegment(uri: "s\(i).ts", duration: .seconds(2))
                // Segment 3 is a sub-range of a file no earlier segment used: its offset is unknown.
                if i == 3 { segment.byteRange = ByteRange(length: 1_000) }
                return segment
            }
            reports += try window.playlistReceived(path: "x.m3u8", playlist, now: clock).reports
        }
        let playlist = try #require(window.mediaPlaylist(rendition: "x"))
        #expect(playlist.segments.map(\.tags.gap) == [false, false, false, true, false, false])
        #expect(reports.contains { $0.kind == .missingSegment && $0.message.contains("without an offset") })
    }
}
