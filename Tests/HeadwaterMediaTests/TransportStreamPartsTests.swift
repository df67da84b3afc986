import Foundation
@testable import HeadwaterMedia
import Testing

/// Partial segments cut from hand-made segments whose frames, interleaving and timing are known
/// exactly, from ffmpeg's audio fixture, and from every segment of the demo channel.
@Suite("Transport stream parts")
struct TransportStreamPartsTests {
    static let size = TransportStreamProbe.packetSize

    // MARK: Hand-made segments

    /// IDR, P, P, P, the PAT and PMT again, IDR, P (40 ms each) with metadata packets interleaved.
    /// Cut times that land on the same frame, or past the last one, make no part; the repeated
    /// tables start the part of the second key frame; metadata stays where it was muxed.
    @Test func cutsAtFrameStarts() throws {
        var ts = SyntheticSegment()
        ts.tables()
        ts.add(.idr, pts: 126_000, randomAccess: true)
        let metadataAfterKeyFrame = ts.bytes.count
        ts.metadata()
        let p1 = ts.bytes.count
        ts.add(.p, pts: 129_600, randomAccess: false)
        ts.add(.p, pts: 133_200, randomAccess: false)
        ts.metadata()
        let p3 = ts.bytes.count
        ts.add(.p, pts: 136_800, randomAccess: false)
        let tables = ts.bytes.count
        ts.tables()
        ts.add(.idr, pts: 140_400, randomAccess: true)
        ts.add(.p, pts: 144_000, randomAccess: false)

        let cutTimes: [Int64] = [500_000, 160_000, 40_000, 150_000, 100_000, 160_000, 0, -40_000]
        let parts = try TransportStreamParts.cut(ts.bytes, segmentDurationMicroseconds: 240_000, at: cutTimes)
        #expect(parts.map(\.offset) == [0, p1, p3, tables].map(Int64.init))
        #expect(parts.map(\.durationMicroseconds) == [40_000, 80_000, 40_000, 80_000])
        #expect(parts.map(\.independent) == [true, false, false, true])
        #expect(metadataAfterKeyFrame < p1, "the metadata packet muxed after the key frame stays in part 0")
        Self.checkCoverage(parts, ts.bytes, 240_000, "synthetic")
    }

    /// No cut times, or none inside the segment: one part, the whole file, the whole duration.
    @Test func noCutIsOnePart() throws {
        var ts = SyntheticSegment()
        ts.tables()
        ts.add(.idr, pts: 126_000, randomAccess: true)
        ts.add(.p, pts: 129_600, randomAccess: false)
        let whole = [MediaPart(offset: 0, length: Int64(ts.bytes.count), durationMicroseconds: 80_000, independent: true)]
        for times: [Int64] in [[], [0], [80_000, 120_000], [-1]] {
            #expect(try TransportStreamParts.cut(ts.bytes, segmentDurationMicroseconds: 80_000, at: times) == whole, "\(times)")
        }
    }

    /// A part's durations come from the PTS, the last part's from the duration the playlist gives:
    /// a segment listed longer than its frames last gives its last part the difference.
    @Test func lastPartTakesTheListedDuration() throws {
        var ts = SyntheticSegment()
        ts.tables()
        ts.add(.idr, pts: 126_000, randomAccess: true)
        ts.add(.p, pts: 129_600, randomAccess: false)
        ts.add(.p, pts: 133_200, randomAccess: false)
        let parts = try TransportStreamParts.cut(ts.bytes, segmentDurationMicroseconds: 200_000, at: [40_000, 80_000])
        #expect(parts.map(\.durationMicroseconds) == [40_000, 40_000, 120_000])
        // A cut at or after the listed end is dropped, even where a frame starts.
        let short = try TransportStreamParts.cut(ts.bytes, segmentDurationMicroseconds: 80_000, at: [40_000, 80_000])
        #expect(short.map(\.durationMicroseconds) == [40_000, 40_000])
        // Also when the time is inside the segment but the next frame is not.
        let none = try TransportStreamParts.cut(ts.bytes, segmentDurationMicroseconds: 60_000, at: [50_000])
        #expect(none.map(\.durationMicroseconds) == [60_000])
    }

