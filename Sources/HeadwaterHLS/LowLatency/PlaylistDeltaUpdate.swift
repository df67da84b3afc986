/// Playlist Delta Updates (RFC 8216bis-22 §6.2.5.1, §4.4.5.2; HLS-RULES F14, F15, F16): the
/// response to `_HLS_skip=YES` or `_HLS_skip=v2`, which replaces the old part of a live media
/// playlist with one `EXT-X-SKIP`, and the client's side, which merges it back into a full playlist.
///
/// Pure functions over values: the server renders `make(full, …)` per request (or once per playlist
/// version and kind); tests and any future client code use ``expand(_:previous:)``.
///
/// What is skipped, and why (each decision cites the text it rests on):
/// - **Which segments.** §6.2.5.1: "Media Segments that are further from the end of the last
///   (Parent) Media Segment in the Playlist than the Skip Boundary". A segment's distance from the
///   end is measured from its *end*: segment *i* is skipped when `end(last) − end(i) > CAN-SKIP-UNTIL`
///   (strictly). This is the reading the spec's own example takes (Apple's "Examine a Playlist Delta
///   Update": 4.00008 s segments, CAN-SKIP-UNTIL=24, 9 parents → SKIPPED-SEGMENTS=3; measuring from
///   segment starts would skip 4). It settles HLS-RULES gap 8(b). "The last (Parent) Media Segment"
///   is the last *complete* segment: the parts of the open parent don't move the boundary.
/// - **Their tags.** §4.4.5.2: "the EXT-X-SKIP tag replaces the segment URI lines and all Media
///   Segment Tags that are applied to those segments" — EXTINF, BYTERANGE, DISCONTINUITY, KEY, MAP,
///   PROGRAM-DATE-TIME, GAP, BITRATE, PART (§4.4.4), plus the ad markers and unknown tags Headwater
///   keeps with a segment. EXT-X-DATERANGE is a *Media Metadata* tag (§4.4.5), not a Media Segment
///   tag, so `_HLS_skip=YES` does **not** skip it: "All tags that were not skipped MUST remain in the
///   Playlist Delta Update" (§6.2.5.1, F14 check (c)), and §8 asks for version 10 only for "an
///   EXT-X-SKIP tag that replaces EXT-X-DATERANGE tags", which YES never does. The date ranges of
///   skipped segments therefore move, unchanged and in order, onto the first listed segment (before
///   its own): a date range is placed by its START-DATE, not by its position, so this changes no
///   meaning (the same move ``MediaPlaylist/removingSegmentsFromHead(_:)`` makes when the window slides).
/// - **The context of the first listed segment.** The KEY per KEYFORMAT, MAP, BITRATE in effect and
///   its PROGRAM-DATE-TIME (extrapolated if it was implicit, §6.3.3) are written on it, and an
///   offset-less BYTERANGE gets its absolute offset (B8): those tags applied to it in the full
///   playlist even though they were written on skipped segments, so "all tags that were not skipped
///   remain" is kept literally and the delta reads on its own (B9/B10, D7; F14's note). The spec's
///   example does not re-emit them (a client merging its previous copy doesn't need them); doing so
///   costs a few lines and spares any client that parses the delta alone.
/// - **Sequence numbers.** EXT-X-MEDIA-SEQUENCE is the full playlist's (`MS + SKIPPED-SEGMENTS` is
///   the first listed MSN, F14 (b)); "Replacing segments with the EXT-X-SKIP tag does not change the
///   value of the EXT-X-DISCONTINUITY-SEQUENCE tag" (§4.4.5.2).
/// - **Nothing old enough.** If no segment is beyond the Skip Boundary the response is still a
///   delta update, with `SKIPPED-SEGMENTS=0`: §6.2.5.1 says the server "MUST respond with a Playlist
///   Delta Update" to every such request, a v2 response must carry RECENTLY-REMOVED-DATERANGES,
///   which only EXT-X-SKIP can hold, and F14 (a) expects exactly one EXT-X-SKIP.
/// - **`v2`.** Additionally "MUST NOT contain EXT-X-DATERANGE tags that were added to the Playlist
///   more than CAN-SKIP-UNTIL seconds before the Playlist request", wherever they sit (a range
///   announced long ago may sit on a listed segment), and RECENTLY-REMOVED-DATERANGES "MUST list the
///   date ranges that were removed from the Playlist within CAN-SKIP-UNTIL seconds" (F15). When a tag
///   was added, and what was removed, is history a playlist value does not hold: the caller passes it.
///   A `v2` request for a playlist without CAN-SKIP-DATERANGES=YES is answered as `YES` (F15's
///   ambiguity (c)): §6.3.7 makes v2 valid only with that attribute, and a YES delta is one any
///   client can merge, whereas an unadvertised v2 response is one the validator flags.
/// - **Version** (A8/A9, §8): at least 9 for EXT-X-SKIP, at least 10 for a v2 delta, never below the
///   full playlist's own EXT-X-VERSION.
public enum PlaylistDeltaUpdate {
    /// What the client asked for with `_HLS_skip`.
    public enum Kind: Sendable, Hashable {
        /// `_HLS_skip=YES`: skip old segments; every date range stays.
        case segments
        /// `_HLS_skip=v2`: skip old segments and old date ranges, and list recently removed ranges.
        case segmentsAndDateRanges

