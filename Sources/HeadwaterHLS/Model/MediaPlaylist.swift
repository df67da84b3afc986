/// `EXT-X-PLAYLIST-TYPE` (§4.4.3.5).
public enum PlaylistType: String, Sendable, Hashable {
    case event = "EVENT"
    case vod = "VOD"
}

/// A media playlist (RFC 8216bis §4.4.3, §4.4.4): header, segments, and the live-edge footer.
///
/// A value: the origin builds a new one per version and never mutates a published one. Tags that
/// Headwater does not model are kept in order (``UnknownTag``), so parse → serialize loses nothing.
/// Optional header fields are `nil` when the tag is absent, so absence round-trips too; use
/// ``effectiveMediaSequence`` / ``effectiveDiscontinuitySequence`` for the spec's defaults.
public struct MediaPlaylist: Sendable, Hashable {
    /// `EXT-X-VERSION` (§4.4.1.2), `nil` when absent.
    public var version: Int?
    /// `EXT-X-INDEPENDENT-SEGMENTS` (§4.4.2.1).
    public var independentSegments: Bool = false
    /// `EXT-X-START` (§4.4.2.2).
    public var start: StartPoint?
    /// `EXT-X-DEFINE` tags (§4.4.2.3).
    public var definitions: [VariableDefinition] = []
    /// `EXT-X-TARGETDURATION` in whole seconds (§4.4.3.1). Required.
    public var targetDuration: Int
    /// `EXT-X-MEDIA-SEQUENCE` (§4.4.3.2), `nil` when absent (meaning 0).
    public var mediaSequence: UInt64?
    /// `EXT-X-DISCONTINUITY-SEQUENCE` (§4.4.3.3), `nil` when absent (meaning 0).
    public var discontinuitySequence: UInt64?
    /// `EXT-X-PLAYLIST-TYPE` (§4.4.3.5). A sliding live playlist has none (B15).
    public var playlistType: PlaylistType?
    /// `EXT-X-I-FRAMES-ONLY` (§4.4.3.6).
    public var iFramesOnly: Bool = false
    /// `EXT-X-PART-INF` (§4.4.3.7).
    public var partInformation: PartInformation?
    /// `EXT-X-SERVER-CONTROL` (§4.4.3.8).
    public var serverControl: ServerControl?
    /// Unknown tags of the header (before any segment tag), in order.
    public var headerUnknownTags: [UnknownTag] = []
    /// `EXT-X-SKIP` of a Playlist Delta Update (§4.4.5.2), before the first listed segment.
    public var skip: Skip?
    public var segments: [MediaSegment] = []
    /// Tags after the last URI: the parts of the segment being produced, date ranges, unknown tags.
    public var trailingTags = SegmentTags()
    /// `EXT-X-PRELOAD-HINT` tags (§4.4.5.3).
    public var preloadHints: [PreloadHint] = []
    /// `EXT-X-RENDITION-REPORT` tags (§4.4.5.4).
    public var renditionReports: [RenditionReport] = []
    /// `EXT-X-ENDLIST` (§4.4.3.4).
    public var endList: Bool = false

    public init(targetDuration: Int, mediaSequence: UInt64? = nil, segments: [MediaSegment] = []) {
        self.targetDuration = targetDuration
        self.mediaSequence = mediaSequence
        self.segments = segments
    }

    /// MEDIA-SEQUENCE with the spec's default of 0.
    public var effectiveMediaSequence: UInt64 { mediaSequence ?? 0 }
    /// DISCONTINUITY-SEQUENCE with the spec's default of 0.
    public var effectiveDiscontinuitySequence: UInt64 { discontinuitySequence ?? 0 }

    /// Σ EXTINF of the listed segments.
    public var duration: HLSDuration {
        var total = HLSDuration.zero
        for segment in segments { total += segment.duration }
        return total
    }

    /// The media sequence number of `segments[index]`.
    public func mediaSequenceNumber(at index: Int) -> UInt64 { effectiveMediaSequence.saturatingAdd(UInt64(index)) }

    /// The discontinuity sequence number of every listed segment (§6.2.2: DS + the number of
    /// DISCONTINUITY tags before and on the segment).
    public func discontinuitySequenceNumbers() -> [UInt64] {
        var current = effectiveDiscontinuitySequence
        return segments.map { segment in
            if segment.tags.discontinuity { current = current.saturatingAdd(1) }
            return current
        }
    }

    /// The PROGRAM-DATE-TIME of every segment: explicit where written, else extrapolated forward
    /// from the previous one (§6.3.3), `nil` before the first explicit date. After a discontinuity
    /// without a date, extrapolation continues (the spec's B7 asks servers to put a date there).
    public func programDateTimes() -> [ProgramDateTime?] {
        var previous: (date: ProgramDateTime, duration: HLSDuration)?
        return segments.map { segment in
            let date = segment.tags.programDateTime ?? previous.map { $0.date.adding($0.duration) }
            if let date { previous = (date, segment.duration) }
            return date
        }
    }

    /// Absolute byte ranges: an offset-less range continues the previous sub-range of the same URI in
    /// this playlist (§4.4.4.2). `nil` for segments without a byte range or whose start is unknown.
    public func resolvedByteRanges() -> [(offset: UInt64, length: UInt64)?] {
        var nextOffset: [String: UInt64] = [:]
        var previousURI: String?
        return segments.map { segment in
            defer { previousURI = segment.uri }
            guard let range = segment.byteRange else {
                nextOffset[segment.uri] = nil
                return nil
            }
            let start: UInt64?
            if let offset = range.offset {
                start = offset
            } else if previousURI == segment.uri {
                start = nextOffset[segment.uri]
            } else {
                start = nil
            }
            guard let start else { return nil }
            let (end, overflow) = start.addingReportingOverflow(range.length)
            nextOffset[segment.uri] = overflow ? nil : end
            return (start, range.length)
        }
    }

