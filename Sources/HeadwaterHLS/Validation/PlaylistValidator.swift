/// Lists the rules of ../shared/HLS-RULES.md a single playlist breaks.
///
/// Validation is about semantics: the parser has already rejected syntax errors (attribute types,
/// required attributes, duplicate tags, missing URIs). Every issue carries the rule id, `.error` for
/// a MUST and `.warning` for a SHOULD, a one-line message with the values involved, and where it
/// is. Issues come back ordered by location (header tags, then segments and their date ranges in
/// playlist order, then the footer); validation never throws.
///
/// Rules that need more than one playlist (reload-to-reload rules) live in ``LiveUpdateChecker``;
/// rules that need HTTP, timing or the media bytes (B6, B12's 90–110 %, B14, C7–C9, E2's measured
/// peak, G*) are the poller's job.
public enum PlaylistValidator {
    public static func validate(_ playlist: Playlist) -> [ValidationIssue] {
        switch playlist {
        case .media(let media): return validate(media)
        case .multivariant(let multivariant): return validate(multivariant)
        }
    }

    public static func validate(_ playlist: MediaPlaylist) -> [ValidationIssue] {
        var report = IssueReport()
        checkVersion(playlist, into: &report)
        checkSegments(playlist, into: &report)
        checkHeader(playlist, into: &report)
        checkLowLatency(playlist, into: &report)
        checkDateRanges(playlist, into: &report)
        return report.sorted(by: LocationOrder(playlist))
    }

    public static func validate(_ playlist: MultivariantPlaylist) -> [ValidationIssue] {
        var report = IssueReport()
        checkVersion(playlist, into: &report)
        checkRenditions(playlist, into: &report)
        checkVariants(playlist, into: &report)
        checkSessionTags(playlist, into: &report)
        return report.sorted(by: LocationOrder(playlist))
    }
}

// MARK: - Collecting issues

/// The issues found so far, in the order the checks ran.
struct IssueReport {
    var issues: [ValidationIssue] = []

    mutating func error(_ rule: String, _ message: String, at location: PlaylistLocation) {
        issues.append(ValidationIssue(rule: rule, severity: .error, message, at: location))
    }

    mutating func warning(_ rule: String, _ message: String, at location: PlaylistLocation) {
        issues.append(ValidationIssue(rule: rule, severity: .warning, message, at: location))
    }

    mutating func append(contentsOf other: IssueReport) { issues.append(contentsOf: other.issues) }

    /// Stable sort by location: issues at one location keep the order the checks found them in.
    func sorted(by order: LocationOrder) -> [ValidationIssue] {
        issues.enumerated()
            .sorted { lhs, rhs in
                let l = order.key(lhs.element.location)
                let r = order.key(rhs.element.location)
                return l != r ? l < r : lhs.offset < rhs.offset
            }
            .map(\.element)
    }
}

/// Orders locations as they appear in the canonical serialization of a playlist.
struct LocationOrder {
    /// The segment index of each date range's first occurrence (`segments.count` for trailing tags).
    private var dateRangeSegment: [String: Int] = [:]

    init(_ playlist: MediaPlaylist) {
        for (index, segment) in playlist.segments.enumerated() {
            for range in segment.tags.dateRanges where dateRangeSegment[range.id] == nil {
                dateRangeSegment[range.id] = index
            }
        }
        for range in playlist.trailingTags.dateRanges where dateRangeSegment[range.id] == nil {
            dateRangeSegment[range.id] = playlist.segments.count
        }
    }

    init(_ playlist: MultivariantPlaylist) {}

    private static let headerTags = [
        "EXT-X-VERSION", "EXT-X-INDEPENDENT-SEGMENTS", "EXT-X-START", "EXT-X-DEFINE", "EXT-X-TARGETDURATION",
        "EXT-X-MEDIA-SEQUENCE", "EXT-X-DISCONTINUITY-SEQUENCE", "EXT-X-PLAYLIST-TYPE", "EXT-X-I-FRAMES-ONLY",
        "EXT-X-PART-INF", "EXT-X-SERVER-CONTROL", "EXT-X-SKIP", "EXT-X-SESSION-DATA", "EXT-X-SESSION-KEY",
        "EXT-X-CONTENT-STEERING",
    ]
    private static let footerTags = ["EXT-X-PART", "EXT-X-PRELOAD-HINT", "EXT-X-RENDITION-REPORT", "EXT-X-ENDLIST"]

