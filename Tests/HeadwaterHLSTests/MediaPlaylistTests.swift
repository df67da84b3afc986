import HeadwaterHLS
import HeadwaterTesting
import Testing

@Suite("MediaPlaylist: derived values and sliding the window")
struct MediaPlaylistTests {
    @Test("discontinuity sequence numbers count DISCONTINUITY tags on and before each segment (§6.2.2)")
    func discontinuitySequenceNumbers() throws {
        var p = try parseMedia(
            mediaHeader + [
                "#EXT-X-DISCONTINUITY-SEQUENCE:5", "#EXTINF:6,", "a.ts", "#EXT-X-DISCONTINUITY", "#EXTINF:6,", "b.ts", "#EXTINF:6,",
                "c.ts", "#EXT-X-DISCONTINUITY", "#EXTINF:6,", "d.ts",
            ])
        #expect(p.discontinuitySequenceNumbers() == [5, 6, 6, 7])
        p.discontinuitySequence = nil
        #expect(p.discontinuitySequenceNumbers() == [0, 1, 1, 2])
        #expect(p.effectiveDiscontinuitySequence == 0)
    }

    @Test("media sequence numbers and total duration")
    func mediaSequenceNumbers() throws {
        let p = try parseMedia(
            mediaHeader + ["#EXT-X-MEDIA-SEQUENCE:100", "#EXTINF:6.006,", "a.ts", "#EXTINF:2.002,", "b.ts", "#EXTINF:0.5,", "c.ts"])
        #expect((0..<3).map(p.mediaSequenceNumber(at:)) == [100, 101, 102])
        #expect(p.duration == HLSDuration(microseconds: 8_508_000))
        #expect(MediaPlaylist(targetDuration: 6).duration == .zero)
    }

    @Test("program date times: nil before the first, explicit where written, extrapolated after (§6.3.3)")
    func programDateTimes() throws {
        let p = try parseMedia(
            mediaHeader + [
                "#EXTINF:6,", "a.ts", "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00.000+01:00", "#EXTINF:6.0065,", "b.ts",
                "#EXTINF:6.0065,", "c.ts", "#EXT-X-DISCONTINUITY", "#EXTINF:4,", "d.ts",
                "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T16:40:00.000Z", "#EXTINF:6,", "e.ts", "#EXTINF:6,", "f.ts",
            ])
        let start: Int64 = 1_795_278_960_000  // 2026-11-21T16:36:00Z
        let dates = p.programDateTimes()
        #expect(dates.count == 6)
        #expect(dates[0] == nil)
        #expect(dates[1] == ProgramDateTime(millisecondsSinceEpoch: start, zone: .offset(minutes: 60)))
        #expect(dates[2] == ProgramDateTime(millisecondsSinceEpoch: start + 6_007, zone: .offset(minutes: 60)), "6.0065 s rounds to 6.007 s")
        // Extrapolation continues across a discontinuity without a date (B7 asks servers not to do that).
        #expect(dates[3] == ProgramDateTime(millisecondsSinceEpoch: start + 12_014, zone: .offset(minutes: 60)))
        #expect(dates[4] == ProgramDateTime(millisecondsSinceEpoch: start + 240_000, zone: .utc), "an explicit date wins")
        #expect(dates[5] == ProgramDateTime(millisecondsSinceEpoch: start + 246_000, zone: .utc))
    }

    @Test("program date times of a playlist without any are all nil")
    func noProgramDateTimes() throws {
        let p = try parseMedia(mediaHeader + ["#EXTINF:6,", "a.ts", "#EXTINF:6,", "b.ts"])
        #expect(p.programDateTimes() == [nil, nil])
    }

