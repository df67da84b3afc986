import Foundation
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterTesting
import Testing

@Suite("Push window")
struct PushWindowTests {
    static func makeWindow(window: Int = 12, targetDuration: Int = 2) -> LiveWindow {
        LiveWindow(
            configuration: .init(channel: "live", targetDuration: targetDuration, windowSeconds: window, runTag: "t1"))
    }

    @Test("a segment is listed only once the encoder's playlist lists it and its upload completed (B14)")
    func listedAfterUploadAndPlaylist() throws {
        var window = Self.makeWindow()
        var encoder = FakeEncoder()
        let first = encoder.produce()
        // The playlist first: nothing can be served yet.
        var outcome = try window.playlistReceived(path: "x_0.m3u8", encoder.playlist("x_0"), now: encoder.clock)
        #expect(!outcome.changed && window.mediaPlaylist(rendition: "x_0") == nil)
        #expect(window.snapshot(now: encoder.clock).state == .starting)
        // The upload completes: now it is listed.
        outcome = window.segmentStored(path: "x_00.ts", file: encoder.file("x_0", first), completedAt: encoder.clock)
        #expect(outcome.changed)
        #expect(window.mediaPlaylist(rendition: "x_0")?.segments.map(\.uri) == ["x_0/t1-0.ts"])
        // An upload no playlist lists yet stays unlisted.
        let second = encoder.produce()
        outcome = window.segmentStored(path: "x_01.ts", file: encoder.file("x_0", second), completedAt: encoder.clock)
        #expect(!outcome.changed && window.mediaPlaylist(rendition: "x_0")?.segments.count == 1)
        _ = try window.playlistReceived(path: "x_0.m3u8", encoder.playlist("x_0"), now: encoder.clock)
        let playlist = try #require(window.mediaPlaylist(rendition: "x_0"))
        #expect(playlist.segments.map(\.uri) == ["x_0/t1-0.ts", "x_0/t1-1.ts"])
        #expect(playlist.segments[0].programDateTime != nil && playlist.segments[1].programDateTime == nil)
        // Served once it lasts three target durations (C5, C16).
        #expect(window.snapshot(now: encoder.clock).state == .starting && window.liveRenditions.isEmpty)
        try encoder.push(encoder.produce(), into: &window)
        let snapshot = window.snapshot(now: encoder.clock)
        #expect(snapshot.state == .live && snapshot.segments["x_0"]?.count == 3 && snapshot.multivariant != nil)
        #expect(snapshot.media["x_0"]?.tag == "live-x_0-t1" && snapshot.media["x_0"]?.version == 2)
    }

    @Test("numbering continues across an encoder restart, with a discontinuity and a date (C3, B7)")
    func restart() throws {
        var window = Self.makeWindow()
        var encoder = FakeEncoder()
        var checker = PushChecker()
        for _ in 0..<10 {
            try encoder.push(encoder.produce(), into: &window)
            checker.check(&window, after: .init(), now: encoder.clock, "run 0")
        }
        let before = try #require(window.mediaPlaylist(rendition: "x_0"))
        encoder.restart()  // x_00.ts again, with other bytes
        var reports: [PushReport] = []
        for _ in 0..<3 {
            let segment = encoder.produce()
            reports +=
                window.segmentStored(
                    path: FakeEncoder.uri("x_0", segment.sequence), file: encoder.file("x_0", segment),
                    completedAt: encoder.clock
                ).reports
            reports += try window.playlistReceived(path: "x_0.m3u8", encoder.playlist("x_0"), now: encoder.clock)
                .reports
            checker.check(&window, after: .init(), now: encoder.clock, "run 1")
        }
        #expect(checker.problems.isEmpty, "\(checker.problems)")
        #expect(reports.contains { $0.kind == .encoderRestart })
        let after = try #require(window.mediaPlaylist(rendition: "x_0"))
        let lastBefore = before.mediaSequenceNumber(at: before.segments.count - 1)
        #expect(lastBefore == 9)
        let index = try #require(after.segments.firstIndex { $0.discontinuity })
        #expect(after.mediaSequenceNumber(at: index) == 10, "numbering continues where it was")
        #expect(after.segments[index].programDateTime != nil)
        #expect(after.segments.suffix(3).map(\.uri) == ["x_0/t1-10.ts", "x_0/t1-11.ts", "x_0/t1-12.ts"])
    }

