/// A response's `Content-Type`, chosen by file extension, and whether it is worth compressing.
///
/// Playlists follow HLS-RULES G1 (`application/vnd.apple.mpegurl`; `.m3u` as `audio/mpegurl`).
/// Segment, key and subtitle types follow common practice, which G2 records as having no
/// authoritative source: `video/mp2t`, `video/mp4`/`audio/mp4` for fMP4 and CMAF, `audio/aac`
/// for ADTS, `text/vtt`, `application/octet-stream` for keys.
public struct ContentType: Sendable, Hashable, CustomStringConvertible {
    /// The field value.
    public let value: String
    /// Text worth gzipping (G3: playlists and WebVTT SHOULD be sent gzip when accepted). Media is
    /// already compressed, and segments go out by `sendfile`, so they never are.
    public let isCompressible: Bool

    public var description: String { value }

    public init(_ value: String, isCompressible: Bool) {
        self.value = value
        self.isCompressible = isCompressible
    }

    public static let playlist = ContentType("application/vnd.apple.mpegurl", isCompressible: true)
    /// The Prometheus text exposition format, version 0.0.4.
    public static let prometheus = ContentType("text/plain; version=0.0.4; charset=utf-8", isCompressible: true)
    public static let mpegURLAudio = ContentType("audio/mpegurl", isCompressible: true)
    public static let mpegTS = ContentType("video/mp2t", isCompressible: false)
    public static let mp4Video = ContentType("video/mp4", isCompressible: false)
    public static let mp4Audio = ContentType("audio/mp4", isCompressible: false)
    public static let aac = ContentType("audio/aac", isCompressible: false)
    public static let mp3 = ContentType("audio/mpeg", isCompressible: false)
    public static let ac3 = ContentType("audio/ac3", isCompressible: false)
    public static let eac3 = ContentType("audio/eac3", isCompressible: false)
    public static let webVTT = ContentType("text/vtt", isCompressible: true)
    public static let html = ContentType("text/html; charset=utf-8", isCompressible: true)
    public static let javaScript = ContentType("text/javascript; charset=utf-8", isCompressible: true)
    public static let css = ContentType("text/css; charset=utf-8", isCompressible: true)
    public static let json = ContentType("application/json", isCompressible: true)
    public static let svg = ContentType("image/svg+xml", isCompressible: true)
    public static let plainText = ContentType("text/plain; charset=utf-8", isCompressible: true)
    public static let png = ContentType("image/png", isCompressible: false)
    public static let jpeg = ContentType("image/jpeg", isCompressible: false)
    public static let icon = ContentType("image/x-icon", isCompressible: false)
    /// Keys, unknown extensions and files without one.
    public static let octetStream = ContentType("application/octet-stream", isCompressible: false)

    /// The type for the extension of the last path segment of `path` (ASCII case-insensitive;
    /// a query string, if present, is ignored), or ``octetStream``.
    ///
    /// | extension | type |
    /// | --- | --- |
    /// | `m3u8` | ``playlist`` |
    /// | `m3u` | ``mpegURLAudio`` |
    /// | `ts` | ``mpegTS`` |
    /// | `m4s`, `mp4`, `cmfv`, `m4v` | ``mp4Video`` |
    /// | `m4a`, `cmfa` | ``mp4Audio`` |
    /// | `aac`, `mp3`, `ac3`, `ec3` | ``aac``, ``mp3``, ``ac3``, ``eac3`` |
    /// | `vtt`, `webvtt` | ``webVTT`` |
    /// | `key` | ``octetStream`` |
    /// | `html`, `htm`, `js`, `mjs`, `css`, `json`, `svg`, `txt` | text types (compressible) |
    /// | `png`, `jpg`, `jpeg`, `ico` | image types |
    public static func forPath(_ path: String) -> ContentType {
        var path = path
        return path.withUTF8 { forPath(bytes: $0) }
    }