    /// A segment that starts with a P frame: its first part is not independent.
    @Test func firstPartOfASegmentWithoutLeadingKeyFrame() throws {
        var ts = SyntheticSegment()
        ts.tables()
        ts.add(.sps, pts: 126_000, randomAccess: false)
        ts.add(.p, pts: 129_600, randomAccess: false)
        ts.add(.idr, pts: 133_200, randomAccess: true)
        let parts = try TransportStreamParts.cut(ts.bytes, segmentDurationMicroseconds: 120_000, at: [40_000, 80_000])
        #expect(parts.map(\.independent) == [false, false, true])
    }

    /// B-frames: decode order I0 P3 B1 B2 P6 B4 B5 (frame numbers are presentation times). A cut
    /// goes only where every frame before it presents before every frame after it (before P3 or
    /// P6), and the part starts at the earliest PTS after the cut.
    @Test func reorderedFrames() throws {
        var ts = SyntheticSegment()
        ts.tables()
        var offsets: [Int64] = []
        for (index, frame) in [0, 3, 1, 2, 6, 4, 5].enumerated() {
            offsets.append(Int64(ts.bytes.count))
            ts.add(index == 0 ? .idr : .p, pts: 126_000 + UInt64(frame) * 3_600, randomAccess: index == 0)
        }
        let parts = try TransportStreamParts.cut(ts.bytes, segmentDurationMicroseconds: 280_000, at: [40_000, 100_000])
        #expect(parts.map(\.offset) == [0, offsets[1], offsets[4]])
        #expect(parts.map(\.durationMicroseconds) == [40_000, 120_000, 120_000])
    }

    /// Decode order I0 P4 B1 B2 B3 P8 B5 B6 B7: B3 is the first packet whose frames from there on
    /// start at or after 100 ms (120 ms), but P4 came before it and presents later, so the cut
    /// waits for P8, whose part starts with B5 (200 ms).
    @Test func noCutWhereAnEarlierFramePresentsLater() throws {
        var ts = SyntheticSegment()
        ts.tables()
        var offsets: [Int64] = []
        for (index, frame) in [0, 4, 1, 2, 3, 8, 5, 6, 7].enumerated() {
            offsets.append(Int64(ts.bytes.count))
            ts.add(index == 0 ? .idr : .p, pts: 126_000 + UInt64(frame) * 3_600, randomAccess: index == 0)
        }
        let parts = try TransportStreamParts.cut(ts.bytes, segmentDurationMicroseconds: 360_000, at: [100_000])
        #expect(parts.map(\.offset) == [0, offsets[5]])
        #expect(parts.map(\.durationMicroseconds) == [200_000, 160_000])
    }

    @Test func cutTimesForAPartTarget() {
        func times(_ duration: Int64, _ target: Int64) -> [Int64] {
            TransportStreamParts.cutTimes(segmentDurationMicroseconds: duration, partTargetMicroseconds: target)
        }
        #expect(times(2_000_000, 400_000) == [400_000, 800_000, 1_200_000, 1_600_000])
        #expect(times(2_000_000, 500_000) == [500_000, 1_000_000, 1_500_000])
        #expect(times(2_000_000, 333_334) == [333_334, 666_668, 1_000_002, 1_333_336, 1_666_670])
        // No part longer than the target: the remainder is a short last part.
        #expect(times(2_100_000, 400_000) == [400_000, 800_000, 1_200_000, 1_600_000, 2_000_000])
        #expect(times(300_000, 400_000) == [])
        #expect(times(2_000_000, 2_000_000) == [])
        #expect(times(2_000_000, 0) == [] && times(2_000_000, -5) == [])
    }

    // MARK: Real segments

    /// ffmpeg's audio-only fixture: every part starts where an audio PES packet starts and is
    /// independent.
    @Test func audioOnlyFixture() throws {
        let bytes = try Fixture.bytes("audio_only_aac.ts")
        let probe = try TransportStreamProbe.probe(bytes)
        let duration = probe.durationMicroseconds
        let times = TransportStreamParts.cutTimes(segmentDurationMicroseconds: duration, partTargetMicroseconds: duration / 4)
        let parts = TransportStreamParts.cut(bytes, probe: probe, segmentDurationMicroseconds: duration, at: times)
        #expect(parts.count > 1, "\(parts)")
        #expect(parts.allSatisfy { $0.independent })
        Self.checkCoverage(parts, bytes, duration, "audio_only_aac.ts")
        try Self.checkStarts(parts, bytes, probe, "audio_only_aac.ts")
    }