    @Test("resolved byte ranges continue the previous sub-range of the same resource (§4.4.4.2, B8)")
    func resolvedByteRanges() throws {
        let p = try parseMedia(
            mediaHeader + [
                "#EXTINF:6,", "#EXT-X-BYTERANGE:1000@0", "all.ts",  // explicit
                "#EXTINF:6,", "#EXT-X-BYTERANGE:500", "all.ts",  // continues: 1000
                "#EXTINF:6,", "#EXT-X-BYTERANGE:250", "all.ts",  // continues: 1500
                "#EXTINF:6,", "#EXT-X-BYTERANGE:100", "other.ts",  // another resource: start unknown
                "#EXTINF:6,", "#EXT-X-BYTERANGE:100@7", "other.ts",  // explicit
                "#EXTINF:6,", "whole.ts",  // no range
                "#EXTINF:6,", "#EXT-X-BYTERANGE:10", "other.ts",  // previous segment is another resource
                "#EXTINF:6,", "#EXT-X-BYTERANGE:10@0", "x.ts", "#EXTINF:6,", "x.ts",  // the whole of x.ts
                "#EXTINF:6,", "#EXT-X-BYTERANGE:10", "x.ts",  // the previous segment of x.ts had no range
            ])
        let ranges = p.resolvedByteRanges().map { $0.map { [$0.offset, $0.length] } }
        #expect(ranges == [[0, 1000], [1000, 500], [1500, 250], nil, [7, 100], nil, nil, [0, 10], nil, nil])
    }

    @Test("the keys in effect, one per KEYFORMAT, in order of first appearance (§4.4.4.4)")
    func effectiveKeys() throws {
        let p = try parseMedia(
            mediaHeader + [
                "#EXTINF:6,", "clear.ts", #"#EXT-X-KEY:METHOD=AES-128,URI="k1""#, "#EXTINF:6,", "a.ts",
                #"#EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://1",KEYFORMAT="com.apple.streamingkeydelivery""#, "#EXTINF:6,", "b.ts",
                #"#EXT-X-KEY:METHOD=AES-128,URI="k2""#, "#EXTINF:6,", "c.ts", "#EXT-X-KEY:METHOD=NONE", "#EXTINF:6,", "d.ts",
            ])
        #expect(p.effectiveKeys(at: 0) == [])
        #expect(p.effectiveKeys(at: 1).map(\.uri) == ["k1"])
        #expect(p.effectiveKeys(at: 2).map(\.uri) == ["k1", "skd://1"])
        #expect(p.effectiveKeys(at: 3).map(\.uri) == ["k2", "skd://1"])
        #expect(p.effectiveKeys(at: 4).map(\.method) == ["NONE", "SAMPLE-AES"])
    }

    @Test("the MAP in effect is the last one at or before the segment (§4.4.4.5)")
    func effectiveMap() throws {
        let p = try parseMedia(
            mediaHeader + [
                "#EXTINF:6,", "a.ts", #"#EXT-X-MAP:URI="i1.mp4""#, "#EXTINF:6,", "b.m4s", "#EXTINF:6,", "c.m4s",
                #"#EXT-X-MAP:URI="i2.mp4",BYTERANGE="10@0""#, "#EXTINF:6,", "d.m4s",
            ])
        #expect((0..<4).map { p.effectiveMap(at: $0)?.uri } == [nil, "i1.mp4", "i1.mp4", "i2.mp4"])
    }

    // MARK: removingSegmentsFromHead

    @Test("removing segments advances MEDIA-SEQUENCE by the count and DISCONTINUITY-SEQUENCE by the removed tags (§6.2.2)")
    func sequenceArithmetic() throws {
        let p = try parseMedia(
            mediaHeader + [
                "#EXT-X-MEDIA-SEQUENCE:10", "#EXT-X-DISCONTINUITY-SEQUENCE:3", "#EXTINF:6,", "a.ts", "#EXT-X-DISCONTINUITY", "#EXTINF:6,",
                "b.ts", "#EXTINF:6,", "c.ts", "#EXT-X-DISCONTINUITY", "#EXTINF:6,", "d.ts", "#EXTINF:6,", "e.ts",
            ])
        let expected: [(ms: UInt64, ds: UInt64, first: String)] = [
            (10, 3, "a.ts"), (11, 3, "b.ts"), (12, 4, "c.ts"), (13, 4, "d.ts"), (14, 5, "e.ts"),
        ]
        for (count, e) in expected.enumerated() {
            let r = p.removingSegmentsFromHead(count)
            #expect(r.effectiveMediaSequence == e.ms, "count \(count)")
            #expect(r.effectiveDiscontinuitySequence == e.ds, "count \(count)")
            #expect(r.segments.first?.uri == e.first, "count \(count)")
            #expect(r.segments.count == 5 - count)
            #expect(r.discontinuitySequenceNumbers() == Array(p.discontinuitySequenceNumbers().dropFirst(count)), "count \(count)")
        }
        let all = p.removingSegmentsFromHead(5)
        #expect(all.segments.isEmpty && all.mediaSequence == 15 && all.discontinuitySequence == 5)
        #expect(p.removingSegmentsFromHead(99) == all, "the count is clamped")
        #expect(p.removingSegmentsFromHead(0) == p)
        #expect(p.removingSegmentsFromHead(-1) == p)
    }

