/// Where a live media playlist ends, in segments and parts: what a blocking playlist reload
/// (`_HLS_msn`, `_HLS_part`; RFC 8216bis §6.2.5.2) is measured against. Computed once per rendered
/// version, so deciding whether a held request can be answered costs a few comparisons.
public struct PlaylistEdge: Sendable, Hashable {
    /// The media sequence number of the last complete (listed) segment.
    public var lastSegment: UInt64
    /// How many parts that segment was published in (0 when it has none).
    public var lastSegmentParts: Int
    /// How many parts of the next segment (`lastSegment + 1`, still open) are listed.
    public var openParts: Int
    /// `EXT-X-PART-INF`'s PART-TARGET, `nil` when the playlist has no parts.
    public var partTarget: HLSDuration?
    /// `EXT-X-ENDLIST`: blocking directives are then ignored (F9).
    public var ended: Bool

    public init(lastSegment: UInt64, lastSegmentParts: Int = 0, openParts: Int = 0, partTarget: HLSDuration? = nil, ended: Bool = false) {
        self.lastSegment = lastSegment
        self.lastSegmentParts = lastSegmentParts
        self.openParts = openParts
        self.partTarget = partTarget
        self.ended = ended
    }

    /// The edge of `playlist`, or `nil` when it lists no segment (nothing to measure against).
    public init?(_ playlist: MediaPlaylist) {
        guard let last = playlist.segments.last else { return nil }
        self.init(
            lastSegment: playlist.mediaSequenceNumber(at: playlist.segments.count - 1),
            lastSegmentParts: last.tags.parts.count, openParts: playlist.trailingTags.parts.count,
            partTarget: playlist.partInformation?.partTarget, ended: playlist.endList)
    }

    /// What to do with a request for `_HLS_msn=msn` (and `_HLS_part=part`).
    public enum Answer: Sendable, Hashable {
        /// The playlist contains what was asked for (or ended): answer now.
        case now
        /// Hold the request until a later version contains it.
        case wait
        /// Further ahead than a client may ask (F10): 400 with this reason.
        case tooFarAhead(String)
    }

    /// Whether this version answers a blocking request (F7, F8, F9, F10).
    ///
    /// - `_HLS_msn=M` alone waits for segment M to be listed complete.
    /// - `_HLS_part=N` waits for part N of segment M; past the last part of a completed M it is
    ///   part 0 of M + 1 (F8). A playlist without parts ignores `_HLS_part` (its client should not
    ///   send it: no PART-INF).
    /// - A segment more than two past the last complete one, or a part more than the Advance Part
    ///   Limit past the last listed part (3, or 3 ÷ PART-TARGET when that is under a second), is
    ///   refused (F10). "The last segment" is the last complete one: the open segment is only its
    ///   parts so far, so a request for the one after it (`last + 2`) is still a fair wait.
    public func answer(msn: UInt64, part: UInt64?) -> Answer {
        if ended { return .now }
        if msn > lastSegment &+ 2 {
            return .tooFarAhead("_HLS_msn=\(msn) is more than two segments past the last one (\(lastSegment))")
        }
        guard let part, let partTarget else { return msn <= lastSegment ? .now : .wait }
        var wantedSegment = msn
        var wantedPart = part
        if msn < lastSegment { return .now }
        if msn == lastSegment {
            if part < UInt64(lastSegmentParts) { return .now }
            wantedSegment = msn + 1
            wantedPart = 0
        }
        if wantedSegment == lastSegment + 1, wantedPart < UInt64(openParts) { return .now }
        // Parts from the last listed one to the one wanted, taking each later segment to have as
        // many parts as the last complete one.
        let perSegment = UInt64(max(lastSegmentParts, openParts, 1))
        let listed = (lastSegment + 1) * perSegment + UInt64(openParts)  // one past the last listed part
        let (segmentBase, overflow) = wantedSegment.multipliedReportingOverflow(by: perSegment)
        let (wanted, overflow2) = segmentBase.addingReportingOverflow(wantedPart)
        let limit = Self.advancePartLimit(partTarget: partTarget)
        if overflow || overflow2 || wanted >= listed && wanted - listed >= limit {
            return .tooFarAhead("_HLS_part=\(part) of _HLS_msn=\(msn) is more than \(limit) parts past the last one")
        }
        return .wait
    }

    /// The Advance Part Limit (§6.2.5.2): 3 parts, or 3 ÷ PART-TARGET when PART-TARGET is under a
    /// second (so always about three seconds ahead at most).
    public static func advancePartLimit(partTarget: HLSDuration) -> UInt64 {
        let micros = partTarget.microseconds
        guard micros > 0, micros < 1_000_000 else { return 3 }
        return UInt64(3_000_000 / micros)
    }
}
