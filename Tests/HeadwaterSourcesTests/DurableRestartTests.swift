import Foundation
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
@testable import HeadwaterSources
import HeadwaterTesting
import Logging
import Testing

/// A push channel restarted in process (a new ingest and registry on the same state directory):
/// the same playlists come back, and the encoder's next segments continue its numbering.
@Suite("Durable channels: restart")
struct DurableRestartTests {
    /// The discontinuity tags of `playlist` at or after MSN `msn`.
    static func discontinuities(_ playlist: MediaPlaylist, from msn: UInt64) -> Int {
        playlist.segments.indices.filter {
            playlist.mediaSequenceNumber(at: $0) >= msn && playlist.segments[$0].tags.discontinuity
        }.count
    }

    /// Everything a player compares across reloads: numbers, URIs, durations, dates, discontinuities.
    static func timeline(_ playlist: MediaPlaylist) -> [String] {
        let dsns = playlist.discontinuitySequenceNumbers()
        let dates = playlist.programDateTimes()
        return playlist.segments.indices.map { index in
            let segment = playlist.segments[index]
            return "\(playlist.mediaSequenceNumber(at: index)) \(dsns[index]) \(segment.uri) \(segment.duration) \(dates[index].map { "\($0)" } ?? "-")"
        }
    }

    @Test("after a clean stop or a kill, the same playlist bytes, segment files and numbers are served", arguments: [true, false])
    func samePlaylist(clean: Bool) throws {
        let push = try DurablePush()
        for number in 0..<6 { try push.encode(number) }
        let before = try #require(push.playlist)
        let files = try #require(push.registry.snapshot(of: "live")?.segments["x_0"])
        try push.restart(clean: clean)
        #expect(push.playlist == before)
        let restored = try #require(push.registry.snapshot(of: "live"))
        #expect(restored.state == .live)
        #expect(Set(restored.segments["x_0"]?.keys.map { $0 } ?? []) == Set(files.keys), "the same files are fetchable")
        for (name, file) in files {
            #expect(restored.segments["x_0"]?[name]?.entityTag == file.entityTag, "\(name): same bytes, same ETag")
            #expect(FileManager.default.contents(atPath: restored.segments["x_0"]![name]!.path) == Data(PushIngestTests.segmentBytes))
        }
    }

    @Test("the encoder continues where it was and nothing was lost: numbering goes on, no discontinuity")
    func seamless() throws {
        let push = try DurablePush()
        for number in 0..<6 { try push.encode(number) }
        let before = try #require(push.parsedPlaylist)
        try push.restart()
        try push.encode(6)
        let after = try #require(push.parsedPlaylist)
        let last = before.mediaSequenceNumber(at: before.segments.count - 1)
        #expect(after.mediaSequenceNumber(at: after.segments.count - 1) == last + 1)
        #expect(Self.discontinuities(after, from: 0) == 0 && after.discontinuitySequence == before.discontinuitySequence)
        #expect(Array(Self.timeline(after).dropLast()) == Array(Self.timeline(before).dropFirst()), "the past never changes (C1)")
        #expect(after.segments.last?.uri != before.segments.last?.uri)
    }

    @Test("segments lost while Headwater was down: numbering continues after one discontinuity, with no gap listed")
    func lostSegments() throws {
        let push = try DurablePush()
        for number in 0..<6 { try push.encode(number) }
        let before = try #require(push.parsedPlaylist)
        let last = before.mediaSequenceNumber(at: before.segments.count - 1)
        try push.restart(clean: false)
        // Segment 6 was uploaded while Headwater was down (refused); 7 and 8 arrive.
        try push.encode(6, uploaded: false, listing: (3...6).map { ($0, "2.000") })
        #expect(push.parsedPlaylist.map(Self.timeline) == Self.timeline(before), "waiting: nothing changes yet")
        try push.encode(7, listing: (4...7).map { ($0, "2.000") })
        #expect(push.parsedPlaylist.map(Self.timeline) == Self.timeline(before), "segment 6 is waited for 1½ TD")
        try push.encode(8, listing: (5...8).map { ($0, "2.000") })
        let after = try #require(push.parsedPlaylist)
        #expect(after.mediaSequenceNumber(at: after.segments.count - 1) == last + 2, "7 and 8 are listed next")
        #expect(Self.discontinuities(after, from: last + 1) == 1 && after.segments[after.segments.count - 2].tags.discontinuity)
        #expect(!after.segments.contains { $0.tags.gap }, "no gap for what never came")
        let dsns = after.discontinuitySequenceNumbers()
        #expect(dsns[after.segments.count - 2] == before.discontinuitySequenceNumbers().last! + 1)
        #expect(after.segments[after.segments.count - 2].tags.programDateTime != nil, "a date after the discontinuity (B7)")
        let common = Array(Self.timeline(before).suffix(2))
        #expect(Array(Self.timeline(after).prefix(2)) == common, "the past never changes (C1)")
        #expect(push.log.count("never arrived while Headwater was down", atLeast: .warning) == 1, "\(push.log.lines)")
    }

    @Test("a segment the encoder made longer with media it could not upload meanwhile (ffmpeg -ignore_io_errors) is not listed; one discontinuity")
    func mergedSegment() throws {
        let push = try DurablePush()
        for number in 0..<6 { try push.encode(number) }
        let before = try #require(push.parsedPlaylist)
        let last = before.mediaSequenceNumber(at: before.segments.count - 1)
        try push.restart(clean: false)
        // The upload of x_06 was refused while Headwater was down: ffmpeg sends its media with the
        // next segment, under the same name, 4 s long.
        try push.encode(6, duration: "4.000", listing: (3...6).map { ($0, $0 == 6 ? "4.000" : "2.000") })
        #expect(push.parsedPlaylist.map(Self.timeline) == Self.timeline(before), "deciding with the next segment")
        try push.encode(7, listing: (4...7).map { ($0, $0 == 6 ? "4.000" : "2.000") })
        let after = try #require(push.parsedPlaylist)
        #expect(after.segments.allSatisfy { $0.duration.roundedSeconds <= 2 }, "B1")
        #expect(after.mediaSequenceNumber(at: after.segments.count - 1) == last + 1)
        #expect(after.segments.last?.tags.discontinuity == true && Self.discontinuities(after, from: last + 1) == 1)
        #expect(push.windowed.counters[.overTargetDuration] == 1)
    }

    @Test("an encoder that restarted meanwhile (numbers from 0 again) is numbered on after one discontinuity")
    func encoderRestarted() throws {
        let push = try DurablePush()
        for number in 0..<8 { try push.encode(number) }
        let before = try #require(push.parsedPlaylist)
        let last = before.mediaSequenceNumber(at: before.segments.count - 1)
        try push.restart()
        push.clock.advance(seconds: 10)
        for number in 0..<2 { try push.encode(number, listing: (0...number).map { ($0, "2.000") }) }
        let after = try #require(push.parsedPlaylist)
        #expect(after.mediaSequenceNumber(at: after.segments.count - 1) == last + 2)
        #expect(Self.discontinuities(after, from: last + 1) == 1)
        #expect(push.windowed.counters[.overTargetDuration] == 0)
    }

    @Test("the channel keeps its window across two restarts in a row")
    func twice() throws {
        let push = try DurablePush()
        for number in 0..<6 { try push.encode(number) }
        let before = try #require(push.playlist)
        try push.restart(clean: false)
        try push.restart()
        #expect(push.playlist == before)
        try push.encode(6)
        #expect(push.parsedPlaylist.map { Self.discontinuities($0, from: 0) } == 0)
    }
}