    @Test("without MEDIA-SEQUENCE the default 0 is advanced and written")
    func absentMediaSequence() throws {
        let p = try parseMedia(mediaHeader + ["#EXTINF:6,", "a.ts", "#EXTINF:6,", "b.ts"])
        let r = p.removingSegmentsFromHead(1)
        #expect(r.mediaSequence == 1)
        #expect(r.discontinuitySequence == nil, "nothing to write when no DISCONTINUITY was removed")
    }

    @Test("the new head carries the KEY, MAP, PROGRAM-DATE-TIME and absolute byte offset in effect (B8, B9, B10)")
    func headCarriesStateInEffect() throws {
        let p = try parseMedia(
            mediaHeader + [
                #"#EXT-X-KEY:METHOD=AES-128,URI="k1",IV=0x01"#, #"#EXT-X-MAP:URI="init.mp4",BYTERANGE="700@0""#,
                "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00.000Z", "#EXTINF:6.0065,", "#EXT-X-BYTERANGE:1000@700", "all.mp4",
                "#EXTINF:6,", "#EXT-X-BYTERANGE:500", "all.mp4", "#EXTINF:6,", "#EXT-X-BYTERANGE:500", "all.mp4",
            ])
        let r = p.removingSegmentsFromHead(2)
        let head = try #require(r.segments.first)
        #expect(head.keys.map(\.uri) == ["k1"])
        #expect(head.keys.first?.iv == [0x01])
        #expect(head.map?.uri == "init.mp4")
        #expect(head.map?.byteRange == ByteRange(length: 700, offset: 0))
        #expect(head.programDateTime == ProgramDateTime(millisecondsSinceEpoch: 1_795_282_560_000 + 12_007))
        #expect(head.byteRange == ByteRange(length: 500, offset: 2_200))
        #expect(r.resolvedByteRanges().map { $0?.offset } == [2_200])
        // Segments after the head are unchanged.
        let one = p.removingSegmentsFromHead(1)
        #expect(one.segments[1] == p.segments[2])
    }

    @Test("a head that has its own KEY, MAP and date keeps them")
    func headKeepsItsOwnTags() throws {
        let p = try parseMedia(
            mediaHeader + [
                #"#EXT-X-KEY:METHOD=AES-128,URI="k1""#, #"#EXT-X-MAP:URI="i1.mp4""#, "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00.000Z",
                "#EXTINF:6,", "a.mp4", #"#EXT-X-KEY:METHOD=AES-128,URI="k2""#, #"#EXT-X-MAP:URI="i2.mp4""#,
                "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T18:00:00.000Z", "#EXTINF:6,", "b.mp4",
            ])
        let head = try #require(p.removingSegmentsFromHead(1).segments.first)
        #expect(head == p.segments[1])
    }