        /// The kind a `_HLS_skip` value asks for: `YES` or `v2` (case-sensitive, §6.2.5.1), else `nil`.
        public init?(directive: some StringProtocol) {
            switch directive {
            case "YES": self = .segments
            case "v2": self = .segmentsAndDateRanges
            default: return nil
            }
        }
    }

    /// The Playlist Delta Update of `full`, or `nil` when `full` has no EXT-X-SERVER-CONTROL
    /// CAN-SKIP-UNTIL or has EXT-X-ENDLIST: then "a Server MUST ignore the `_HLS_skip` directive"
    /// (§6.2.5.1, F14 (f)) and the caller serves the full playlist. `nil` too for a playlist that is
    /// itself a delta (a caller error: there is no full playlist to skip from).
    ///
    /// - Parameters:
    ///   - full: the complete media playlist, as served without `_HLS_skip`.
    ///   - kind: what the request asked for; see the type's documentation for `v2` without
    ///     CAN-SKIP-DATERANGES=YES.
    ///   - isOld: for `v2` only: whether a DATERANGE tag was added to the playlist more than
    ///     CAN-SKIP-UNTIL seconds before this request (F15); those tags are left out. The default keeps
    ///     every tag, the safe side: an old range sent again is merely redundant, whereas a recent
    ///     range left out is one a client may never learn of.
    ///   - recentlyRemoved: for `v2` only: the IDs of the date ranges removed from the playlist within
    ///     CAN-SKIP-UNTIL seconds of this request (F15), written tab-separated in
    ///     RECENTLY-REMOVED-DATERANGES (possibly empty). Duplicates are written once; an ID that
    ///     cannot be written in a quoted string (empty, or holding TAB, `"`, CR or LF) cannot have been
    ///     a DATERANGE ID and is left out.
    public static func make(
        _ full: MediaPlaylist,
        kind: Kind,
        isOld: (DateRange) -> Bool = { _ in false },
        recentlyRemoved: [String] = []
    ) -> MediaPlaylist? {
        guard let boundary = full.serverControl?.canSkipUntil, !full.endList, full.skip == nil else { return nil }
        let skipsDateRanges = kind == .segmentsAndDateRanges && full.serverControl?.canSkipDateRanges == true
        let count = skippedSegmentCount(full.segments, skipBoundary: boundary)

        var delta = full
        var skip: AttributeList = [Attribute("SKIPPED-SEGMENTS", .integer(count))]
        if skipsDateRanges {
            skip["RECENTLY-REMOVED-DATERANGES"] = .quoted(writableIDs(recentlyRemoved).joined(separator: "\t"))
        }
        delta.skip = Skip(attributes: skip)
        if count > 0 {
            delta.segments = [firstListedSegment(of: full, afterSkipping: count)] + full.segments[(count + 1)...]
        }
        if skipsDateRanges { removeDateRanges(from: &delta, where: isOld) }
        delta.version = max(full.version ?? 0, PlaylistValidator.requiredVersion(delta).version)
        return delta
    }

