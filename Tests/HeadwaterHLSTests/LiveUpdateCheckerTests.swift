import HeadwaterHLS
import Testing

private func media(_ text: String) throws -> MediaPlaylist { try PlaylistParser().parseMedia(Array(text.utf8)) }

/// The bugs found in `MediaPlaylist.removingSegmentsFromHead(_:)`.
@Suite struct RemovingSegmentsFromHeadTests {
    @Test func keepsTheKeyOfEveryKeyFormat() throws {
        let playlist = try media(
            """
            #EXTM3U
            #EXT-X-VERSION:5
            #EXT-X-TARGETDURATION:6
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://k1",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="k1",KEYFORMAT="identity"
            #EXTINF:5.005,
            s0.ts
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="k2",KEYFORMAT="identity"
            #EXTINF:5.005,
            s1.ts
            #EXTINF:5.005,
            s2.ts
            #EXTINF:5.005,
            s3.ts
            #EXTINF:5.005,
            s4.ts

            """)
        let slid = playlist.removingSegmentsFromHead(1)
        #expect(Set(slid.effectiveKeys(at: 0)) == Set(playlist.effectiveKeys(at: 1)))
        #expect(slid.segments[0].tags.keys.map(\.uri) == ["skd://k1", "k2"])
        #expect(LiveUpdateChecker.check(previous: playlist, next: slid).isEmpty)
    }

    @Test func keepsTheOpeningDateRangeWhileLaterTagsOfItsIDRemain() throws {
        let playlist = try media(
            """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:6
            #EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:00:00.000Z
            #EXT-X-DATERANGE:ID="ad",START-DATE="2026-11-21T17:00:00.000Z",PLANNED-DURATION=5.005
            #EXTINF:5.005,
            ad.ts
            #EXT-X-DISCONTINUITY
            #EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:00:05.005Z
            #EXT-X-DATERANGE:ID="ad",DURATION=5.005
            #EXTINF:5.005,
            s1.ts
            #EXTINF:5.005,
            s2.ts
            #EXTINF:5.005,
            s3.ts
            #EXTINF:5.005,
            s4.ts

            """)
        let slid = playlist.removingSegmentsFromHead(1)
        #expect(slid.segments[0].tags.dateRanges.map(\.id) == ["ad", "ad"])
        #expect(slid.segments[0].tags.dateRanges.first?.startDate != nil)
        #expect(PlaylistValidator.validate(slid).isEmpty)
        #expect(LiveUpdateChecker.check(previous: playlist, next: slid).isEmpty)
        // Once no tag of the ID remains and the range has ended, it goes.
        #expect(slid.removingSegmentsFromHead(1).segments[0].tags.dateRanges.isEmpty)
    }

    @Test func writesTheDiscontinuitySequenceWhileDiscontinuitiesRemain() throws {
        let playlist = try media(
            """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:6
            #EXT-X-MEDIA-SEQUENCE:10
            #EXTINF:5.005,
            s0.ts
            #EXTINF:5.005,
            s1.ts
            #EXTINF:5.005,
            s2.ts
            #EXT-X-DISCONTINUITY
            #EXTINF:5.005,
            s3.ts
            #EXTINF:5.005,
            s4.ts

            """)
        let slid = playlist.removingSegmentsFromHead(1)
        #expect(slid.discontinuitySequence == 0)
        #expect(PlaylistValidator.validate(slid).isEmpty)
        #expect(playlist.removingSegmentsFromHead(4).discontinuitySequence == 1)
    }
}
