import HeadwaterHTTP
import Testing

@Test(arguments: [
    ("/live/news/master.m3u8", "application/vnd.apple.mpegurl", true),
    ("/live/news/720p.M3U8", "application/vnd.apple.mpegurl", true),
    ("/live/news/720p.m3u8?_HLS_msn=3", "application/vnd.apple.mpegurl", true),
    ("list.m3u", "audio/mpegurl", true),
    ("/live/news/720p/seg1.ts", "video/mp2t", false),
    ("seg.TS", "video/mp2t", false),
    ("seg.m4s", "video/mp4", false),
    ("init.mp4", "video/mp4", false),
    ("seg.cmfv", "video/mp4", false),
    ("seg.m4v", "video/mp4", false),
    ("audio.m4a", "audio/mp4", false),
    ("audio.cmfa", "audio/mp4", false),
    ("audio.aac", "audio/aac", false),
    ("audio.mp3", "audio/mpeg", false),
    ("audio.ac3", "audio/ac3", false),
    ("audio.ec3", "audio/eac3", false),
    ("subs.vtt", "text/vtt", true),
    ("subs.webvtt", "text/vtt", true),
    ("key.key", "application/octet-stream", false),
    ("/index.html", "text/html; charset=utf-8", true),
    ("/index.htm", "text/html; charset=utf-8", true),
    ("/app.js", "text/javascript; charset=utf-8", true),
    ("/app.mjs", "text/javascript; charset=utf-8", true),
    ("/style.css", "text/css; charset=utf-8", true),
    ("/status.json", "application/json", true),
    ("/logo.svg", "image/svg+xml", true),
    ("/notes.txt", "text/plain; charset=utf-8", true),
    ("/logo.png", "image/png", false),
    ("/photo.jpg", "image/jpeg", false),
    ("/photo.JPEG", "image/jpeg", false),
    ("/favicon.ico", "image/x-icon", false),
    // Defaults.
    ("/no-extension", "application/octet-stream", false),
    ("/dir.m3u8/file", "application/octet-stream", false),
    ("/file.", "application/octet-stream", false),
    ("/file.unknown", "application/octet-stream", false),
    ("/.m3u8", "application/vnd.apple.mpegurl", true),
    ("", "application/octet-stream", false),
    ("/a.tsx", "application/octet-stream", false),
    ("/a.t", "application/octet-stream", false),
    ("/a?x=.m3u8", "application/octet-stream", false),
    ("/a.ts#frag", "video/mp2t", false),
] as [(String, String, Bool)])
func contentTypeByExtension(_ path: String, _ value: String, _ compressible: Bool) {
    let type = ContentType.forPath(path)
    #expect(type.value == value)
    #expect(type.isCompressible == compressible)
    #expect(ContentType.isCompressible(fieldValue: type.value) == compressible)
}

@Test(arguments: [
    ("application/vnd.apple.mpegurl", true),
    ("Application/VND.Apple.MPEGURL", true),
    ("application/vnd.apple.mpegurl; charset=utf-8", true),
    ("application/x-mpegURL", true),
    ("audio/mpegurl", true),
    ("text/vtt", true),
    ("text/html;charset=utf-8", true),
    (" text/css ", true),
    ("application/json", true),
    ("application/javascript", true),
    ("image/svg+xml", true),
    ("video/mp2t", false),
    ("video/mp4", false),
    ("application/octet-stream", false),
    ("application/jsonx", false),
    ("text/", false),
    ("", false),
] as [(String, Bool)])
func compressibleFieldValues(_ value: String, _ compressible: Bool) {
    #expect(ContentType.isCompressible(fieldValue: value) == compressible)
}
