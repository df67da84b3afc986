import HeadwaterHLS
import HeadwaterRuntime
import NIOCore
import Testing

@Suite("Playlist rendering")
struct PlaylistRenderingTests {
    func rendered(_ playlist: MediaPlaylist) throws -> (RenderedPlaylist, MediaPlaylist) {
        let rendered = PlaylistRendering.render(playlist, tag: "demo-v0", version: 7, publishedAt: 1_795_282_560)
        return (rendered, try PlaylistParser().parseMedia(Array(buffer: rendered.body)))
    }

    @Test("a media playlist is written with EXT-X-VERSION of at least 3: its EXTINFs are decimal")
    func versionForDecimalEXTINF() throws {
        let playlist = MediaPlaylist(
            targetDuration: 2, mediaSequence: 10, segments: [MediaSegment(uri: "a.ts", duration: .seconds(2))])
        let (rendered, parsed) = try rendered(playlist)
        #expect(String(buffer: rendered.body).contains("#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n"))
        #expect(String(buffer: rendered.body).contains("#EXTINF:2.000,\n"))
        #expect(parsed.version == 3)
        #expect(PlaylistValidator.validate(parsed).filter { $0.severity == .error }.isEmpty)
    }

    @Test("a feature that needs a higher version raises it (EXT-X-MAP: 6)")
    func versionFollowsFeatures() throws {
        var playlist = MediaPlaylist(targetDuration: 2, segments: [MediaSegment(uri: "a.m4s", duration: .seconds(2))])
        playlist.segments[0].map = MediaInitializationSection(uri: "init.mp4")
        #expect(try rendered(playlist).1.version == 6)
    }

    @Test("the gzip body is the identity body compressed, under its own ETag")
    func gzip() throws {
        let playlist = MediaPlaylist(targetDuration: 2, segments: [MediaSegment(uri: "a.ts", duration: .seconds(2))])
        let (rendered, _) = try rendered(playlist)
        #expect(Gzip.decompress(Array(buffer: rendered.gzipBody)) == Array(buffer: rendered.body))
        #expect(rendered.entityTag == "\"demo-v0-7\"" && rendered.gzipEntityTag == "\"demo-v0-7-gz\"")
    }

    @Test("a shared playlist is served with its open segment undated, dated once complete (hls.js)")
    func openSegmentServedUndated() throws {
        var playlist = MediaPlaylist(targetDuration: 2)
        playlist.mediaSequence = 10
        var first = MediaSegment(uri: "10.ts", duration: HLSDuration(microseconds: 2_000_000))
        first.tags.programDateTime = ProgramDateTime(millisecondsSinceEpoch: 1_795_282_560_000)
        playlist.segments = [first]
        playlist.trailingTags.discontinuity = true
        playlist.trailingTags.programDateTime = ProgramDateTime(millisecondsSinceEpoch: 1_795_282_562_000)
        let (_, served) = try rendered(playlist)
        #expect(served.trailingTags.discontinuity)
        #expect(served.trailingTags.programDateTime == nil)
        #expect(served.segments.first?.tags.programDateTime == first.tags.programDateTime)
    }
}
