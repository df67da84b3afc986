public import HeadwaterHLS
import HeadwaterSCTE35

/// One ad break of a channel, as its break log records it: where it starts (a segment boundary), what
/// was planned, and — once known — where it ended. Breaks come from the source's cues (SCTE-35, CUE-OUT),
/// an operator schedule, or a "cue now" request; the stitcher does not care which.
///
/// In every stitched playlist the break occupies the content's media sequence numbers
/// `startMediaSequence ..< end.mediaSequence` one for one (*slots*): slot `k` is the content
/// segment `startMediaSequence + k`, replaced by the `k`-th segment of the viewer's pod.
public struct AdBreak: Sendable, Hashable, Identifiable {
    /// Unique for the channel's life; also the `ID` of the break's `EXT-X-DATERANGE`.
    public let id: String
    /// The media sequence number of the break's first segment (slot 0).
    public let startMediaSequence: UInt64
    /// The PROGRAM-DATE-TIME of slot 0 in the content: the splice time (`START-DATE`, D13).
    public let startDate: ProgramDateTime
    /// `PLANNED-DURATION`: the cue's break duration, or the scheduled length.
    public let plannedDuration: HLSDuration
    /// The ``AdRuleSet/version`` current when the break started; pod decisions use it forever.
    public let ruleSetVersion: UInt64
    /// The source's splice_info_section that opened the break (written as `SCTE35-OUT`), `nil` when
    /// the break has no source cue (one is then generated).
    public let outCue: [UInt8]?
    /// Where the break ended, once known.
    public internal(set) var end: End?
    /// `SCTE35-OUT` of the break's date range: ``outCue``, or a generated `splice_insert()`.
    public let scte35Out: [UInt8]?

    /// The content's discontinuity sequence number of the segment before slot 0.
    let discontinuitySequenceBeforeStart: UInt64
    /// Stitched minus content discontinuity sequence number of the content segments just before
    /// the break (0 before any break; see ``BreakLog`` for the arithmetic).
    let offsetBefore: UInt64

    /// How a break ended: at a CUE-IN (on time or early), or when its planned duration elapsed.
    public struct End: Sendable, Hashable {
        /// The first media sequence number after the break: content again, or the next break's slot 0.
        public let mediaSequence: UInt64
        /// The content's PROGRAM-DATE-TIME of that segment (`END-DATE`).
        public let date: ProgramDateTime
        /// The source's splice_info_section that closed the break, `nil` when none.
        public let inCue: [UInt8]?
        /// `SCTE35-IN` of the break's date range: ``inCue``, or the generated in cue that pairs with a
        /// generated out cue; `nil` when the source opened the break with a cue but did not close it.
        public let scte35In: [UInt8]?
        /// The content's discontinuity sequence number of segment `mediaSequence`.
        let contentDiscontinuitySequence: UInt64
    }

    /// A `splice_insert()` for a break without a source cue: immediate (the DATERANGE's dates say
    /// when), with the planned duration on the out cue, and an event id derived from the break id so
    /// that the out and in cues pair up (D10).
    static func generatedCue(id: String, plannedDuration: HLSDuration, out: Bool) -> [UInt8]? {
        var hash = StableHash()
        hash.combine(id)
        let section = SpliceInfoSection.spliceInsert(
            eventID: UInt32(truncatingIfNeeded: hash.value),
            outOfNetwork: out,
            ptsTime: nil,
            duration: out ? Ticks90kHz.ticks(microseconds: plannedDuration.microseconds) : nil,
            autoReturn: false)
        return try? section.encoded()
    }

    /// The number of slots, once the break has ended.
    public var slotCount: UInt64? { end.map { $0.mediaSequence - startMediaSequence } }

    /// `DURATION`: the actual content time between the splice out and the splice in.
    public var actualDuration: HLSDuration? { end.map { $0.date.duration(since: startDate) } }

    /// Whether media sequence number `msn` is one of the break's slots.
    public func contains(_ msn: UInt64) -> Bool {
        msn >= startMediaSequence && (end.map { msn < $0.mediaSequence } ?? true)
    }

    /// The stitched discontinuity sequence number of slot `slot`: every slot carries a DISCONTINUITY.
    func stitchedDiscontinuitySequence(slot: UInt64) -> UInt64 {
        discontinuitySequenceBeforeStart.saturatingAdd(offsetBefore).saturatingAdd(slot).saturatingAdd(1)
    }

    /// Stitched minus content discontinuity sequence number after a return to content at `end`:
    /// the return segment carries a DISCONTINUITY whether the content's did or not.
    var offsetAfterReturn: UInt64? {
        guard let end else { return nil }
        // The break's slots and its return carry N + 1 DISCONTINUITY tags where the content had
        // `contentDiscontinuitySequence - discontinuitySequenceBeforeStart` (checked ≤ N + 1 on end).
        let stitched = end.mediaSequence - startMediaSequence + 1
        let content = end.contentDiscontinuitySequence - discontinuitySequenceBeforeStart
        return offsetBefore.saturatingAdd(stitched - content)
    }
}
