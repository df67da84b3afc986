import Foundation
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
@testable import HeadwaterSources
import HeadwaterTesting
import Logging
import Testing

/// An encoder that (re)starts often cuts its first segment longer than the target duration. That
/// segment opens a new timeline, so it is left out (B1: every EXTINF rounds to at most the target
/// duration, which never changes), counted as `over_target_duration`, and the next segment takes
/// its number; the window is otherwise intact.
@Suite("Durable channels: a restarted encoder's long first segment")
struct DurableLongSegmentTests {
    @Test("after an encoder restart, its first segment (3.5 s for a 2 s target) is not listed; the next one is, after one discontinuity")
    func skippedAfterRestart() throws {
        let push = try DurablePush()
        for number in 0..<6 { try push.encode(number) }
        let before = try #require(push.parsedPlaylist)
        let last = before.mediaSequenceNumber(at: before.segments.count - 1)
        push.clock.advance(seconds: 10)
        // The restarted encoder: x_00.ts is 3.5 s long. Its first playlist lists it alone: wait.
        try push.encode(0, duration: "3.500", listing: [(0, "3.500")])
        #expect(push.parsedPlaylist.map(DurableRestartTests.timeline) == DurableRestartTests.timeline(before))
        try push.encode(1, listing: [(0, "3.500"), (1, "2.000")])
        try push.encode(2, listing: [(0, "3.500"), (1, "2.000"), (2, "2.000")])
        let after = try #require(push.parsedPlaylist)
        #expect(after.segments.allSatisfy { $0.duration.roundedSeconds <= 2 }, "B1: \(after.segments.map(\.duration))")
        #expect(after.mediaSequenceNumber(at: after.segments.count - 1) == last + 2, "x_01 and x_02 take MSN last+1, last+2")
        #expect(DurableRestartTests.discontinuities(after, from: last + 1) == 1)
        #expect(after.segments[after.segments.count - 2].tags.discontinuity)
        #expect(push.windowed.counters[.overTargetDuration] == 1)
        let exported = OriginMetricsTests.value(
            push.metrics, #"headwater_ingest_rejected_total{channel="live",reason="over_target_duration"}"#)
        #expect(exported == 1)
        #expect(push.log.count("starts a new timeline; not listed", atLeast: .warning) == 1, "\(push.log.lines)")
        // The past is intact (C1).
        #expect(Array(DurableRestartTests.timeline(after).prefix(2)) == Array(DurableRestartTests.timeline(before).suffix(2)))
    }

    @Test("a new channel's first segment that is too long is left out the same way")
    func skippedAtStart() throws {
        let push = try DurablePush()
        try push.encode(0, duration: "3.500", listing: [(0, "3.500")])
        for number in 1..<4 { try push.encode(number, listing: [(0, "3.500")] + (1...number).map { ($0, "2.000") }) }
        let playlist = try #require(push.parsedPlaylist)
        #expect(playlist.segments.map(\.duration) == [.seconds(2), .seconds(2), .seconds(2)])
        #expect(playlist.segments.first?.uri.hasSuffix("-\(playlist.effectiveMediaSequence).ts") == true)
        #expect(push.windowed.counters[.overTargetDuration] == 1)
    }

    @Test("when the segment after it is long too, the encoder's GOP is too long: both are listed and reported, not refused")
    func listedWhenEveryOneIsLong() throws {
        let push = try DurablePush()
        for number in 0..<4 {
            try push.encode(number, duration: "3.000", listing: (0...number).map { ($0, "3.000") })
        }
        let playlist = try #require(push.parsedPlaylist)
        #expect(playlist.segments.count >= 3 && playlist.segments.allSatisfy { $0.duration == .seconds(3) })
        #expect(push.windowed.counters[.overTargetDuration] == 0)
        #expect(push.windowed.counters.segmentsOverTargetDuration == 4)
    }

    @Test("a long segment in the middle of a run (no discontinuity) is listed and reported, as before")
    func listedMidStream() throws {
        let push = try DurablePush()
        for number in 0..<4 { try push.encode(number) }
        try push.encode(4, duration: "3.000", listing: (1...4).map { ($0, $0 == 4 ? "3.000" : "2.000") })
        #expect(push.parsedPlaylist?.segments.last?.duration == .seconds(3))
        #expect(push.windowed.counters[.overTargetDuration] == 0 && push.windowed.counters.segmentsOverTargetDuration == 1)
    }
}