    /// (section, index, sub-index): playlist, header tags, body (segments/renditions), variants,
    /// I-frame variants, footer tags.
    func key(_ location: PlaylistLocation) -> (Int, Int, Int) {
        switch location {
        case .playlist: return (0, 0, 0)
        case .tag(let name):
            if let rank = Self.headerTags.firstIndex(of: name) { return (1, rank, 0) }
            if let rank = Self.footerTags.firstIndex(of: name) { return (5, rank, 0) }
            return (1, Self.headerTags.count, 0)
        case .segment(let index): return (2, index, 0)
        case .dateRange(let id): return (2, dateRangeSegment[id] ?? Int.max, 1)
        case .rendition(let index): return (2, index, 0)
        case .variant(let index): return (3, index, 0)
        case .iFrameVariant(let index): return (4, index, 0)
        case .line(let line): return (0, line, 1)
        }
    }
}

// MARK: - Shared helpers

extension HLSDuration {
    /// The sum, saturating instead of trapping: hostile playlists can list durations whose total
    /// does not fit in 64 bits, and validation must report, never crash.
    static func saturatingSum(_ durations: some Sequence<HLSDuration>) -> HLSDuration {
        var total: Int64 = 0
        for duration in durations {
            let (sum, overflow) = total.addingReportingOverflow(duration.microseconds)
            total = overflow ? (duration.microseconds < 0 ? .min : .max) : sum
        }
        return HLSDuration(microseconds: total)
    }

    /// `self × factor`, saturating instead of trapping.
    func saturatingTimes(_ factor: Int64) -> HLSDuration {
        let (product, overflow) = microseconds.multipliedReportingOverflow(by: factor)
        return HLSDuration(microseconds: overflow ? (microseconds < 0) != (factor < 0) ? .min : .max : product)
    }
}

extension PlaylistValidator {
    /// Every KEY tag of a media playlist with the index of the segment it precedes
    /// (`segments.count` for the trailing tags).
    static func keyTags(_ playlist: MediaPlaylist) -> [(key: Key, segment: Int)] {
        var result: [(Key, Int)] = []
        for (index, segment) in playlist.segments.enumerated() {
            for key in segment.tags.keys { result.append((key, index)) }
        }
        for key in playlist.trailingTags.keys { result.append((key, playlist.segments.count)) }
        return result
    }

    /// Whether a URI names a fragmented MP4 / CMAF resource (by its path extension).
    static func isFragmentedMP4(_ uri: String) -> Bool {
        var path = Substring(uri)
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return false }
        let ext = path[path.index(after: dot)...].lowercased()
        return ["mp4", "m4s", "m4v", "m4a", "cmfv", "cmfa", "cmft", "cmfm"].contains(ext)
    }

    /// Whether the text holds a variable reference (`{$name}`, §4.3).
    static func hasVariableReference(_ text: String) -> Bool {
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if previous == UInt8(ascii: "{") && byte == UInt8(ascii: "$") { return true }
            previous = byte
        }
        return false
    }

    static func hasVariableReference(_ list: AttributeList) -> Bool {
        list.attributes.contains { hasVariableReference($0.value.text) }
    }

    /// Whether two dates are more than a millisecond apart (without trapping on extreme dates).
    static func differ(_ a: ProgramDateTime, _ b: ProgramDateTime) -> Bool {
        let (difference, overflow) = a.millisecondsSinceEpoch.subtractingReportingOverflow(b.millisecondsSinceEpoch)
        return overflow || abs(difference) > 1
    }

    /// Seconds for messages: `6.507`, `18.000`.
    static func show(_ duration: HLSDuration) -> String { duration.description }

    /// Whether two values of the same attribute are equal, comparing dates as instants, decimals as
    /// numbers and hexadecimal sequences as bytes (so `60.0` equals `60.000`).
    static func sameValue(_ lhs: AttributeValue, _ rhs: AttributeValue) -> Bool {
        if lhs == rhs { return true }
        switch (lhs, rhs) {
        case (.quoted(let l), .quoted(let r)):
            if let a = ProgramDateTime(iso8601: l), let b = ProgramDateTime(iso8601: r) { return a == b }
            return false
        case (.token(let l), .token(let r)):
            if let a = HLSDuration(decimal: l, allowNegative: true),
                let b = HLSDuration(decimal: r, allowNegative: true)
            {
                return a == b
            }
            if let a = HexSequence.decode(l), let b = HexSequence.decode(r) { return a == b }
            return false
        default:
            return false
        }
    }

    /// An attribute value as written in the playlist, shortened for a one-line message.
    static func show(_ value: AttributeValue) -> String {
        let raw: String
        switch value {
        case .quoted(let q): raw = "\"\(q)\""
        case .token(let t): raw = t
        }
        return raw.utf8.count > 40 ? String(raw.prefix(37)) + "..." : raw
    }
}
