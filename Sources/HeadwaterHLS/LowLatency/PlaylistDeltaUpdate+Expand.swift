/// The client's side of a Playlist Delta Update (§6.3.7): "A Client MUST merge the contents of a
/// Playlist Delta Update with its previous version of the Playlist to form an up-to-date version".
extension PlaylistDeltaUpdate {
    /// The full playlist `delta` stands for, with the skipped segments taken from `previous`, the
    /// client's last full copy; `delta` itself if it has no EXT-X-SKIP (the server ignored
    /// `_HLS_skip`, F14 (f)). `nil` when `previous` cannot supply what was skipped — it is itself a
    /// delta, starts after the delta's MEDIA-SEQUENCE, ends before the last skipped segment, or
    /// disagrees with the delta on the DISCONTINUITY-SEQUENCE or on the URI of the first listed
    /// segment — and then "it MUST obtain a complete copy of the Playlist by reissuing its Playlist
    /// request without the `_HLS_skip` directive" (§6.3.7, F16).
    ///
    /// `previous` is first slid to the delta's MEDIA-SEQUENCE as the server slides its window
    /// (``MediaPlaylist/removingSegmentsFromHead(_:)``). Then:
    /// - the tags ``make(_:kind:isOld:recentlyRemoved:)`` re-emits on the first listed segment are
    ///   dropped where they repeat what the restored segments already establish (a KEY or MAP equal to
    ///   the one in effect, the BITRATE in effect, a PROGRAM-DATE-TIME equal to the extrapolated date
    ///   on a segment without DISCONTINUITY, a byte-range offset that continues the previous sub-range),
    ///   and the date ranges carried there from skipped segments go back to the segments they came
    ///   from;
    /// - for `YES`, a restored segment's date range the delta no longer has was removed by the server
    ///   and is dropped;
    /// - for `v2` (the delta has RECENTLY-REMOVED-DATERANGES), date ranges of `previous` are kept
    ///   unless their ID is listed as recently removed, also on listed segments, where the delta left
    ///   old ones out; they merge with the delta's by position (same media sequence number).
    ///
    /// The result is the full playlist itself (`previous` being that playlist, its text is reproduced
    /// exactly) whenever the full playlist carries no redundant KEY, MAP, BITRATE, date or offset on
    /// that first listed segment; otherwise it differs only by omitting such a repetition, which
    /// changes no meaning. EXT-X-VERSION is the delta's: the client cannot know the full playlist's.
    public static func expand(_ delta: MediaPlaylist, previous: MediaPlaylist) -> MediaPlaylist? {
        guard let skip = delta.skip else { return delta }
        let first = delta.effectiveMediaSequence
        let previousFirst = previous.effectiveMediaSequence
        guard previous.skip == nil, first >= previousFirst, first - previousFirst <= UInt64(previous.segments.count)
        else { return nil }
        let base = previous.removingSegmentsFromHead(Int(first - previousFirst))
        guard skip.skippedSegments <= UInt64(base.segments.count),
            base.effectiveDiscontinuitySequence == delta.effectiveDiscontinuitySequence
        else { return nil }
        let skipped = Int(skip.skippedSegments)
        if skipped < base.segments.count, let head = delta.segments.first, head.uri != base.segments[skipped].uri {
            return nil
        }

        let isV2 = skip.attributes.contains("RECENTLY-REMOVED-DATERANGES")
        let removed = Set(skip.recentlyRemovedDateRanges ?? [])
        var restored = Array(base.segments[..<skipped])
        var listed = delta.segments
        if skipped > 0, !listed.isEmpty {
            listed[0] = withoutRepeatedContext(listed[0], after: base, skipped: skipped)
        }
        // The date ranges carried onto the first listed segment go back where `previous` has them.
        var carried = listed.first?.tags.dateRanges ?? []
        for index in restored.indices where !restored[index].tags.dateRanges.isEmpty {
            restored[index].tags.dateRanges = restored[index].tags.dateRanges.filter { range in
                if let found = carried.firstIndex(of: range) {
                    carried.remove(at: found)
                    return true
                }
                return isV2 && !removed.contains(range.id)
            }
        }
        if !listed.isEmpty { listed[0].tags.dateRanges = carried }

        var expanded = delta
        expanded.skip = nil
        if isV2 {
            func earlier(_ index: Int) -> [DateRange] {
                let ranges =
                    index < base.segments.count
                    ? base.segments[index].tags.dateRanges
                    : index == base.segments.count ? base.trailingTags.dateRanges : []
                return ranges.filter { !removed.contains($0.id) }
            }
            for index in listed.indices {
                let merged = merge(earlier(skipped + index), into: listed[index].tags.dateRanges)
                if merged != listed[index].tags.dateRanges { listed[index].tags.dateRanges = merged }
            }
            let trailing = merge(earlier(skipped + listed.count), into: expanded.trailingTags.dateRanges)
            if trailing != expanded.trailingTags.dateRanges { expanded.trailingTags.dateRanges = trailing }
        }
        expanded.segments = restored + listed
        return expanded
    }

    /// `head` without the tags that only repeat the context the restored segments `base.segments[..<skipped]` set.
    private static func withoutRepeatedContext(_ head: MediaSegment, after base: MediaPlaylist, skipped: Int)
        -> MediaSegment
    {
        var head = head
        let lastSkipped = skipped - 1
        if !head.tags.keys.isEmpty {
            let inEffect = base.effectiveKeys(at: lastSkipped)
            let own = head.tags.keys.filter { key in !inEffect.contains { $0.keyFormat == key.keyFormat && $0 == key } }
            if own.count != head.tags.keys.count { head.tags.keys = own }
        }
        if let map = head.tags.map, map == base.effectiveMap(at: lastSkipped) { head.tags.map = nil }
        if let bitrate = head.tags.bitrate,
            bitrate == base.segments[...lastSkipped].last(where: { $0.tags.bitrate != nil })?.tags.bitrate
        {
            head.tags.bitrate = nil
        }
        // After a DISCONTINUITY the date is kept even when it continues the timeline: servers write
        // one there (B7), so it is part of the full playlist, not a re-emission.
        if !head.tags.discontinuity, let date = head.tags.programDateTime,
            date == extrapolatedDate(of: base.segments, at: skipped)
        {
            head.tags.programDateTime = nil
        }
        let previous = base.segments[lastSkipped]
        if let range = head.byteRange, let offset = range.offset, previous.uri == head.uri,
            let end = base.resolvedByteRanges()[lastSkipped], end.offset.saturatingAdd(end.length) == offset
        {
            head.byteRange = ByteRange(length: range.length, offset: nil)
        }
        return head
    }

    /// `listed`, with the tags of `earlier` it lacks put back where `earlier` has them: each listed
    /// tag also in `earlier` is preceded by the `earlier` tags before it; the rest of `earlier` follows.
    private static func merge(_ earlier: [DateRange], into listed: [DateRange]) -> [DateRange] {
        guard !earlier.isEmpty else { return listed }
        var result: [DateRange] = []
        var next = earlier.startIndex
        for range in listed {
            if let found = earlier[next...].firstIndex(of: range) {
                result += earlier[next..<found]
                next = found + 1
            }
            result.append(range)
        }
        result += earlier[next...]
        return result
    }
}
