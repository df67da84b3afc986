import FoundationEssentials
import HeadwaterConfiguration
import HeadwaterHLS
import HeadwaterLiveWindow

/// How an upstream's URLs map to source paths (the paths push ingest would use), and the upstream
/// playlists rewritten to refer to those paths, so that the live window follows a pulled channel
/// exactly like a pushed one.
///
/// A URL below the directory of the entry playlist keeps its path relative to it
/// (`…/live/demo/v1.m3u8` → `v1.m3u8`, rendition `v1`; `…/live/demo/v1/a.ts` → `v1/a.ts`). Others get
/// `ext-{hash}/{name}`. Components are reduced to letters, digits, `-`, `_` (and `.` in file names);
/// a query string, a byte range or a cleaned-up name adds a short hash or offset to the name, so
/// distinct upstream resources never share a path. Segment types push does not know are stored as
/// `.m4s` (fMP4 and CMAF names) or `.ts`.
struct UpstreamLayout: Sendable {
    enum Kind: Sendable { case playlist, segment }

    /// A resource to download into the store: a media segment (or byte range of one) or an init section.
    struct Download: Sendable, Hashable {
        var url: URL
        var range: ByteRange?
        var path: String
        /// The upstream media sequence number of a media segment; `nil` for an init section.
        var sequence: UInt64?
        var duration: HLSDuration?
    }

    let entry: URL
    /// The entry playlist's directory path, ending in `/`.
    let directory: String

    init(entry: URL) {
        self.entry = entry
        let path = entry.path(percentEncoded: false)
        directory = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "/"
    }

    /// `uri` resolved against `base` (RFC 3986 §5.2); `nil` when it is not a URL.
    static func resolve(_ uri: String, against base: URL) -> URL? {
        URL(string: uri, relativeTo: base)?.absoluteURL
    }

    /// The source path of `url`.
    func path(for url: URL, kind: Kind, range: ByteRange? = nil) -> String {
        let full = url.path(percentEncoded: false)
        var components: [String] = []
        if url.scheme == entry.scheme, url.host() == entry.host(), url.port == entry.port, full.hasPrefix(directory) {
            components = full.dropFirst(directory.count).split(separator: "/").map(String.init)
        }
        if components.isEmpty || components.count > 4 {
            let parent = url.absoluteString.prefix { $0 != "?" && $0 != "#" }.split(separator: "/").dropLast()
            let name = full.split(separator: "/").last.map(String.init) ?? "index"
            components = ["ext-" + Self.hash(parent.joined(separator: "/")), name]
        }
        let directories = components.dropLast().map { Self.clean($0, dots: false) }
        let name = components.last!
        var ext = IngestPath.fileExtension(name)
        var stem = ext.isEmpty ? name : String(name.dropLast(ext.count + 1))
        switch kind {
        case .playlist:
            if ext != "m3u8" { stem = name }
            ext = "m3u8"
        case .segment:
            if !IngestPath.segmentExtensions.contains(ext) {
                stem = name
                ext = ["m4v", "m4a", "cmfv", "cmfa", "cmft", "mp4a", "mp4v"].contains(ext) ? "m4s" : "ts"
            }
        }
        var cleaned = Self.clean(stem, dots: kind == .segment)
        if cleaned != stem || cleaned.count > 48 { cleaned = String(cleaned.prefix(40)) + "-h" + Self.hash(stem) }
        if let range { cleaned += "-o\(range.offset ?? 0)-\(range.length)" }
        if let query = url.query(percentEncoded: true), !query.isEmpty { cleaned += "-q" + Self.hash(query) }
        return (directories + ["\(cleaned).\(ext)"]).joined(separator: "/")
    }

    /// A relative reference that resolves to `path` from the playlist at `playlistPath`
    /// (``IngestPath`` resolution: `../` climbs out of the playlist's directory).
    static func reference(from playlistPath: String, to path: String) -> String {
        let depth = playlistPath.split(separator: "/").count - 1
        return String(repeating: "../", count: max(0, depth)) + path
    }

    /// The upstream multivariant playlist at `url` with every media playlist URI rewritten to its
    /// source path, and those playlists' URLs and paths (each once).
    func rewrite(_ playlist: MultivariantPlaylist, at url: URL) -> (MultivariantPlaylist, [(url: URL, path: String)]) {
        var rewritten = playlist
        var media: [(url: URL, path: String)] = []
        func map(_ uri: String) -> String {
            guard let absolute = Self.resolve(uri, against: url) else { return uri }
            let path = self.path(for: absolute, kind: .playlist)
            if !media.contains(where: { $0.path == path }) { media.append((absolute, path)) }
            return path
        }
        for index in rewritten.variants.indices { rewritten.variants[index].uri = map(rewritten.variants[index].uri) }
        for index in rewritten.renditions.indices {
            if let uri = rewritten.renditions[index].uri { rewritten.renditions[index].uri = map(uri) }
        }
        return (rewritten, media)
    }

