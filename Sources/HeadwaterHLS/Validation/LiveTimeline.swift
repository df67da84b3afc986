/// One version of a live media playlist seen as media sequence numbers, each with everything the
/// server must keep stable for it (C1): URI, absolute byte range, EXTINF, DSN, date, and the KEY/MAP
/// in effect.
///
/// A full playlist is *complete*: every value is known. A Playlist Delta Update (EXT-X-SKIP) is made
/// complete by restoring the skipped segments from the previous version, as a client does; when
/// that is impossible only what the listed tail says on its own is known (DSN and KEY/MAP context
/// are `nil`, dates and byte ranges only after the first explicit one).
struct LiveTimeline {
    struct Entry {
        var msn: UInt64
        var segment: MediaSegment
        /// Index in the playlist's `segments`, `nil` for a segment restored from the previous version.
        var listedIndex: Int?
        var dsn: UInt64?
        var date: ProgramDateTime?
        /// Absolute when it could be resolved; `offset == nil` when the start is unknown.
        var byteRange: ByteRange?
        /// The KEY per KEYFORMAT and the MAP in effect; `nil` when the context is unknown.
        var context: Context?
    }

    struct Context: Equatable {
        var keys: [String: Key]
        var map: MediaInitializationSection?
    }

    var firstMSN: UInt64
    var entries: [Entry]
    /// Whether DSNs and the KEY/MAP context of every entry are known.
    var isComplete: Bool

    var endMSN: UInt64 { firstMSN &+ UInt64(entries.count) }  // wraps only on hostile input

    func entry(msn: UInt64) -> Entry? {
        guard msn >= firstMSN, msn < endMSN else { return nil }
        return entries[Int(msn - firstMSN)]
    }

    /// The sum of EXTINF of all entries.
    var duration: HLSDuration { .saturatingSum(entries.map(\.segment.duration)) }

    /// A full playlist; the first `restored` segments were not listed (they came from a previous version).
    init(complete playlist: MediaPlaylist, restored: Int = 0) {
        firstMSN = playlist.effectiveMediaSequence
        isComplete = true
        let dsns = playlist.discontinuitySequenceNumbers()
        let dates = playlist.programDateTimes()
        let ranges = Self.byteRanges(playlist)
        var context = Context(keys: [:], map: nil)
        entries = playlist.segments.enumerated().map { index, segment in
            for key in segment.tags.keys { context.keys[key.keyFormat] = key }
            if let map = segment.tags.map { context.map = map }
            return Entry(
                msn: playlist.mediaSequenceNumber(at: index), segment: segment,
                listedIndex: index >= restored ? index - restored : nil, dsn: dsns[index], date: dates[index],
                byteRange: ranges[index], context: context)
        }
    }

    /// The listed tail of a delta update that could not be completed.
    init(partial delta: MediaPlaylist) {
        let first = delta.effectiveMediaSequence &+ (delta.skip?.skippedSegments ?? 0)
        firstMSN = first
        isComplete = false
        let dates = delta.programDateTimes()
        let ranges = Self.byteRanges(delta)
        entries = delta.segments.enumerated().map { index, segment in
            Entry(
                msn: first &+ UInt64(index), segment: segment, listedIndex: index, dsn: nil, date: dates[index],
                byteRange: ranges[index], context: nil)
        }
    }

    /// The timeline of `playlist`, completing a delta update from `previous` when possible.
    init(_ playlist: MediaPlaylist, previous: MediaPlaylist?) {
        guard let skip = playlist.skip else {
            self.init(complete: playlist)
            return
        }
        if let previous, let expanded = Self.expand(playlist, skip: skip, from: previous) {
            self.init(complete: expanded, restored: Int(skip.skippedSegments))
        } else {
            self.init(partial: playlist)
        }
    }

    /// The full playlist a delta update stands for, with the skipped segments taken from `previous`
    /// (which must be a full playlist listing all of them).
    static func expand(_ delta: MediaPlaylist, skip: Skip, from previous: MediaPlaylist) -> MediaPlaylist? {
        guard previous.skip == nil else { return nil }
        let first = delta.effectiveMediaSequence
        let skipped = skip.skippedSegments
        let previousFirst = previous.effectiveMediaSequence
        guard first >= previousFirst, first - previousFirst <= UInt64(previous.segments.count),
            skipped <= UInt64(previous.segments.count) - (first - previousFirst)
        else { return nil }
        // Removing the head keeps the KEY, MAP, date and byte-range offset in effect on the new head.
        let head = previous.removingSegmentsFromHead(Int(first - previousFirst))
        var expanded = delta
        expanded.skip = nil
        expanded.segments = Array(head.segments.prefix(Int(skipped))) + delta.segments
        return expanded
    }

    private static func byteRanges(_ playlist: MediaPlaylist) -> [ByteRange?] {
        let resolved = playlist.resolvedByteRanges()
        return playlist.segments.enumerated().map { index, segment in
            guard let range = segment.byteRange else { return nil }
            guard let absolute = resolved[index] else { return ByteRange(length: range.length, offset: nil) }
            return ByteRange(length: absolute.length, offset: absolute.offset)
        }
    }
}

extension LiveTimeline.Entry {
    /// What names a segment: its URI and the length of its byte range (offsets are compared
    /// separately; they depend on the neighbours).
    var identity: Identity { Identity(uri: segment.uri, length: byteRange?.length) }

    struct Identity: Hashable {
        var uri: String
        var length: UInt64?
    }
}
