/// A tag line Headwater does not model, kept exactly as written (without the leading `#`) so that
/// vendor tags survive a parse → serialize round trip in their original position.
public struct UnknownTag: Sendable, Hashable {
    /// The whole line after `#`, e.g. `EXT-X-PROGRAM-ID:7` or ` a comment`.
    public var text: String

    public init(_ text: String) { self.text = text }

    /// The tag name: the text up to the first `:` (the whole text if there is none).
    public var name: Substring {
        guard let colon = text.firstIndex(of: ":") else { return text[...] }
        return text[..<colon]
    }
}

/// The tags that apply to one media segment and appear before its URI (RFC 8216bis §4.4.4, §4.4.5),
/// other than EXTINF and BYTERANGE. They are written in this fixed (canonical) order:
/// DISCONTINUITY, KEY, MAP, PROGRAM-DATE-TIME, DATERANGE, ad markers, GAP, BITRATE, PART, then
/// EXTINF and BYTERANGE, then unknown tags, then the URI. (Unknown tags sit after EXTINF so that
/// they always read back as this segment's, never as header tags. After the last segment they
/// follow the other trailing tags; in a playlist with no segments they read back as header tags.)
///
/// The same structure holds the tags after the last URI of a live playlist (parts of the segment
/// being produced, a date range announced ahead of a splice): ``MediaPlaylist/trailingTags``.
public struct SegmentTags: Sendable, Hashable {
    /// `EXT-X-DISCONTINUITY` (§4.4.4.3).
    public var discontinuity: Bool = false
    /// `EXT-X-PROGRAM-DATE-TIME` (§4.4.4.6).
    public var programDateTime: ProgramDateTime?
    /// `EXT-X-GAP` (§4.4.4.7).
    public var gap: Bool = false
    /// `EXT-X-BITRATE` in kbit/s (§4.4.4.8).
    public var bitrate: UInt64?

    /// The tags most segments do not have, in one copy-on-write box, so that a typical segment
    /// (EXTINF, URI, maybe a date) costs one optional reference instead of six arrays: parsing,
    /// copying and releasing a 1,200-segment window is dominated by reference counting otherwise.
    private var rare: RareTagsBox?

    public init() {}

    public var isEmpty: Bool { self == SegmentTags() }

    /// `EXT-X-KEY` tags that appear before this segment (one per KEYFORMAT). Empty means "the key in
    /// effect continues"; see ``MediaPlaylist/effectiveKeys(at:)``.
    public var keys: [Key] {
        get { rare?.value.keys ?? [] }
        set { modifyRare { $0.keys = newValue } }
    }
    /// `EXT-X-MAP` appearing before this segment (§4.4.4.5).
    public var map: MediaInitializationSection? {
        get { rare?.value.map }
        set { modifyRare { $0.map = newValue } }
    }
    /// `EXT-X-DATERANGE` tags appearing before this segment (§4.4.5.1).
    public var dateRanges: [DateRange] {
        get { rare?.value.dateRanges ?? [] }
        set { modifyRare { $0.dateRanges = newValue } }
    }
    /// De-facto ad markers, in the order written.
    public var adMarkers: [AdMarker] {
        get { rare?.value.adMarkers ?? [] }
        set { modifyRare { $0.adMarkers = newValue } }
    }
    /// Tags Headwater does not model, in the order written.
    public var unknownTags: [UnknownTag] {
        get { rare?.value.unknownTags ?? [] }
        set { modifyRare { $0.unknownTags = newValue } }
    }
    /// `EXT-X-PART` tags of this segment (§4.4.4.9).
    public var parts: [PartialSegment] {
        get { rare?.value.parts ?? [] }
        set { modifyRare { $0.parts = newValue } }
    }

    private mutating func modifyRare(_ body: (inout RareTags) -> Void) {
        if rare == nil {
            var value = RareTags()
            body(&value)
            if value != RareTags() { rare = RareTagsBox(value) }
            return
        }
        if !isKnownUniquelyReferenced(&rare!) { rare = RareTagsBox(rare!.value) }
        body(&rare!.value)
        if rare!.value == RareTags() { rare = nil }
    }
}

private struct RareTags: Hashable, Sendable {
    var keys: [Key] = []
    var map: MediaInitializationSection?
    var dateRanges: [DateRange] = []
    var adMarkers: [AdMarker] = []
    var unknownTags: [UnknownTag] = []
    var parts: [PartialSegment] = []
}

/// Heap storage for ``RareTags``. Mutated only through `SegmentTags.modifyRare`, which copies it
/// first unless uniquely referenced, so a box is never mutated while shared across threads:
/// that makes the `@unchecked Sendable` sound.
private final class RareTagsBox: Hashable, @unchecked Sendable {
    var value: RareTags
    init(_ value: RareTags) { self.value = value }
    static func == (lhs: RareTagsBox, rhs: RareTagsBox) -> Bool { lhs === rhs || lhs.value == rhs.value }
    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}

/// A media segment: its tags, EXTINF, optional BYTERANGE, and URI (RFC 8216bis §4.4.4).
@dynamicMemberLookup
public struct MediaSegment: Sendable, Hashable {
    public var tags: SegmentTags
    /// EXTINF duration (§4.4.4.1).
    public var duration: HLSDuration
    /// The optional EXTINF title (after the comma), kept as written.
    public var title: String
    /// `EXT-X-BYTERANGE` (§4.4.4.2).
    public var byteRange: ByteRange?
    /// The URI line, as written (relative or absolute).
    public var uri: String

    public init(
        uri: String,
        duration: HLSDuration,
        title: String = "",
        byteRange: ByteRange? = nil,
        tags: SegmentTags = SegmentTags()
    ) {
        self.uri = uri
        self.duration = duration
        self.title = title
        self.byteRange = byteRange
        self.tags = tags
    }

    /// `segment.discontinuity`, `segment.programDateTime`, … read and write ``tags``.
    public subscript<T>(dynamicMember keyPath: WritableKeyPath<SegmentTags, T>) -> T {
        get { tags[keyPath: keyPath] }
        set { tags[keyPath: keyPath] = newValue }
    }
}