    @Test("a playlist sent again out of order is not mistaken for a restart")
    func stalePlaylist() throws {
        var window = Self.makeWindow()
        var encoder = FakeEncoder()
        for _ in 0..<8 { try encoder.push(encoder.produce(), into: &window) }
        var old = encoder.playlist("x_0")
        old.mediaSequence = old.mediaSequence! - 1
        old.segments.insert(MediaSegment(uri: "x_01.ts", duration: .seconds(2)), at: 0)
        old.segments.removeLast()
        let outcome = try window.playlistReceived(path: "x_0.m3u8", old, now: encoder.clock)
        #expect(!outcome.changed && outcome.reports.isEmpty)
        try encoder.push(encoder.produce(), into: &window)
        #expect(window.mediaPlaylist(rendition: "x_0")!.segments.allSatisfy { !$0.discontinuity })
    }

    @Test("DISCONTINUITY-SEQUENCE counts the discontinuities that slid out (C6)")
    func discontinuitySequence() throws {
        var window = Self.makeWindow(window: 8)
        var encoder = FakeEncoder()
        var checker = PushChecker()
        var discontinuities: [UInt64] = []  // Headwater MSNs with a discontinuity
        for step in 0..<40 {
            let discontinuity = step % 3 == 1
            let segment = encoder.produce(discontinuity: discontinuity)
            if discontinuity { discontinuities.append(segment.sequence) }
            try encoder.push(segment, into: &window)
            checker.check(&window, after: .init(), now: encoder.clock, "step \(step)")
            let playlist = try #require(window.mediaPlaylist(rendition: "x_0"))
            let gone = UInt64(discontinuities.filter { $0 < playlist.effectiveMediaSequence }.count)
            #expect(playlist.effectiveDiscontinuitySequence == gone)
            if playlist.effectiveMediaSequence > 0 && !discontinuities.isEmpty {
                #expect(playlist.discontinuitySequence != nil)
            }
        }
        #expect(checker.problems.isEmpty, "\(checker.problems)")
        let playlist = window.mediaPlaylist(rendition: "x_0")!
        #expect(
            playlist.effectiveMediaSequence > 20 && playlist.duration >= .seconds(8)
                && playlist.duration <= .seconds(12))
    }

    @Test("EXTINF above the target duration is reported and counted, the target duration stays (B1, B2)")
    func overTargetDuration() throws {
        var window = Self.makeWindow()
        var encoder = FakeEncoder()
        try encoder.push(encoder.produce(), into: &window)
        let long = encoder.produce(.milliseconds(3_600))
        _ = window.segmentStored(
            path: FakeEncoder.uri("x_0", long.sequence), file: encoder.file("x_0", long), completedAt: encoder.clock)
        var playlist = encoder.playlist("x_0", targetDuration: 4)  // the encoder's own, larger TD is ignored
        playlist.segments[0].duration = .seconds(2)
        let outcome = try window.playlistReceived(path: "x_0.m3u8", playlist, now: encoder.clock)
        #expect(outcome.reports.map(\.kind) == [.extinfAboveTargetDuration])
        let listed = try #require(window.mediaPlaylist(rendition: "x_0"))
        #expect(listed.targetDuration == 2 && listed.segments.last?.duration == .milliseconds(3_600))
        #expect(window.snapshot(now: encoder.clock).targetDuration == 2)
    }

    @Test("renditions keep the same numbers, discontinuities and dates through a restart one sees late (C14)")
    func aligned() throws {
        var window = Self.makeWindow()
        var encoder = FakeEncoder(renditions: ["x_0", "x_1"])
        var checker = PushChecker()
        for _ in 0..<6 { try encoder.push(encoder.produce(), into: &window) }
        // x_1's last playlist of the old run never arrives.
        let last = encoder.produce()
        for rendition in encoder.renditions {
            _ = window.segmentStored(
                path: FakeEncoder.uri(rendition, last.sequence), file: encoder.file(rendition, last),
                completedAt: encoder.clock)
        }
        _ = try window.playlistReceived(path: "x_0.m3u8", encoder.playlist("x_0"), now: encoder.clock)
        encoder.restart()
        for step in 0..<5 {
            try encoder.push(encoder.produce(), into: &window)
            checker.check(&window, after: .init(), now: encoder.clock, "step \(step)")
        }
        #expect(checker.problems.isEmpty, "\(checker.problems)")
        let x0 = try #require(window.mediaPlaylist(rendition: "x_0"))
        let x1 = try #require(window.mediaPlaylist(rendition: "x_1"))
        #expect(
            x0.effectiveMediaSequence + UInt64(x0.segments.count) == x1.effectiveMediaSequence
                + UInt64(x1.segments.count))
        let gap = try #require(x1.segments.first { $0.gap })  // MSN 6 never reached x_1's playlist
        #expect(gap.uri == "x_1/t1-6.ts" && gap.duration == .seconds(2))
        let restartIndex0 = try #require(x0.segments.firstIndex { $0.discontinuity })
        let restartIndex1 = try #require(x1.segments.firstIndex { $0.discontinuity })
        #expect(x0.mediaSequenceNumber(at: restartIndex0) == 7 && x1.mediaSequenceNumber(at: restartIndex1) == 7)
    }

    @Test("a segment that never arrives becomes EXT-X-GAP once 1.5 target durations of later media are waiting")
    func missingSegment() throws {
        var window = Self.makeWindow()
        var encoder = FakeEncoder()
        try encoder.push(encoder.produce(), into: &window)
        _ = encoder.produce()  // lost upload
        var reports: [PushReport] = []
        for _ in 0..<2 {
            let segment = encoder.produce()
            _ = window.segmentStored(
                path: FakeEncoder.uri("x_0", segment.sequence), file: encoder.file("x_0", segment),
                completedAt: encoder.clock)
            reports += try window.playlistReceived(path: "x_0.m3u8", encoder.playlist("x_0"), now: encoder.clock)
                .reports
        }
        #expect(reports.map(\.kind) == [.segmentDelayed, .missingSegment])
        let playlist = try #require(window.mediaPlaylist(rendition: "x_0"))
        #expect(playlist.segments.map(\.gap) == [false, true, false, false])
        #expect(PlaylistValidator.validate(playlist).filter { $0.severity == .error }.isEmpty)
    }

    @Test("removed segments stay fetchable for their duration plus the playlist's, then their files go (C7)")
    func retention() throws {
        var window = Self.makeWindow(window: 8)
        var encoder = FakeEncoder()
        var deleted: [String] = []
        var firstFile: String?
        for step in 0..<20 {
            let segment = encoder.produce()
            let file = encoder.file("x_0", segment)
            if step == 0 { firstFile = file.path }
            deleted +=
                window.segmentStored(
                    path: FakeEncoder.uri("x_0", segment.sequence), file: file, completedAt: encoder.clock
                ).filesToDelete
            deleted += try window.playlistReceived(path: "x_0.m3u8", encoder.playlist("x_0"), now: encoder.clock)
                .filesToDelete
            // The encoder deletes what left its playlist: only an unlisted upload would go at once.
            if segment.sequence >= 6 {
                deleted +=
                    window.segmentDeleted(path: FakeEncoder.uri("x_0", segment.sequence - 6), now: encoder.clock)
                    .filesToDelete
            }
            let fetchable = window.snapshot(now: encoder.clock).segments["x_0"] ?? [:]
            if step == 5 { #expect(fetchable["t1-0.ts"] != nil && !deleted.contains(firstFile!)) }
        }
        // Segment 0 left the window around step 4 (8 s window + 6 s of TD×3 + a segment…); its
        // deadline (2 s + the playlist duration) has long passed.
        #expect(deleted.contains(firstFile!))
        #expect(window.snapshot(now: encoder.clock).segments["x_0"]!["t1-0.ts"] == nil)
    }

    @Test("fMP4: the init section is served under a name unique to its upload, and listed only once uploaded (B9)")
    func initSection() throws {
        var window = Self.makeWindow()
        var encoder = FakeEncoder()
        var playlist = MediaPlaylist(targetDuration: 2, mediaSequence: 0)
        playlist.segments = (0..<3).map { MediaSegment(uri: "v0/seg\($0).m4s", duration: .seconds(2)) }
        playlist.segments[0].tags.map = MediaInitializationSection(uri: "init.mp4")
        for index in 0..<3 {
            let file = encoder.file("v0", encoder.produce())
            _ = window.segmentStored(path: "v0/v0/seg\(index).m4s", file: file, completedAt: encoder.clock)
        }
        _ = try window.playlistReceived(path: "v0/index.m3u8", playlist, now: encoder.clock)
        #expect(window.mediaPlaylist(rendition: "v0") == nil, "no segment without its init section")
        let initFile = SegmentFile(
            path: "/store/init", length: 800, entityTag: "\"i\"", contentType: "video/mp4", lastModified: 0)
        _ = window.segmentStored(path: "v0/init.mp4", file: initFile, completedAt: encoder.clock)
        let listed = try #require(window.mediaPlaylist(rendition: "v0"))
        #expect(listed.segments.map(\.uri) == ["v0/t1-0.m4s", "v0/t1-1.m4s", "v0/t1-2.m4s"])
        let map = try #require(listed.segments[0].map)
        #expect(map.uri == "v0/t1-init4.mp4" && listed.segments[1].map == nil)
        #expect(window.snapshot(now: encoder.clock).segments["v0"]?["t1-init4.mp4"] == initFile)
        #expect(PlaylistValidator.validate(listed).filter { $0.severity == .error }.isEmpty)
    }
}