    /// The KEY tags in effect for `segments[index]`, by KEYFORMAT (§4.4.4.4).
    public func effectiveKeys(at index: Int) -> [Key] {
        var byFormat: [String: Key] = [:]
        var order: [String] = []
        for segment in segments[...index] {
            for key in segment.tags.keys {
                if byFormat[key.keyFormat] == nil { order.append(key.keyFormat) }
                byFormat[key.keyFormat] = key
            }
        }
        return order.compactMap { byFormat[$0] }
    }

    /// The MAP in effect for `segments[index]` (§4.4.4.5).
    public func effectiveMap(at index: Int) -> MediaInitializationSection? {
        for segment in segments[...index].reversed() {
            if let map = segment.tags.map { return map }
        }
        return nil
    }

    /// The playlist after removing `count` segments from the head, as a live server must do it
    /// (§6.2.2): MEDIA-SEQUENCE grows by `count`, DISCONTINUITY-SEQUENCE by the DISCONTINUITY tags
    /// removed, and the new head keeps everything that still applies to it — the KEY and MAP in
    /// effect (B9, B10), an explicit PROGRAM-DATE-TIME (so dates stay anchored), and an absolute
    /// byte-range offset (B8). Date ranges of removed segments move to the new head while the range
    /// still covers it (C12) or while later tags of the same ID remain (D2, D8).
    public func removingSegmentsFromHead(_ count: Int) -> MediaPlaylist {
        guard count > 0, !segments.isEmpty else { return self }
        let count = min(count, segments.count)
        var result = self
        if count == segments.count {
            result.mediaSequence = effectiveMediaSequence.saturatingAdd(UInt64(count))
            result.discontinuitySequence =
                effectiveDiscontinuitySequence.saturatingAdd(UInt64(segments.filter { $0.tags.discontinuity }.count))
            result.segments = []
            return result
        }
        let dates = programDateTimes()
        let ranges = resolvedByteRanges()
        let removedDiscontinuities = segments[..<count].filter { $0.tags.discontinuity }.count
        var head = segments[count]
        // Every KEYFORMAT's key in effect (the head may re-key only some of them), the MAP, the BITRATE.
        let keys = effectiveKeys(at: count)
        if keys != head.tags.keys { head.tags.keys = keys }
        if head.tags.map == nil { head.tags.map = effectiveMap(at: count - 1) }
        if head.tags.bitrate == nil, head.byteRange == nil {
            head.tags.bitrate = segments[..<count].last(where: { $0.tags.bitrate != nil })?.tags.bitrate
        }
        if head.tags.programDateTime == nil { head.tags.programDateTime = dates[count] }
        if let range = ranges[count] { head.byteRange = ByteRange(length: range.length, offset: range.offset) }
        // Date ranges announced on removed segments stay while they may still map to the window.
        let headDate = dates[count]
        var carried: [DateRange] = []
        for segment in segments[..<count] {
            for range in segment.tags.dateRanges {
                if let index = carried.firstIndex(where: { $0.id == range.id }) {
                    // Later same-ID tags only add attributes (D8): merge, keeping START-DATE (D2).
                    for attribute in range.attributes.attributes
                    where !carried[index].attributes.contains(attribute.name) {
                        carried[index].attributes.attributes.append(attribute)
                    }
                } else {
                    carried.append(range)
                }
            }
        }
        // Keep a carried range while it may cover the head, and whenever a later same-ID tag remains
        // in the window: that tag would otherwise lose START-DATE (D2) and the attributes it had (D8).
        var remainingIDs = Set(trailingTags.dateRanges.map(\.id))
        for segment in segments[count...] { remainingIDs.formUnion(segment.tags.dateRanges.map(\.id)) }
        carried.removeAll { !remainingIDs.contains($0.id) && !Self.dateRange($0, mayCover: headDate) }
        // A range the head already has (same ID) absorbs the carried attributes it lacks; the others
        // go first, before any later same-ID tag.
        if !carried.isEmpty {
            head.tags.dateRanges = DateRange.carrying(carried, onto: head.tags.dateRanges)
        }
        result.segments = [head] + segments[(count + 1)...]
        result.mediaSequence = effectiveMediaSequence.saturatingAdd(UInt64(count))
        result.discontinuitySequence = effectiveDiscontinuitySequence.saturatingAdd(UInt64(removedDiscontinuities))
        // Once segments slide out, a playlist with discontinuities carries the sequence (C6).
        if discontinuitySequence == nil, removedDiscontinuities == 0,
            !result.segments.contains(where: { $0.tags.discontinuity })
        {
            result.discontinuitySequence = nil
        }
        return result
    }

    /// Whether a date range may still cover `date` (its end is unknown or not before it).
    static func dateRange(_ range: DateRange, mayCover date: ProgramDateTime?) -> Bool {
        guard let date, let start = range.startDate else { return true }
        if let end = range.endDate { return end > date }
        if let duration = range.duration { return start.adding(duration) > date }
        return true
    }
}

extension UInt64 {
    /// `self + other`, or `UInt64.max` instead of trapping (sequence numbers come from untrusted input).
    @inlinable
    public func saturatingAdd(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