    @Test("a KEY of another KEYFORMAT on the new head does not drop the key still in effect (B10)")
    func headKeepsEveryKeyFormat() throws {
        let p = try parseMedia(
            mediaHeader + [
                #"#EXT-X-KEY:METHOD=SAMPLE-AES,URI="k1",KEYFORMAT="identity""#, "#EXTINF:6,", "a.mp4",
                #"#EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://1",KEYFORMAT="com.apple.streamingkeydelivery""#, "#EXTINF:6,", "b.mp4",
                "#EXTINF:6,", "c.mp4",
            ])
        for count in 1..<p.segments.count {
            let r = p.removingSegmentsFromHead(count)
            for index in r.segments.indices {
                #expect(
                    Set(r.effectiveKeys(at: index).map(\.attributes)) == Set(p.effectiveKeys(at: index + count).map(\.attributes)),
                    "removing \(count): keys of the segment now at \(index)")
            }
        }
    }

    @Test("open date ranges move to the new head; closed ones are dropped; same-ID tags merge (C12, D8)")
    func dateRangesCarried() throws {
        let p = try parseMedia(
            mediaHeader + [
                "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00.000Z",
                #"#EXT-X-DATERANGE:ID="closed",START-DATE="2026-11-21T17:36:00.000Z",DURATION=6"#,
                #"#EXT-X-DATERANGE:ID="break",START-DATE="2026-11-21T17:36:00.000Z",PLANNED-DURATION=60,SCTE35-OUT=0xFC"#,
                #"#EXT-X-DATERANGE:ID="open",START-DATE="2026-11-21T17:36:00.000Z",CLASS="c""#,
                #"#EXT-X-DATERANGE:ID="ended",START-DATE="2026-11-21T17:30:00.000Z",END-DATE="2026-11-21T17:36:11.000Z""#,
                "#EXTINF:6,", "a.ts",
                #"#EXT-X-DATERANGE:ID="break",START-DATE="2026-11-21T17:36:00.000Z",DURATION=30,SCTE35-IN=0xFD"#,
                #"#EXT-X-DATERANGE:ID="long",START-DATE="2026-11-21T17:36:06.000Z",DURATION=600"#, "#EXTINF:6,", "b.ts",
                #"#EXT-X-DATERANGE:ID="own",START-DATE="2026-11-21T17:36:12.000Z""#,
                #"#EXT-X-DATERANGE:ID="long",START-DATE="2026-11-21T17:36:06.000Z",DURATION=600,X-MORE="1""#, "#EXTINF:6,", "c.ts",
            ])
        let head = try #require(p.removingSegmentsFromHead(2).segments.first)
        #expect(head.dateRanges.map(\.id) == ["break", "open", "own", "long"])
        let merged = head.dateRanges[0]
        #expect(merged.attributes.names == ["ID", "START-DATE", "PLANNED-DURATION", "SCTE35-OUT", "DURATION", "SCTE35-IN"])
        #expect(merged.duration == .seconds(30) && merged.scte35In == [0xFD] && merged.scte35Out == [0xFC])
        #expect(head.dateRanges[3].clientAttributes.map(\.name) == ["X-MORE"], "the head's own tag is kept, not the carried copy")
        // After one segment the 6 s range has ended exactly at the head and is gone; "ended" still covers it.
        let afterOne = try #require(p.removingSegmentsFromHead(1).segments.first)
        #expect(Set(afterOne.dateRanges.map(\.id)) == ["break", "open", "ended", "long"])
    }

    @Test("a carried range whose ID the new head also has keeps every attribute (D8: later tags cannot lose attributes)")
    func carriedRangeMergesWithHeadsOwnTag() throws {
        let p = try parseMedia(
            mediaHeader + [
                "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00.000Z",
                #"#EXT-X-DATERANGE:ID="break",START-DATE="2026-11-21T17:36:00.000Z",PLANNED-DURATION=60,SCTE35-OUT=0xFC"#,
                "#EXTINF:6,", "a.ts", #"#EXT-X-DATERANGE:ID="break",START-DATE="2026-11-21T17:36:00.000Z",DURATION=30,SCTE35-IN=0xFD"#,
                "#EXTINF:6,", "b.ts",
            ])
        let head = try #require(p.removingSegmentsFromHead(1).segments.first)
        let names = Set(head.dateRanges.filter { $0.id == "break" }.flatMap(\.attributes.names))
        #expect(names == ["ID", "START-DATE", "PLANNED-DURATION", "SCTE35-OUT", "DURATION", "SCTE35-IN"])
    }

    @Test("date ranges are kept when the head has no date to compare with")
    func dateRangesWithoutProgramDateTime() throws {
        let p = try parseMedia(
            mediaHeader + [
                #"#EXT-X-DATERANGE:ID="a",START-DATE="2026-11-21T17:36:00.000Z",DURATION=1"#, "#EXTINF:6,", "a.ts", "#EXTINF:6,", "b.ts",
            ])
        #expect(p.removingSegmentsFromHead(1).segments.first?.dateRanges.map(\.id) == ["a"])
    }

    @Test("removing segments keeps every remaining segment's MSN, DSN, date, byte range and MAP (generated playlists)")
    func removalPreservesMeaning() {
        var generator = PlaylistGenerator(seed: PropertySeed.base)
        var checked = 0
        for _ in 0..<300 {
            let seed = generator.random.next()
            var local = PlaylistGenerator(seed: seed)
            let p = local.mediaPlaylist(maxSegments: 10)
            guard p.segments.count >= 2, Self.cannotOverflow(p) else { continue }
            let count = local.random.int(1...(p.segments.count - 1))
            let r = p.removingSegmentsFromHead(count)
            checked += 1
            let remaining = p.segments.count - count
            #expect(r.segments.count == remaining, "seed \(seed)")
            #expect(r.segments.dropFirst() == p.segments.dropFirst(count + 1), "seed \(seed)")
            #expect((0..<remaining).map(r.mediaSequenceNumber(at:)) == (count..<p.segments.count).map(p.mediaSequenceNumber(at:)), "seed \(seed)")
            #expect(r.discontinuitySequenceNumbers() == Array(p.discontinuitySequenceNumbers().dropFirst(count)), "seed \(seed)")
            #expect(r.programDateTimes() == Array(p.programDateTimes().dropFirst(count)), "seed \(seed)")
            #expect(
                r.resolvedByteRanges().map { $0.map { [$0.offset, $0.length] } }
                    == p.resolvedByteRanges().dropFirst(count).map { $0.map { [$0.offset, $0.length] } }, "seed \(seed)")
            #expect((0..<remaining).map { r.effectiveMap(at: $0) } == (count..<p.segments.count).map { p.effectiveMap(at: $0) }, "seed \(seed)")
            #expect(r.trailingTags == p.trailingTags && r.endList == p.endList && r.targetDuration == p.targetDuration)
        }
        #expect(checked > 100)
    }

    /// Generated sequence numbers, offsets and lengths go up to 2^64 − 1, where the arithmetic of
    /// these methods traps (see `MediaPlaylistOverflowTests`).
    static func cannotOverflow(_ p: MediaPlaylist) -> Bool {
        p.effectiveMediaSequence < 1 << 62 && p.effectiveDiscontinuitySequence < 1 << 62
            && p.segments.allSatisfy { segment in
                guard let range = segment.byteRange else { return true }
                return range.length < 1 << 40 && (range.offset ?? 0) < 1 << 40
            }
    }
}

