import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import NIOHTTP1
import Testing

/// The request-targets issue 19 added (`{rendition}.iframes.m3u8` on `/live` and `/ssai`, and
/// `/keys/{channel}/{index}.key`), and that a shared I-frame playlist is served from the
/// snapshot's ``ChannelSnapshot/iFramePlaylists``, never looked up as a media playlist.
let iFrameRouteTable: [RouteCase] = [
    // I-frame playlists: a rendition name has no dots, so `v0.iframes` is never a rendition.
    .init("/live/demo/v0.iframes.m3u8", .iFramePlaylist(channel: "demo", rendition: "v0")),
    .init("/live/demo/audio%20en.iframes.m3u8", .iFramePlaylist(channel: "demo", rendition: "audio en")),
    .init("/live/demo/v0.iframes.m3u8?_HLS_msn=4", .iFramePlaylist(channel: "demo", rendition: "v0")),
    .init("/live/demo/v0.iframes.m3u8?_HLS_msn=x", rejectedBecause: "_HLS_msn must be a non-negative integer"),
    .init("/live/demo/v0.iframes", .notFound),
    // A playlist file name that leaves a dot-name (`.` of `..m3u8`, found by the `request-target`
    // fuzz target) or nothing as its rendition names none.
    .init("/live/demo/..m3u8", .notFound),
    .init("/live/demo/...m3u8", .notFound),
    .init("/live/demo/..iframes.m3u8", .notFound),
    .init("/live/demo/.iframes.m3u8", .notFound),
    .init("/live/demo/.hidden.m3u8", .notFound),
    .init("/ssai/demo/..m3u8?session=a.b", .notFound),
    .init("/ssai/de.iframes.m3u8ma/..m3u8?_HLS_m2/babc.def", .notFound),
    .init("/ssai/demo/..iframes.m3u8", .notFound),
    .init("/live/demo/v0.iframes.m3u8/extra", .segment(channel: "demo", rendition: "v0.iframes.m3u8", name: "extra")),
    .init("/live/demo/v0.iframes.m3u8/x/y", .notFound),
    .init("/live/demo/v0/x.iframes.m3u8", .segment(channel: "demo", rendition: "v0", name: "x.iframes.m3u8")),
    .init(
        "/ssai/demo/v0.iframes.m3u8?session=abc.def",
        .stitchedIFramePlaylist(channel: "demo", rendition: "v0", session: "abc.def")),
    .init("/ssai/demo/v0.iframes.m3u8", .stitchedIFramePlaylist(channel: "demo", rendition: "v0", session: nil)),
    .init(
        "/ssai/demo/v0.m3u8?session=abc.def", .stitchedPlaylist(channel: "demo", rendition: "v0", session: "abc.def")),
    // Keys: the index as written (the responder checks it), with what entitles the request.
    .init("/keys/demo/3.key", .key(channel: "demo", index: "3", session: nil, token: nil)),
    .init("/keys/demo/3.key?token=T0k", .key(channel: "demo", index: "3", session: nil, token: "T0k")),
    .init("/keys/demo/3.key?session=a.b", .key(channel: "demo", index: "3", session: "a.b", token: nil)),
    .init(
        "/keys/demo/3.key?session=a.b&token=T0k&x=1", .key(channel: "demo", index: "3", session: "a.b", token: "T0k")),
    .init("/keys/demo/x.key", .key(channel: "demo", index: "x", session: nil, token: nil)),
    .init("/keys/demo/007.key", .key(channel: "demo", index: "007", session: nil, token: nil)),
    .init("/keys/demo/.key", .notFound),
    .init("/keys/demo/1.key/extra", .notFound),
    .init("/keys/demo/1.KEY", .notFound),
    .init("/keys/demo/1", .notFound),
    .init("/keys/demo", .notFound),
    .init("/keys", .notFound),
    .init("/keys/demo/", .notFound),
]

@Suite("I-frame and key routes")
struct IFrameRouteTests {
    @Test(arguments: iFrameRouteTable)
    func parses(_ testCase: RouteCase) {
        #expect(Route.parse(testCase.target) == testCase.expected)
    }

    @Test("an I-frame playlist target is not a media playlist named `v0.iframes`")
    func iFramesAreNoRendition() throws {
        let route = try Route.parse("/live/demo/v0.iframes.m3u8").get()
        #expect(route != .mediaPlaylist(channel: "demo", rendition: "v0.iframes"))
        let stitched = try Route.parse("/ssai/demo/v0.iframes.m3u8?session=s").get()
        #expect(stitched != .stitchedPlaylist(channel: "demo", rendition: "v0.iframes", session: "s"))
    }