    /// The upstream media playlist at `url` (source path `path`) as the window should see it, and
    /// what must be downloaded for it (`fetch` mode).
    ///
    /// - `fetch`: segment and EXT-X-MAP URIs point at source paths; a byte range becomes a resource
    ///   of its own (downloaded with `Range`), so nothing Headwater serves depends on upstream offsets.
    /// - `reference`: segment and EXT-X-MAP URIs become absolute upstream URLs; nothing is downloaded.
    ///
    /// Key URIs become absolute in both modes: clients fetch keys from the upstream's key server.
    ///
    /// A relay republishes whole segments: a low-latency upstream's parts, preload hints, rendition
    /// reports, PART-INF and SERVER-CONTROL, and the tags of its segment still being produced, are
    /// dropped (parts are not fetched; the window would list them and then find no file).
    func rewrite(
        _ playlist: MediaPlaylist, at url: URL, path playlistPath: String, mode: HeadwaterConfiguration.Channel.PullSource.Mode
    ) -> (MediaPlaylist, [Download]) {
        var rewritten = playlist
        if playlist.partInformation != nil || playlist.serverControl != nil || !playlist.preloadHints.isEmpty {
            rewritten.partInformation = nil
            rewritten.serverControl = nil
            rewritten.preloadHints = []
            rewritten.renditionReports = []
            rewritten.trailingTags = SegmentTags()
            for index in rewritten.segments.indices where !rewritten.segments[index].tags.parts.isEmpty {
                rewritten.segments[index].tags.parts = []
            }
        }
        var downloads: [Download] = []
        let ranges = playlist.resolvedByteRanges()
        for index in rewritten.segments.indices {
            var segment = rewritten.segments[index]
            if let map = segment.tags.map, let absolute = Self.resolve(map.uri, against: url) {
                let range = map.byteRange.map { ByteRange(length: $0.length, offset: $0.offset ?? 0) }
                switch mode {
                case .fetch:
                    let path = self.path(for: absolute, kind: .segment, range: range)
                    segment.tags.map = MediaInitializationSection(uri: Self.reference(from: playlistPath, to: path))
                    downloads.append(Download(url: absolute, range: range, path: path))
                case .reference:
                    segment.tags.map = MediaInitializationSection(uri: absolute.absoluteString, byteRange: range)
                }
            }
            segment.tags.keys = segment.tags.keys.map { key in
                guard let uri = key.uri, let absolute = Self.resolve(uri, against: url) else { return key }
                var key = key
                key.attributes["URI"] = .quoted(absolute.absoluteString)
                return key
            }
            if !segment.tags.gap, let absolute = Self.resolve(segment.uri, against: url) {
                let range = segment.byteRange == nil ? nil : ranges[index].map { ByteRange(length: $0.length, offset: $0.offset) }
                switch mode {
                case .fetch where segment.byteRange == nil || range != nil:
                    let path = self.path(for: absolute, kind: .segment, range: range)
                    segment.uri = Self.reference(from: playlistPath, to: path)
                    segment.byteRange = nil
                    downloads.append(
                        Download(
                            url: absolute, range: range, path: path,
                            sequence: playlist.effectiveMediaSequence + UInt64(index), duration: segment.duration))
                case .fetch:
                    break  // a range without an offset to follow: the window lists it as a gap
                case .reference:
                    segment.uri = absolute.absoluteString
                }
            }
            rewritten.segments[index] = segment
        }
        return (rewritten, downloads)
    }

    /// `text` with every character other than letters, digits, `-`, `_` (and `.` when `dots`)
    /// replaced by `_`; never empty.
    static func clean(_ text: String, dots: Bool) -> String {
        let cleaned = String(
            text.unicodeScalars.map { scalar -> Character in
                switch scalar.value {
                case 48...57, 65...90, 97...122, 45, 95: Character(scalar)
                case 46 where dots: "."
                default: "_"
                }
            })
        return cleaned.isEmpty || cleaned.allSatisfy({ $0 == "." }) ? "index" : cleaned
    }

    /// Eight hex digits of FNV-1a.
    static func hash(_ text: some StringProtocol) -> String {
        var hasher = FNV1a64()
        hasher.update(text.utf8)
        return String(hasher.hexDigest.prefix(8))
    }
}