@Suite("Push window: numbering from the wall clock")
struct PushWindowClockNumberingTests {
    @Test("the first segment is numbered now / 100 ms; a channel started again later numbers above it (C3, C6)")
    func survivesRestart() throws {
        func run(startingAt clock: Int64, segments: Int) throws -> MediaPlaylist {
            var window = LiveWindow(
                configuration: .init(
                    channel: "live", targetDuration: 2, windowSeconds: 12, runTag: "r\(clock)", clockNumbering: true))
            var encoder = FakeEncoder()
            encoder.clock = clock
            for _ in 0..<segments { try encoder.push(encoder.produce(), into: &window) }
            return try #require(window.mediaPlaylist(rendition: "x_0"))
        }
        let start: Int64 = 1_795_282_560_000_000
        let first = try run(startingAt: start, segments: 30)
        // The encoder's first segment (MSN 0) ends 2 s after `start`, when its playlist arrives.
        let base = UInt64((start + 2_000_000) / 100_000)
        #expect(first.effectiveMediaSequence + UInt64(first.segments.count) == base + 30)
        #expect(first.effectiveDiscontinuitySequence == base)
        // Headwater restarts right after (a minute of 2 s segments = 30 numbers; the clock gave 600).
        let second = try run(startingAt: start + 61_000_000, segments: 3)
        #expect(second.effectiveMediaSequence > first.mediaSequenceNumber(at: first.segments.count - 1))
        #expect(second.effectiveDiscontinuitySequence > first.effectiveDiscontinuitySequence)
    }
}

