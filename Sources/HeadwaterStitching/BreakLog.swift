public import HeadwaterHLS

/// A channel's ad breaks, in order, with the bookkeeping that lets the stitcher number any window
/// without looking at the channel's history.
///
/// ## Numbering
/// A stitched playlist keeps the content's media sequence numbers one for one. Its discontinuity
/// numbering is the content's plus an offset that depends on the breaks alone, never on a viewer's
/// pod: every slot of a break carries `EXT-X-DISCONTINUITY` (an ad segment, a slate segment, or — for
/// a viewer who joined mid-break — the content segment), and so does the first content segment after
/// the break. A break of `N` slots therefore adds `N + 1` discontinuities minus those the content
/// already had there. Each break stores the running offset in front of it, so the stitched
/// discontinuity sequence number of any media sequence number is one binary search and one
/// addition away: O(log B) for B retained breaks, independent of how long the channel has run.
///
/// ## Contract for the owner (the channel)
/// - Start a break no later than publishing the content version that lists its first segment, and
///   end it no later than publishing the version that lists the first segment after it: the
///   stitched rendering of a listed segment must never change.
/// - Update the log from the version about to be published, then publish both together.
/// - One log per channel, shared by every rendition (they have the same numbering and dates).
/// - Remove breaks once they end before the window (``removeBreaks(endingBefore:)``).
public struct BreakLog: Sendable, Hashable {
    /// The retained breaks, ordered by start; only the last may be open.
    public internal(set) var breaks: [AdBreak] = []
    /// Stitched minus content discontinuity sequence number before the first retained break.
    var initialOffset: UInt64 = 0

    public init() {}

    /// The retained break with `id`.
    public func adBreak(id: String) -> AdBreak? { breaks.first { $0.id == id } }

    /// The break in progress, if any.
    public var openBreak: AdBreak? { breaks.last.flatMap { $0.end == nil ? $0 : nil } }

    // MARK: Recording breaks

    /// Records a break starting at media sequence number `msn`, a segment boundary.
    ///
    /// - Parameters:
    ///   - content: a version of the content that lists segment `msn`, or ends just before it (a break
    ///     announced ahead). It supplies the splice date (the PROGRAM-DATE-TIME of segment `msn`) and
    ///     the content's discontinuity sequence there.
    ///   - ruleSetVersion: the ad configuration version current now; the break keeps it.
    ///   - outCue: the source's splice_info_section, if the break came from one.
    public mutating func startBreak(
        id: String,
        at msn: UInt64,
        plannedDuration: HLSDuration,
        ruleSetVersion: UInt64,
        outCue: [UInt8]? = nil,
        content: MediaPlaylist
    ) throws(BreakLogError) {
        guard Self.isValidID(id) else { throw .invalidID(id) }
        guard adBreak(id: id) == nil else { throw .duplicateID(id) }
        guard plannedDuration > .zero else { throw .nonPositivePlannedDuration(id: id) }
        if let last = breaks.last {
            guard let end = last.end else { throw .previousBreakOpen(id: last.id) }
            guard msn >= end.mediaSequence else {
                throw .overlapsPreviousBreak(id: id, start: msn, previousEnd: end.mediaSequence)
            }
        }
        let window = ContentWindow(content)
        let before: UInt64
        let date: ProgramDateTime
        if let index = window.index(of: msn) {
            guard let known = window.dates[index] else { throw .contentWithoutDates(msn: msn) }
            date = known
            before = window.dsns[index] - (content.segments[index].tags.discontinuity ? 1 : 0)
        } else if msn > 0, let index = window.index(of: msn - 1), index == content.segments.count - 1 {
            // The segment still being produced: dated by the tags before its first part, as
            // `endBreak` dates it (a back-to-back break starts where the previous one ends).
            guard let previous = window.dates[index] else { throw .contentWithoutDates(msn: msn - 1) }
            date = content.trailingTags.programDateTime ?? previous.adding(content.segments[index].duration)
            before = window.dsns[index]
        } else {
            throw .notInContent(msn: msn, first: window.first, end: window.end)
        }
        let offset: UInt64
        if let last = breaks.last, let end = last.end {
            if end.mediaSequence == msn {
                // Back to back: the segment before this break is the previous break's last slot.
                let lastSlot = end.mediaSequence - last.startMediaSequence - 1
                let previousLastSlot = last.stitchedDiscontinuitySequence(slot: lastSlot)
                guard previousLastSlot >= before else { throw .inconsistentDiscontinuities(msn: msn) }
                offset = previousLastSlot - before
            } else {
                offset = last.offsetAfterReturn!
            }
        } else {
            offset = initialOffset
        }
        breaks.append(
            AdBreak(
                id: id, startMediaSequence: msn, startDate: date, plannedDuration: plannedDuration,
                ruleSetVersion: ruleSetVersion, outCue: outCue, end: nil,
                scte35Out: outCue ?? AdBreak.generatedCue(id: id, plannedDuration: plannedDuration, out: true),
                discontinuitySequenceBeforeStart: before, offsetBefore: offset))
    }

