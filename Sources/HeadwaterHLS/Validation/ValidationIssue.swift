/// One rule a playlist (or a pair of consecutive live playlists) breaks. Validation reports; it
/// never throws: the origin logs and counts issues, `headwater lint` prints them, tests assert on them.
public struct ValidationIssue: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable, Comparable {
        /// A MUST of the spec is broken: players may fail.
        case error
        /// A SHOULD, or a practice players and CDNs depend on.
        case warning

        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs == .error && rhs == .warning }
    }

    /// The rule id from ../shared/HLS-RULES.md (`B1`, `C3`, `D8`, …).
    public var rule: String
    public var severity: Severity
    /// One line: what is wrong, with the values involved.
    public var message: String
    /// Where in the playlist (for a pair check: in the *next* playlist).
    public var location: PlaylistLocation

    public init(rule: String, severity: Severity = .error, _ message: String, at location: PlaylistLocation = .playlist) {
        self.rule = rule
        self.severity = severity
        self.message = message
        self.location = location
    }

    public var description: String { "\(rule): \(severity.rawValue): \(message)" }
}

/// Where a validation issue is, in terms of the model (the source map turns it into a line).
public enum PlaylistLocation: Sendable, Hashable {
    /// The playlist as a whole.
    case playlist
    /// A playlist-level tag, by name (`EXT-X-TARGETDURATION`).
    case tag(String)
    /// `segments[index]`.
    case segment(Int)
    /// The date range with this ID (its first occurrence).
    case dateRange(id: String)
    /// `variants[index]` of a multivariant playlist.
    case variant(Int)
    /// `renditions[index]` of a multivariant playlist.
    case rendition(Int)
    /// `iFrameVariants[index]`.
    case iFrameVariant(Int)
    /// A 1-based line of the text, for rules checked on the text (A13).
    case line(Int)
}

extension SourceMap {
    /// The line a location refers to, or 1 when unknown.
    public func line(for location: PlaylistLocation) -> Int {
        switch location {
        case .playlist: return 1
        case .tag(let name): return tags[name] ?? 1
        case .segment(let index): return segments.indices.contains(index) ? segments[index].extinf : 1
        case .dateRange(let id): return dateRanges[id] ?? 1
        case .variant(let index): return variants.indices.contains(index) ? variants[index] : 1
        case .rendition(let index): return renditions.indices.contains(index) ? renditions[index] : 1
        case .iFrameVariant: return 1
        case .line(let line): return line
        }
    }
}
