import HeadwaterMedia
import Testing

/// Hand-computed examples of HLS §4.1 peak and average segment bit rates (HLS-RULES E2).
@Suite("BitrateMeter")
struct BitrateMeterTests {
    private func meter(targetDuration: Int, _ segments: [(bytes: Int, microseconds: Int64)]) -> BitrateMeter {
        var meter = BitrateMeter(targetDuration: targetDuration)
        for segment in segments { meter.add(byteCount: segment.bytes, durationMicroseconds: segment.microseconds) }
        return meter
    }

    @Test func fullLengthSegmentsEachFormAWindow() {
        // TD 6 → windows of 3 s … 9.5 s: every single 6 s segment qualifies, no pair (12 s) does.
        let m = meter(targetDuration: 6, [(750_000, 6_000_000), (1_500_000, 6_000_000), (375_000, 6_000_000)])
        #expect(m.minimumWindowMicroseconds == 3_000_000)
        #expect(m.maximumWindowMicroseconds == 9_500_000)
        #expect(m.peakBitRate == 2_000_000)  // 1 500 000 B × 8 / 6 s
        #expect(m.averageBitRate == 1_166_667)  // 2 625 000 B × 8 / 18 s = 1 166 666.67, rounded up
    }

    @Test func shortSegmentsAreAveragedOverTheWindow() {
        // TD 6 with 2 s segments: a single segment (2 s < 3 s) never qualifies, so the 2 Mb/s spike of
        // segment 1 only counts together with a neighbour: sets of 2…4 segments (4 s … 8 s) qualify.
        let m = meter(
            targetDuration: 6,
            [(100_000, 2_000_000), (500_000, 2_000_000), (100_000, 2_000_000), (100_000, 2_000_000), (100_000, 2_000_000)])
        #expect(m.peakBitRate == 1_200_000)  // (100 000 + 500 000) B × 8 / 4 s
        #expect(m.averageBitRate == 720_000)  // 900 000 B × 8 / 10 s
    }

    @Test func windowBoundsAreInclusive() {
        // TD 4 → 2 s … 6.5 s. A segment of exactly 2 s qualifies on its own.
        #expect(meter(targetDuration: 4, [(1_000_000, 2_000_000)]).peakBitRate == 4_000_000)
        // 1.5 s (too short alone) + 5 s = exactly 6.5 s: 8 000 000 bits / 6.5 s = 1 230 769.23 → 1 230 770.
        #expect(meter(targetDuration: 4, [(1_000_000, 1_500_000), (0, 5_000_000)]).peakBitRate == 1_230_770)
        // One microsecond more and the pair is out; only the empty 5.000001 s segment qualifies.
        #expect(meter(targetDuration: 4, [(1_000_000, 1_500_000), (0, 5_000_001)]).peakBitRate == 0)
    }

    @Test func roundsUp() {
        #expect(meter(targetDuration: 4, [(1, 3_000_000)]).peakBitRate == 3)  // 8 / 3 = 2.67
        #expect(meter(targetDuration: 4, [(3, 3_000_000)]).peakBitRate == 8)  // exact
    }

    @Test func noQualifyingSet() {
        let m = meter(targetDuration: 6, [(10_000, 2_000_000)])
        #expect(m.peakBitRate == nil)
        #expect(m.averageBitRate == 40_000)
        #expect(BitrateMeter(targetDuration: 6).averageBitRate == nil)
        #expect(meter(targetDuration: 0, [(10, 0)]).peakBitRate == nil)
    }

    @Test func capacityKeepsTheMostRecentSegments() {
        var m = BitrateMeter(targetDuration: 6, capacity: 2)
        m.add(byteCount: 6_000_000, durationMicroseconds: 6_000_000)  // 8 Mb/s, then dropped
        m.add(byteCount: 750_000, durationMicroseconds: 6_000_000)
        m.add(byteCount: 1_500_000, durationMicroseconds: 6_000_000)
        #expect(m.segments.count == 2)
        #expect(m.peakBitRate == 2_000_000)
        #expect(m.averageBitRate == 1_500_000)
    }

    @Test func negativeInputsCountAsZero() {
        let m = meter(targetDuration: 6, [(-5, 6_000_000), (750_000, -1), (750_000, 6_000_000)])
        #expect(m.segments.map(\.byteCount) == [0, 750_000, 750_000])
        #expect(m.segments.map(\.durationMicroseconds) == [6_000_000, 0, 6_000_000])
        // The zero-length segment adds its bytes to either neighbour: 1 500 000 B × 8 / 6 s.
        #expect(m.peakBitRate == 2_000_000)
    }

    @Test func probedSegmentsFeedTheMeter() throws {
        var m = BitrateMeter(targetDuration: 2)
        let probe = try TransportStreamProbe.probe(try Fixture.bytes("main_640x360_25fps.ts"))
        m.add(probe)
        // 57 716 B × 8 / 2 s = 230 864 b/s.
        #expect(m.peakBitRate == 230_864)
        #expect(m.averageBitRate == 230_864)
    }
}