    @Test func templatesAndMethods() {
        #expect(Route.iFramePlaylist(channel: "d", rendition: "v0").template == "/live/{channel}/{rendition}.iframes.m3u8")
        #expect(
            Route.stitchedIFramePlaylist(channel: "d", rendition: "v0", session: "secret").template
                == "/ssai/{channel}/{rendition}.iframes.m3u8")
        #expect(Route.key(channel: "d", index: "1", session: "s", token: "t").template == "/keys/{channel}/{index}.key")
        for route in [
            Route.iFramePlaylist(channel: "d", rendition: "v0"),
            .stitchedIFramePlaylist(channel: "d", rendition: "v0", session: nil),
            .key(channel: "d", index: "1", session: nil, token: nil),
        ] {
            #expect(route.allowedMethods == [.GET, .HEAD, .OPTIONS], "\(route)")
        }
    }

    // MARK: - Serving

    static let iFramesText =
        "#EXTM3U\n#EXT-X-VERSION:5\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:7\n#EXT-X-I-FRAMES-ONLY\n"
        + "#EXT-X-MAP:URI=\"v0/seg7.ts\",BYTERANGE=\"376@0\"\n#EXTINF:6.000,\n#EXT-X-BYTERANGE:9024@376\nv0/seg7.ts\n"
    static let decoyText = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.000,\ndecoy-media-playlist.ts\n"

    /// `demo` with renditions `v0` (an I-frame playlist) and `v1` (none), and a media playlist
    /// keyed `v0.iframes` that a request must never get.
    static func content() -> FakeContent {
        var content = Fixture.content()
        var demo = content.channels["demo"]!
        demo.mediaPlaylists["v0"] = Fixture.playlist(Fixture.mediaText, tag: "demo-v0", targetDuration: 6)
        demo.mediaPlaylists["v0.iframes"] = Fixture.playlist(decoyText, tag: "decoy", targetDuration: 6)
        demo.iFramePlaylists["v0"] = Fixture.playlist(iFramesText, tag: "demo-v0-iframes", targetDuration: 6)
        content.channels["demo"] = demo
        return content
    }

    /// Both paths of a connection: the fast path (a plain GET) and the full path (a conditional one).
    @Test("GET /live/demo/v0.iframes.m3u8 serves the I-frame playlist, on either path", arguments: ["", "If-None-Match: \"other\"\r\n"])
    func servesTheIFramePlaylist(extraField: String) throws {
        let harness = try PipelineHarness(content: Self.content())
        defer { harness.finish() }
        for _ in 0..<2 {  // the second from the fast path's cache, when it keeps one
            let response = try harness.send("GET /live/demo/v0.iframes.m3u8 HTTP/1.1\r\nHost: o\r\n\(extraField)\r\n")
            #expect(response.status == 200)
            #expect(response.text == Self.iFramesText, "not the media playlist keyed v0.iframes: \(response.text)")
            #expect(response.header("etag") == "\"demo-v0-iframes\"")
            #expect(response.header("content-type")?.hasPrefix("application/vnd.apple.mpegurl") == true)
            #expect(response.header("cache-control")?.contains("max-age=") == true, "\(response.headers)")
        }
        let media = try harness.send("GET /live/demo/v0.m3u8 HTTP/1.1\r\nHost: o\r\n\(extraField)\r\n")
        #expect(media.status == 200 && media.text == Fixture.mediaText)
    }

    @Test("a rendition without an I-frame playlist, or no such rendition, is a 404 with a one-line reason")
    func missingIFramePlaylistIs404() throws {
        let harness = try PipelineHarness(content: Self.content())
        defer { harness.finish() }
        let noIFrames = try harness.send("GET /live/demo/v1.iframes.m3u8 HTTP/1.1\r\nHost: o\r\n\r\n")
        #expect(noIFrames.status == 404)
        #expect(noIFrames.text.contains("has no I-frame playlist"), "\(noIFrames.text)")
        #expect(noIFrames.text.split(separator: "\n").count == 1)
        let noRendition = try harness.send("GET /live/demo/zz.iframes.m3u8 HTTP/1.1\r\nHost: o\r\n\r\n")
        #expect(noRendition.status == 404)
        #expect(!noRendition.text.contains("#EXTM3U"))
        let noChannel = try harness.send("GET /live/nosuch/v0.iframes.m3u8 HTTP/1.1\r\nHost: o\r\n\r\n")
        #expect(noChannel.status == 404)
    }
}