    /// Every demo segment cut at 0.4 s steps: five parts per segment in every rendition, each at
    /// most 0.45 s and at least 85 % of the longest part of any rendition (HLS-RULES F3 with one
    /// PART-TARGET for the channel), adding up to the 2.000 s EXTINF.
    @Test func demoSegments() throws {
        let demo = IFrameIndexTests.publicDirectory.appendingPathComponent("demo")
        let renditions = try FileManager.default.contentsOfDirectory(atPath: demo.path).filter { !$0.hasSuffix(".m3u8") }.sorted()
        #expect(renditions == ["audio-alt", "v0", "v1", "v2"])
        let cutTimes = TransportStreamParts.cutTimes(segmentDurationMicroseconds: 2_000_000, partTargetMicroseconds: 400_000)
        #expect(cutTimes == [400_000, 800_000, 1_200_000, 1_600_000])

        var durations: [String: Set<[Int64]>] = [:]
        for rendition in renditions {
            let files = try FileManager.default.contentsOfDirectory(atPath: demo.appendingPathComponent(rendition).path)
                .filter { $0.hasPrefix("seg-") && $0.hasSuffix(".ts") }.sorted()
            #expect(files.count == 10, "\(rendition)")
            for file in files {
                let name = "\(rendition)/\(file)"
                let bytes = [UInt8](try Data(contentsOf: demo.appendingPathComponent(name)))
                let probe = try TransportStreamProbe.probe(bytes)
                let parts = TransportStreamParts.cut(bytes, probe: probe, segmentDurationMicroseconds: 2_000_000, at: cutTimes)
                #expect(parts.count == 5, "\(name): \(parts)")
                Self.checkCoverage(parts, bytes, 2_000_000, name)
                try Self.checkStarts(parts, bytes, probe, name)
                if probe.video != nil {
                    #expect(parts.map(\.independent) == [true, false, false, false, false], "\(name): one IDR, at the start")
                    #expect(parts.allSatisfy { $0.durationMicroseconds == 400_000 }, "\(name): 10 frames each")
                } else {
                    #expect(parts.allSatisfy { $0.independent }, "\(name)")
                }
                durations[rendition, default: []].insert(parts.map(\.durationMicroseconds))
            }
        }
        let all = durations.values.flatMap { $0.flatMap { $0 } }
        let longest = try #require(all.max())
        #expect(longest <= 450_000)
        for (rendition, sets) in durations {
            for set in sets {
                #expect(set.allSatisfy { $0 * 100 >= longest * 85 }, "\(rendition): \(set) against \(longest)")
            }
        }
        for rendition in renditions {
            let text = durations[rendition, default: []].sorted { $0.lexicographicallyPrecedes($1) }
                .map { "[" + $0.map { String(format: "%.6f", Double($0) / 1e6) }.joined(separator: " ") + "]" }
            print("demo parts \(rendition): \(text.joined(separator: ", ")) (longest of all: \(longest) µs)")
        }
    }

    // MARK: Helpers

    /// The parts are contiguous, packet-aligned, non-empty and cover the file; their durations are
    /// positive and add up to the segment's.
    static func checkCoverage(_ parts: [MediaPart], _ bytes: [UInt8], _ duration: Int64, _ name: String) {
        var offset: Int64 = 0
        for part in parts {
            #expect(part.offset == offset, "\(name): \(part) does not follow \(offset)")
            #expect(part.offset % Int64(size) == 0 && part.length > 0, "\(name): \(part)")
            #expect(part.durationMicroseconds > 0, "\(name): \(part)")
            offset = part.end
        }
        #expect(offset == Int64(bytes.count), "\(name): parts end at \(offset) of \(bytes.count)")
        #expect(parts.reduce(0) { $0 + $1.durationMicroseconds } == duration, "\(name)")
    }

    /// Each part after the first starts with packets of no elementary stream (tables), then the
    /// first packet of a PES packet of the timing stream; every packet of the part before belongs
    /// to it.
    static func checkStarts(_ parts: [MediaPart], _ bytes: [UInt8], _ probe: SegmentProbe, _ name: String) throws {
        let timing = try #require(probe.videoPID ?? probe.audioPID)
        let streams = Set(probe.streams.map(\.pid))
        for part in parts.dropFirst() {
            var offset = Int(part.offset)
            while offset < Int(part.end), !streams.contains(IFrameIndexTests.pid(bytes, offset)) { offset += size }
            #expect(offset < Int(part.end), "\(name): \(part) holds no stream")
            guard offset < Int(part.end) else { continue }
            #expect(IFrameIndexTests.pid(bytes, offset) == timing && IFrameIndexTests.unitStart(bytes, offset), "\(name): \(part)")
        }
    }
}
