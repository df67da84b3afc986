/// The path of an uploaded file below `/ingest/{channel}/`, checked and normalised once at the
/// security boundary, and the naming rules that follow from it.
public struct IngestPath: Sendable, Hashable, CustomStringConvertible {
    /// What an upload is, by extension.
    public enum Kind: Sendable, Hashable {
        /// `.m3u8`: parsed and buffered, never stored.
        case playlist
        /// Media, init sections, subtitles and keys: streamed to disk.
        case segment
    }

    /// The checked components, e.g. `["v0", "seg12.ts"]`.
    public let components: [String]
    public let kind: Kind

    /// Segment types accepted (HLS segments, fMP4 init sections, subtitles, keys).
    public static let segmentExtensions: Set<String> = ["ts", "m4s", "mp4", "aac", "vtt", "key"]
    static let maxDepth = 8
    static let maxComponentLength = 255

    /// Checks `components` (the request path after `/ingest/{channel}/`, already split at `/` and
    /// percent-decoded). Refuses what could escape the channel's directory or confuse the mapping
    /// from paths to renditions: `..`, `.`, empty components (an absolute path or `//`), NUL and
    /// backslashes, and anything that is not a playlist or a segment type.
    public init(_ components: [String]) throws(IngestRefusal) {
        guard !components.isEmpty else { throw .badPath("empty ingest path") }
        guard components.count <= Self.maxDepth else {
            throw .badPath("ingest path has \(components.count) components, at most \(Self.maxDepth) allowed")
        }
        for component in components {
            if component.isEmpty { throw .badPath("ingest path has an empty component (absolute path or '//')") }
            if component == "." || component == ".." { throw .badPath("ingest path must not contain '\(component)'") }
            if component.utf8.count > Self.maxComponentLength {
                throw .badPath("ingest path component longer than 255 bytes")
            }
            if component.utf8.contains(where: {
                $0 == 0 || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") || $0 < 0x20 || $0 == 0x7F
            }) {
                throw .badPath("ingest path contains a NUL, control character, '/' or '\\' inside a component")
            }
        }
        let ext = Self.fileExtension(components[components.count - 1])
        if ext == "m3u8" {
            kind = .playlist
        } else if Self.segmentExtensions.contains(ext) {
            kind = .segment
        } else {
            let name = components[components.count - 1]
            throw IngestRefusal("unsupported file type \"\(name)\" (expected .m3u8, .ts, .m4s, .mp4, .aac, .vtt or .key)",
                reason: .unsupportedType)
        }
        self.components = components
    }

    /// `v0/seg12.ts`.
    public var description: String { components.joined(separator: "/") }

    /// The lower-cased extension of the last component, without the dot (`ts`).
    public var fileExtension: String { Self.fileExtension(components[components.count - 1]) }

    package static func fileExtension(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }

    /// The rendition a media playlist feeds: its directory when it has one (`v0/index.m3u8` → `v0`),
    /// else its file name without `.m3u8` (`x_0.m3u8` → `x_0`, as ffmpeg names variants). A
    /// playlist named `master.m3u8` becomes `media`, so it cannot shadow `/live/{channel}/master.m3u8`.
    public static func renditionName(forPlaylist path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        var name: Substring
        if parts.count >= 2 {
            name = parts[parts.count - 2]
        } else {
            name = parts.last ?? ""
            if name.lowercased().hasSuffix(".m3u8") { name = name.dropLast(5) }
        }
        return name == "master" ? "media" : String(name)
    }

    /// Whether a rendition name can appear in `/live/{channel}/{rendition}.m3u8` as is.
    static func isValidRenditionName(_ name: String) -> Bool {
        Naming.isValid(name)
    }

    /// Resolves a URI found in the playlist at `playlistPath` to the ingest path it names (RFC 3986
    /// §5.2 for relative-path references), or `nil` for an absolute URL or path (the encoder's view
    /// of the server is not ours), a path that climbs above the channel's root, or an empty result.
    /// Query and fragment are ignored: the upload was stored under its path.
    package static func resolve(_ uri: String, relativeTo playlistPath: String) -> String? {
        var reference = Substring(uri)
        if let end = reference.firstIndex(where: { $0 == "?" || $0 == "#" }) { reference = reference[..<end] }
        let firstSegment = reference.prefix { $0 != "/" }
        guard !reference.isEmpty, !reference.hasPrefix("/"), !firstSegment.contains(":") else { return nil }
        var stack = Array(playlistPath.split(separator: "/", omittingEmptySubsequences: true).dropLast())
        for part in reference.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..":
                guard !stack.isEmpty else { return nil }
                stack.removeLast()
            default: stack.append(part)
            }
        }
        return stack.isEmpty ? nil : stack.joined(separator: "/")
    }

    /// `Content-Type` of a stored file, by extension (the same table as the HTTP layer's).
    package static func contentType(forExtension ext: String) -> String {
        switch ext {
        case "ts": return "video/mp2t"
        case "m4s", "mp4": return "video/mp4"
        case "aac": return "audio/aac"
        case "vtt": return "text/vtt"
        default: return "application/octet-stream"
        }
    }
}