    /// Records that the open break `id` ended: segment `msn` is the first after it (content again, or
    /// the first slot of a back-to-back break started right after this call). Early returns end a
    /// break the same way; the viewer's pod is cut there.
    ///
    /// - Parameter content: a version of the content that lists segment `msn` (its date becomes
    ///   `END-DATE`), or ends just before it: a return announced on the segment still being produced,
    ///   as low-latency content needs it before that segment's first part is published (F21). Its date
    ///   and whether it starts a discontinuity come from the content's trailing tags (F3 puts them
    ///   before the first part), else its date is extrapolated and no discontinuity assumed.
    public mutating func endBreak(id: String, at msn: UInt64, inCue: [UInt8]? = nil, content: MediaPlaylist)
        throws(BreakLogError)
    {
        guard let index = breaks.lastIndex(where: { $0.id == id }) else { throw .unknownBreak(id) }
        guard breaks[index].end == nil else { throw .alreadyEnded(id) }
        let start = breaks[index].startMediaSequence
        guard msn > start else { throw .endsBeforeFirstSlot(id: id, start: start, end: msn) }
        let window = ContentWindow(content)
        let date: ProgramDateTime
        let dsn: UInt64
        if let position = window.index(of: msn) {
            guard let known = window.dates[position] else { throw .contentWithoutDates(msn: msn) }
            date = known
            dsn = window.dsns[position]
        } else if msn > 0, let last = window.index(of: msn - 1), last == content.segments.count - 1 {
            guard let previous = window.dates[last] else { throw .contentWithoutDates(msn: msn - 1) }
            date = content.trailingTags.programDateTime ?? previous.adding(content.segments[last].duration)
            dsn = window.dsns[last] + (content.trailingTags.discontinuity ? 1 : 0)
        } else {
            throw .notInContent(msn: msn, first: window.first, end: window.end)
        }
        let before = breaks[index].discontinuitySequenceBeforeStart
        // The content has at most one DISCONTINUITY per segment of the break and its return.
        guard dsn >= before, dsn - before <= msn - start + 1 else { throw .inconsistentDiscontinuities(msn: msn) }
        let adBreak = breaks[index]
        let generated =
            adBreak.outCue == nil
            ? AdBreak.generatedCue(id: id, plannedDuration: adBreak.plannedDuration, out: false) : nil
        breaks[index].end = AdBreak.End(
            mediaSequence: msn, date: date, inCue: inCue, scte35In: inCue ?? generated, contentDiscontinuitySequence: dsn)
    }

    /// Forgets the breaks that ended before `msn` (pass the first media sequence number of the oldest
    /// window still served; the first segment after a break must stay, it carries the break's return).
    /// Numbering of later segments is unchanged.
    public mutating func removeBreaks(endingBefore msn: UInt64) {
        var count = 0
        while count < breaks.count, let end = breaks[count].end, end.mediaSequence < msn { count += 1 }
        guard count > 0 else { return }
        initialOffset = breaks[count - 1].offsetAfterReturn!
        breaks.removeFirst(count)
    }

    // MARK: Lookup

