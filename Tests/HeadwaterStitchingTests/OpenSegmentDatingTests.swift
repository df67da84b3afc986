import HeadwaterHLS
import HeadwaterStitching
import Testing

/// The open segment is served undated (``MediaPlaylist/datingOnlyCompleteSegments``), by both ways
/// a media playlist is served: stitched (``StitchedPlaylistTemplate``) and shared
/// (`PlaylistRendering`, in `PlaylistRenderingTests`). The playlist here is the shape that stopped
/// hls.js 1.6 for good, as a stitched session 2 s into an ad break showed it (trimmed): the
/// break's first segment complete, dated and carrying the break's `EXT-X-DATERANGE`, the next one
/// open, after a discontinuity, with a date, and not every segment dated.
@Suite("The open segment is dated once complete")
struct OpenSegmentDatingTests {
    static let stalledHlsJs = """
        #EXTM3U
        #EXT-X-VERSION:6
        #EXT-X-TARGETDURATION:2
        #EXT-X-PART-INF:PART-TARGET=0.4
        #EXT-X-MEDIA-SEQUENCE:898124336
        #EXT-X-DISCONTINUITY-SEQUENCE:89812417
        #EXT-X-PROGRAM-DATE-TIME:2026-12-02T21:57:54.000Z
        #EXTINF:2.000,
        /live/demo/v2/898124336.ts
        #EXTINF:2.000,
        /live/demo/v2/898124337.ts
        #EXTINF:2.000,
        /live/demo/v2/898124338.ts
        #EXT-X-PART:DURATION=0.400,URI="/live/demo/v2/898124339.ts",INDEPENDENT=YES,BYTERANGE="24816@0"
        #EXTINF:2.000,
        /live/demo/v2/898124339.ts
        #EXT-X-DISCONTINUITY
        #EXT-X-PROGRAM-DATE-TIME:2026-12-02T21:58:00.000Z
        #EXT-X-DATERANGE:ID="sched-1796248680000",CLASS="com.headwater.ad-break",START-DATE="2026-12-02T21:58:00.000Z",PLANNED-DURATION=6.000
        #EXT-X-PART:DURATION=0.400,URI="/live/demo/v2/898124340.ts",INDEPENDENT=YES,BYTERANGE="18424@0"
        #EXTINF:2.000,
        /live/demo/v2/898124340.ts
        #EXT-X-DISCONTINUITY
        #EXT-X-PROGRAM-DATE-TIME:2026-12-02T21:58:02.000Z
        #EXT-X-PART:DURATION=0.400,URI="/live/demo/v2/898124341.ts",INDEPENDENT=YES,BYTERANGE="23876@0"
        #EXT-X-PRELOAD-HINT:TYPE=PART,URI="/live/demo/v2/898124341.ts",BYTERANGE-START=23876,BYTERANGE-LENGTH=14100

        """

    @Test("the parsed model keeps the open segment's date; the stitched bytes leave it out and keep the rest")
    func stitchedBytesLeaveTheOpenSegmentUndated() throws {
        let model = try PlaylistParser().parseMedia(Array(Self.stalledHlsJs.utf8))
        #expect(model.trailingTags.programDateTime != nil && model.trailingTags.discontinuity)
        let template = StitchedPlaylistTemplate(model, placeholder: "ph")
        let served = try PlaylistParser().parseMedia(template.bytes(sessionText: Array("ph".utf8)))
        #expect(served.trailingTags.programDateTime == nil, "no date before the open segment's parts")
        #expect(served.trailingTags.discontinuity, "its discontinuity stays")
        #expect(served.trailingTags.parts == model.trailingTags.parts)
        #expect(served.segments == model.segments, "every complete segment as it was, dates included")
        #expect(served.preloadHints == model.preloadHints)
        #expect(model.datingOnlyCompleteSegments.trailingTags.programDateTime == nil)
        var undated = model
        undated.trailingTags.programDateTime = nil
        #expect(undated.datingOnlyCompleteSegments == undated, "nothing else changes")
    }
}
