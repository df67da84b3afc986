/// Parses HLS playlists (RFC 8216bis) from bytes into ``Playlist`` values.
///
/// Strict and safe: every malformation is a ``PlaylistParseError`` naming its line; limits bound
/// memory on hostile input; no byte sequence can make it trap. It is lossless: unknown tags and
/// attributes are kept and written back by ``PlaylistSerializer``. It validates syntax and types;
/// semantic rules (EXTINF ≤ target duration, version requirements, …) are reported, not thrown,
/// by ``PlaylistValidator``.
public struct PlaylistParser: Sendable {
    /// Bounds on input size, so a hostile or broken upstream cannot exhaust memory.
    public struct Limits: Sendable, Hashable {
        /// Largest document accepted, in bytes.
        public var maxBytes: Int = 16 << 20
        /// Longest line accepted, in bytes.
        public var maxLineLength: Int = 64 << 10
        /// Most media segments (or variants plus renditions) accepted.
        public var maxSegments: Int = 100_000
        /// Most attributes in one attribute list.
        public var maxAttributes: Int = 256
        /// Most tags attached to one segment (a guard against a flood of unknown tags).
        public var maxTagsPerSegment: Int = 1_000

        public init() {}
        public static let `default` = Limits()
    }

    public var limits: Limits

    public init(limits: Limits = .default) { self.limits = limits }

    /// Parses a playlist of either kind.
    public func parse(_ bytes: [UInt8]) throws(PlaylistParseError) -> Playlist {
        try run(bytes, recordsSourceMap: false, tolerant: false).playlist
    }

    /// Parses as ``parse(_:)-([UInt8])`` does but accepts the forms ``IngestDeviation/Rule`` names,
    /// normalised so the playlist serializes canonically, and returns what it tolerated (in line
    /// order). Everything else the strict parse refuses it refuses too, with the same error.
    public func parseTolerating(_ bytes: [UInt8]) throws(PlaylistParseError)
        -> (playlist: Playlist, deviations: [IngestDeviation])
    {
        let result = try run(bytes, recordsSourceMap: false, tolerant: true)
        return (result.playlist, result.deviations)
    }

    /// ``parseTolerating(_:)`` with line numbers, for `lint`.
    public func parseToleratingWithSourceMap(_ bytes: [UInt8]) throws(PlaylistParseError)
        -> (playlist: Playlist, sourceMap: SourceMap, deviations: [IngestDeviation])
    {
        try run(bytes, recordsSourceMap: true, tolerant: true)
    }

    /// Parses a playlist of either kind from text.
    public func parse(_ text: String) throws(PlaylistParseError) -> Playlist {
        try parse(Array(text.utf8))
    }

    /// Parses a media playlist; a multivariant document is an error.
    public func parseMedia(_ bytes: [UInt8]) throws(PlaylistParseError) -> MediaPlaylist {
        switch try parse(bytes) {
        case .media(let media): return media
        case .multivariant:
            throw PlaylistParseError(.mixedPlaylistKinds, line: 1, "expected a media playlist, found a multivariant playlist")
        }
    }

    /// Parses a multivariant playlist; a media document is an error.
    public func parseMultivariant(_ bytes: [UInt8]) throws(PlaylistParseError) -> MultivariantPlaylist {
        switch try parse(bytes) {
        case .multivariant(let playlist): return playlist
        case .media:
            throw PlaylistParseError(.mixedPlaylistKinds, line: 1, "expected a multivariant playlist, found a media playlist")
        }
    }

    /// Parses and also returns where each element was found, for tools that report by line (`lint`).
    public func parseWithSourceMap(_ bytes: [UInt8]) throws(PlaylistParseError) -> (playlist: Playlist, sourceMap: SourceMap) {
        let result = try run(bytes, recordsSourceMap: true, tolerant: false)
        return (result.playlist, result.sourceMap)
    }

    private func run(_ bytes: [UInt8], recordsSourceMap: Bool, tolerant: Bool) throws(PlaylistParseError)
        -> (playlist: Playlist, sourceMap: SourceMap, deviations: [IngestDeviation])
    {
        guard bytes.count <= limits.maxBytes else {
            throw PlaylistParseError(.limitExceeded, line: 1, "playlist is \(bytes.count) bytes, limit is \(limits.maxBytes)")
        }
        let limits = self.limits
        return try bytes.withUnsafeBufferPointer {
            (buffer) throws(PlaylistParseError) -> (playlist: Playlist, sourceMap: SourceMap, deviations: [IngestDeviation]) in
            var state = ParserState(bytes: buffer, limits: limits, recordsSourceMap: recordsSourceMap, tolerant: tolerant)
            try state.run()
            let result = try state.finish()
            return (result.playlist, result.sourceMap, state.deviations)
        }
    }
}

/// Line numbers of parsed elements (1-based), for diagnostics.
public struct SourceMap: Sendable, Hashable {
    /// Per media segment: the line of its first tag (or EXTINF), of its EXTINF, and of its URI.
    public var segments: [(first: Int, extinf: Int, uri: Int)] = []
    /// Per variant stream: the line of its EXT-X-STREAM-INF.
    public var variants: [Int] = []
    /// Per rendition: the line of its EXT-X-MEDIA.
    public var renditions: [Int] = []
    /// First line of each playlist-level tag by name (`EXT-X-TARGETDURATION` → 3).
    public var tags: [String: Int] = [:]
    /// Lines of date ranges by ID (first occurrence).
    public var dateRanges: [String: Int] = [:]

    public init() {}

    public static func == (lhs: SourceMap, rhs: SourceMap) -> Bool {
        lhs.variants == rhs.variants && lhs.renditions == rhs.renditions && lhs.tags == rhs.tags
            && lhs.dateRanges == rhs.dateRanges && lhs.segments.elementsEqual(rhs.segments, by: { $0 == $1 })
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(variants)
        hasher.combine(renditions)
        hasher.combine(segments.count)
    }
}