/// Arithmetic on values the parser accepts must not trap: a hostile playlist reaches these methods
/// through the validator and the origin. Each check runs in a child process (an exit test), so a
/// trap fails the test instead of the whole run.
@Suite("MediaPlaylist: no traps on extreme values")
struct MediaPlaylistOverflowTests {
    @Test("resolvedByteRanges with a range ending past 2^64 − 1")
    func byteRangeOverflow() async {
        await #expect(processExitsWith: .success) {
            let text = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6,\n#EXT-X-BYTERANGE:2@18446744073709551615\na.ts\n"
            let p = try PlaylistParser().parseMedia(Array(text.utf8))
            _ = p.resolvedByteRanges()
        }
    }

    @Test("sliding a window whose MEDIA-SEQUENCE is 2^64 − 1")
    func mediaSequenceOverflow() async {
        await #expect(processExitsWith: .success) {
            let text = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:18446744073709551615\n"
                + "#EXTINF:6,\na.ts\n#EXTINF:6,\nb.ts\n"
            let p = try PlaylistParser().parseMedia(Array(text.utf8))
            _ = p.mediaSequenceNumber(at: 1)
            _ = p.removingSegmentsFromHead(1)
        }
    }

    @Test("duration of ten segments of 999,999,999,999 s")
    func durationOverflow() async {
        await #expect(processExitsWith: .success) {
            let text = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n" + String(repeating: "#EXTINF:999999999999,\na.ts\n", count: 10)
            let p = try PlaylistParser().parseMedia(Array(text.utf8))
            _ = p.duration
        }
    }

    @Test("programDateTimes extrapolated over 10,000 segments of 999,999,999,999 s")
    func programDateTimeOverflow() async {
        await #expect(processExitsWith: .success) {
            let text =
                "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00Z\n"
                + String(repeating: "#EXTINF:999999999999,\na.ts\n", count: 10_000)
            let p = try PlaylistParser().parseMedia(Array(text.utf8))
            _ = p.programDateTimes()
        }
    }
}