@Suite("Push window: deterministic encoders")
struct PushWindowDeterministicRestartTests {
    @Test("a restart whose first segments are byte for byte the same as last run's is a restart, not an old copy")
    func identicalBytesAfterSilence() throws {
        var window = LiveWindow(configuration: .init(channel: "live", targetDuration: 2, windowSeconds: 12, runTag: "t1"))
        var clock: Int64 = 1_795_282_560_000_000
        func file(_ n: Int) -> SegmentFile {  // the same bytes, hence the same ETag, in every run
            SegmentFile(path: "/store/\(clock)/\(n)", length: 1000, entityTag: "\"same-\(n)\"", contentType: "video/mp2t", lastModified: 0)
        }
        func playlist(_ count: Int) -> MediaPlaylist {
            var playlist = MediaPlaylist(targetDuration: 2, mediaSequence: UInt64(max(0, count - 6)))
            playlist.segments = (max(0, count - 6)..<count).map { MediaSegment(uri: "s\($0).ts", duration: .seconds(2)) }
            return playlist
        }
        var reports: [PushReport] = []
        for run in 0..<2 {
            for n in 0..<8 {
                clock += 2_000_000
                _ = window.segmentStored(path: "s\(n).ts", file: file(n), completedAt: clock)
                reports += try window.playlistReceived(path: "x.m3u8", playlist(n + 1), now: clock).reports
            }
            if run == 0 { clock += 7_000_000 }  // silence, then the encoder starts over
        }
        #expect(reports.contains { $0.kind == .encoderRestart }, "\(reports)")
        let last = try #require(window.mediaPlaylist(rendition: "x"))
        #expect(last.mediaSequenceNumber(at: last.segments.count - 1) == 15, "8 + 8 segments, numbered on")
        #expect(last.effectiveDiscontinuitySequence == 1, "one discontinuity, at the restart (slid out by now)")
    }
}