    /// How many segments from the head of `segments` end more than `skipBoundary` before the end of
    /// the last one (§6.2.5.1; see the type's documentation for the metric). Never all of them: the
    /// last segment is 0 s from the end.
    public static func skippedSegmentCount(_ segments: [MediaSegment], skipBoundary: HLSDuration) -> Int {
        let limit = HLSDuration.saturatingSum(segments.map(\.duration)) - skipBoundary
        var end = HLSDuration.zero
        var count = 0
        for segment in segments {
            end += segment.duration
            guard end < limit else { break }
            count += 1
        }
        return count
    }

    // MARK: - The first listed segment

    /// `full.segments[count]` with the tags that applied to it from the `count` skipped segments:
    /// the KEY per KEYFORMAT, MAP and BITRATE in effect, its date, an absolute byte-range offset, and
    /// the skipped segments' date ranges (before its own, in order).
    static func firstListedSegment(of full: MediaPlaylist, afterSkipping count: Int) -> MediaSegment {
        var head = full.segments[count]
        let lastSkipped = count - 1
        // Formats the head re-keys keep the head's own KEY; the others get the one in effect. The
        // inherited keys go first so that the head's own stay in their written order.
        let ownFormats = Set(head.tags.keys.map(\.keyFormat))
        let inherited = full.effectiveKeys(at: lastSkipped).filter { !ownFormats.contains($0.keyFormat) }
        if !inherited.isEmpty { head.tags.keys = inherited + head.tags.keys }
        if head.tags.map == nil { head.tags.map = full.effectiveMap(at: lastSkipped) }
        // EXT-X-BITRATE applies up to the next BITRATE tag (§4.4.4.8).
        if head.tags.bitrate == nil {
            head.tags.bitrate = full.segments[...lastSkipped].last(where: { $0.tags.bitrate != nil })?.tags.bitrate
        }
        if head.tags.programDateTime == nil {
            head.tags.programDateTime = extrapolatedDate(of: full.segments, at: count)
        }
        // An offset-less range continues the previous sub-range of the same URI, which is skipped (B8).
        if let range = head.byteRange, range.offset == nil, let absolute = full.resolvedByteRanges()[count] {
            head.byteRange = ByteRange(length: absolute.length, offset: absolute.offset)
        }
        let carried = full.segments[..<count].flatMap(\.tags.dateRanges)
        if !carried.isEmpty { head.tags.dateRanges = carried + head.tags.dateRanges }
        return head
    }

    /// The date of `segments[index]` extrapolated from the last explicit PROGRAM-DATE-TIME before it,
    /// rounding at each step exactly as ``MediaPlaylist/programDateTimes()`` does; `nil` without one.
    static func extrapolatedDate(of segments: [MediaSegment], at index: Int) -> ProgramDateTime? {
        guard let anchor = segments[..<index].lastIndex(where: { $0.tags.programDateTime != nil }),
            var date = segments[anchor].tags.programDateTime
        else { return nil }
        for segment in segments[anchor..<index] { date = date.adding(segment.duration) }
        return date
    }

    // MARK: - v2

    /// Drops the date ranges `isOld` picks from every segment and from the trailing tags (F15: no
    /// old DATERANGE anywhere in a v2 delta, not only on skipped segments).
    private static func removeDateRanges(from delta: inout MediaPlaylist, where isOld: (DateRange) -> Bool) {
        for index in delta.segments.indices where !delta.segments[index].tags.dateRanges.isEmpty {
            let kept = delta.segments[index].tags.dateRanges.filter { !isOld($0) }
            if kept.count != delta.segments[index].tags.dateRanges.count { delta.segments[index].tags.dateRanges = kept }
        }
        if !delta.trailingTags.dateRanges.isEmpty {
            delta.trailingTags.dateRanges.removeAll(where: isOld)
        }
    }

    /// The IDs that can be written into RECENTLY-REMOVED-DATERANGES, each once, in order.
    private static func writableIDs(_ ids: [String]) -> [String] {
        var seen = Set<String>()
        return ids.filter { id in
            !id.isEmpty && !id.unicodeScalars.contains(where: { $0 == "\t" || $0 == "\"" || $0 == "\r" || $0 == "\n" })
                && seen.insert(id).inserted
        }
    }
}