    /// Where media sequence number `msn` falls.
    enum Position: Equatable {
        /// A content segment; its stitched DSN is the content's plus `offset`. `returnFrom` is the
        /// index of the break it returns from when it is the first segment after one.
        case content(offset: UInt64, returnFrom: Int?)
        /// Slot `slot` of `breaks[index]`.
        case slot(index: Int, slot: UInt64)
    }

    /// The index of the last break starting at or before `msn`: O(log B).
    func lastBreakIndex(startingAtOrBefore msn: UInt64) -> Int? {
        var low = 0
        var high = breaks.count
        while low < high {
            let middle = (low + high) / 2
            if breaks[middle].startMediaSequence <= msn { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : low - 1
    }

    /// The position of `msn` given the index of the last break starting at or before it.
    func position(of msn: UInt64, lastBreak index: Int?) -> Position {
        guard let index else { return .content(offset: initialOffset, returnFrom: nil) }
        let adBreak = breaks[index]
        guard let end = adBreak.end, msn >= end.mediaSequence else {
            return .slot(index: index, slot: msn - adBreak.startMediaSequence)
        }
        return .content(offset: adBreak.offsetAfterReturn!, returnFrom: msn == end.mediaSequence ? index : nil)
    }

    /// Break ids end up in DATERANGE IDs (`"<id>"`, `"<id>/ad/<n>"`): quoted-string safe, no `/`.
    static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 200
            && !id.utf8.contains { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "/") || $0 < 0x20 || $0 == 0x7F }
    }
}

/// Why a break could not be recorded: the caller broke the log's contract.
public enum BreakLogError: Error, Hashable, CustomStringConvertible {
    case invalidID(String)
    case duplicateID(String)
    case nonPositivePlannedDuration(id: String)
    case previousBreakOpen(id: String)
    case overlapsPreviousBreak(id: String, start: UInt64, previousEnd: UInt64)
    case unknownBreak(String)
    case alreadyEnded(String)
    case endsBeforeFirstSlot(id: String, start: UInt64, end: UInt64)
    case notInContent(msn: UInt64, first: UInt64, end: UInt64)
    case contentWithoutDates(msn: UInt64)
    case inconsistentDiscontinuities(msn: UInt64)

    public var description: String {
        switch self {
        case .invalidID(let id):
            return "break id \(id.debugDescription) is empty, too long, or contains a quote, a slash or a control character"
        case .duplicateID(let id): return "break id \(id.debugDescription) is already in the log; ids are unique for the channel's life"
        case .nonPositivePlannedDuration(let id): return "break \(id.debugDescription) has a planned duration of zero or less"
        case .previousBreakOpen(let id): return "break \(id.debugDescription) is still open; end it before starting another"
        case .overlapsPreviousBreak(let id, let start, let previousEnd):
            return "break \(id.debugDescription) starts at MSN \(start), before the previous break ended (MSN \(previousEnd))"
        case .unknownBreak(let id): return "no break \(id.debugDescription) in the log"
        case .alreadyEnded(let id): return "break \(id.debugDescription) has already ended"
        case .endsBeforeFirstSlot(let id, let start, let end):
            return "break \(id.debugDescription) starts at MSN \(start) and cannot end at MSN \(end); a break has at least one segment"
        case .notInContent(let msn, let first, let end):
            return "MSN \(msn) is not in the content version given (MSN \(first)..<\(end))"
        case .contentWithoutDates(let msn): return "the content has no PROGRAM-DATE-TIME for MSN \(msn); stitching needs dates"
        case .inconsistentDiscontinuities(let msn):
            return "the content's discontinuity sequence at MSN \(msn) does not follow the break's start"
        }
    }
}

/// The per-segment values of a content version the log and the stitcher need: O(window).
struct ContentWindow {
    let first: UInt64
    let end: UInt64
    let dsns: [UInt64]
    let dates: [ProgramDateTime?]

    init(_ content: MediaPlaylist) {
        first = content.effectiveMediaSequence
        end = first + UInt64(content.segments.count)
        dsns = content.discontinuitySequenceNumbers()
        dates = content.programDateTimes()
    }

    func index(of msn: UInt64) -> Int? {
        guard msn >= first, msn < end else { return nil }
        return Int(msn - first)
    }
}