    /// Whether a `Content-Type` field value names a compressible type: any `text/*`, the playlist
    /// types, `application/json`, `application/javascript` and `image/svg+xml`. Parameters
    /// (`; charset=…`) are ignored and the comparison is case-insensitive (media types are, G1).
    /// For a compression predicate that only sees response headers.
    public static func isCompressible(fieldValue: String) -> Bool {
        var fieldValue = fieldValue
        return fieldValue.withUTF8 { b in
            let start = HTTPSyntax.skipOWS(b, from: 0)
            var end = start
            while end < b.count, b[end] != UInt8(ascii: ";"), !HTTPSyntax.isOWS(b[end]) { end += 1 }
            let type = start..<end
            if type.count > 5, HTTPSyntax.equalsLowercase(b, start..<(start + 5), "text/") { return true }
            return HTTPSyntax.equalsLowercase(b, type, "application/vnd.apple.mpegurl")
                || HTTPSyntax.equalsLowercase(b, type, "audio/mpegurl")
                || HTTPSyntax.equalsLowercase(b, type, "application/x-mpegurl")
                || HTTPSyntax.equalsLowercase(b, type, "application/json")
                || HTTPSyntax.equalsLowercase(b, type, "application/javascript")
                || HTTPSyntax.equalsLowercase(b, type, "image/svg+xml")
        }
    }

    static func forPath(bytes b: UnsafeBufferPointer<UInt8>) -> ContentType {
        var end = b.count
        for i in 0..<b.count where b[i] == UInt8(ascii: "?") || b[i] == UInt8(ascii: "#") {
            end = i
            break
        }
        var dot = end
        var i = end
        while i > 0 {
            i -= 1
            let c = b[i]
            if c == UInt8(ascii: "/") { break }
            if c == UInt8(ascii: ".") {
                dot = i
                break
            }
        }
        guard dot < end else { return .octetStream }
        let ext = (dot + 1)..<end
        switch ext.count {
        case 2:
            if HTTPSyntax.equalsLowercase(b, ext, "ts") { return .mpegTS }
            if HTTPSyntax.equalsLowercase(b, ext, "js") { return .javaScript }
        case 3:
            if HTTPSyntax.equalsLowercase(b, ext, "m4s") { return .mp4Video }
            if HTTPSyntax.equalsLowercase(b, ext, "mp4") { return .mp4Video }
            if HTTPSyntax.equalsLowercase(b, ext, "m4v") { return .mp4Video }
            if HTTPSyntax.equalsLowercase(b, ext, "m4a") { return .mp4Audio }
            if HTTPSyntax.equalsLowercase(b, ext, "aac") { return .aac }
            if HTTPSyntax.equalsLowercase(b, ext, "mp3") { return .mp3 }
            if HTTPSyntax.equalsLowercase(b, ext, "ac3") { return .ac3 }
            if HTTPSyntax.equalsLowercase(b, ext, "ec3") { return .eac3 }
            if HTTPSyntax.equalsLowercase(b, ext, "vtt") { return .webVTT }
            if HTTPSyntax.equalsLowercase(b, ext, "key") { return .octetStream }
            if HTTPSyntax.equalsLowercase(b, ext, "m3u") { return .mpegURLAudio }
            if HTTPSyntax.equalsLowercase(b, ext, "htm") { return .html }
            if HTTPSyntax.equalsLowercase(b, ext, "mjs") { return .javaScript }
            if HTTPSyntax.equalsLowercase(b, ext, "css") { return .css }
            if HTTPSyntax.equalsLowercase(b, ext, "svg") { return .svg }
            if HTTPSyntax.equalsLowercase(b, ext, "txt") { return .plainText }
            if HTTPSyntax.equalsLowercase(b, ext, "png") { return .png }
            if HTTPSyntax.equalsLowercase(b, ext, "jpg") { return .jpeg }
            if HTTPSyntax.equalsLowercase(b, ext, "ico") { return .icon }
        case 4:
            if HTTPSyntax.equalsLowercase(b, ext, "m3u8") { return .playlist }
            if HTTPSyntax.equalsLowercase(b, ext, "cmfv") { return .mp4Video }
            if HTTPSyntax.equalsLowercase(b, ext, "cmfa") { return .mp4Audio }
            if HTTPSyntax.equalsLowercase(b, ext, "html") { return .html }
            if HTTPSyntax.equalsLowercase(b, ext, "json") { return .json }
            if HTTPSyntax.equalsLowercase(b, ext, "jpeg") { return .jpeg }
        case 6:
            if HTTPSyntax.equalsLowercase(b, ext, "webvtt") { return .webVTT }
        default:
            break
        }
        return .octetStream
    }
}
