import HeadwaterHLS
import Testing

/// The shortest end-to-end check of the library: a live playlist parses, serializes canonically
/// and parses back to an equal value.
@Test func liveWindowRoundTrips() throws {
    let text = """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-TARGETDURATION:6
        #EXT-X-MEDIA-SEQUENCE:42
        #EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00.000Z
        #EXTINF:6.006,
        a.ts
        #EXT-X-DISCONTINUITY
        #EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:06.006Z
        #EXTINF:5.000,
        b.ts

        """
    let playlist = try PlaylistParser().parseMedia(Array(text.utf8))
    #expect(playlist.mediaSequenceNumber(at: 1) == 43)
    #expect(playlist.discontinuitySequenceNumbers() == [0, 1])
    #expect(PlaylistSerializer.string(playlist) == text)
}
