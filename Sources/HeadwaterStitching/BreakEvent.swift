public import HeadwaterHLS
import HeadwaterSCTE35

/// Where a break came from.
public enum BreakSource: String, Sendable, Hashable, CustomStringConvertible {
    /// The source's own signals: `EXT-X-CUE-OUT`, SCTE-35 (`EXT-OATCLS-SCTE35`, `EXT-X-SCTE35`,
    /// `EXT-X-DATERANGE`).
    case cue
    /// The operator's ``BreakSchedule``.
    case schedule
    /// An operator's "cue now" (``BreakTracker/requestBreak(duration:)``).
    case request

    public var description: String { rawValue }
}

/// Why a break ended.
public enum BreakEndCause: String, Sendable, Hashable, CustomStringConvertible {
    /// The source's return: `EXT-X-CUE-IN`, an SCTE-35 in cue, a DATERANGE's end.
    case cue
    /// An operator's early return (``BreakTracker/requestReturn()``).
    case request
    /// The planned duration has elapsed.
    case plannedDurationElapsed = "planned duration elapsed"
    /// The content's dates went back before the break's start (a source reset): the planned end
    /// can no longer be found, so the break ends rather than run on.
    case datesWentBack = "dates went back"

    public var description: String { rawValue }
}

/// What ``BreakTracker/advance(to:ruleSetVersion:)`` did with one content version, for the
/// caller's logs and metrics (the tracker itself is pure and does not log). Each has a one-line
/// ``description``.
public enum BreakEvent: Sendable, Hashable, CustomStringConvertible {
    /// A break was recorded in the log, its first slot at `msn`.
    case started(id: String, msn: UInt64, source: BreakSource, plannedDuration: HLSDuration)
    /// The open break ended: `msn` is the first segment after it. `early` when it ended before its
    /// planned duration had elapsed.
    case ended(id: String, msn: UInt64, early: Bool, cause: BreakEndCause)
    /// A cue on segment `msn` could not be decoded (bad CRC, truncated, not base64/hex): no break is
    /// started from that segment's cues. `tag` is the tag name and `label` a fixed snake_case name
    /// of the reason (``SCTE35Error/reasonLabel``, or `invalid_hex`): both bounded, fit for metric labels.
    case invalidCue(msn: UInt64, tag: String, reason: String, label: String)
    /// A valid signal that was not acted on: a start while a break is open, an end with no break
    /// to end, a splice date already past, a cancel with nothing to cancel, an encrypted cue.
    case ignoredCue(msn: UInt64, tag: String, reason: String)
    /// A scheduled break that was not started: late, or inside another break.
    case skippedScheduledBreak(msn: UInt64, scheduled: ProgramDateTime, reason: String)
    /// A "cue now" request that was not started because the source started a break at the same
    /// segment.
    case droppedRequest(id: String, msn: UInt64, reason: String)
    /// The break log refused a start or end: the content broke its contract (no dates, inconsistent
    /// discontinuities). Nothing was recorded; the tracker carries on with the next segment.
    case rejected(msn: UInt64, error: BreakLogError)

    /// The ``invalidCue(msn:tag:reason:label:)`` label of a DATERANGE `SCTE35-*` value that is not hexadecimal.
    public static let invalidHexLabel = "invalid_hex"

    /// Every label an ``invalidCue(msn:tag:reason:label:)`` can carry, so a counter can start each at 0.
    public static let invalidCueLabels = SCTE35Error.reasonLabels + [invalidHexLabel]

    public var description: String {
        switch self {
        case .started(let id, let msn, let source, let planned):
            return "break \(id) started at MSN \(msn) (\(source), planned \(planned) s)"
        case .ended(let id, let msn, let early, let cause):
            return "break \(id) ended at MSN \(msn) (\(cause)\(early ? ", early" : ""))"
        case .invalidCue(let msn, let tag, let reason, _):
            return "invalid cue in \(tag) on MSN \(msn), not stitched: \(reason)"
        case .ignoredCue(let msn, let tag, let reason):
            return "ignored \(tag) on MSN \(msn): \(reason)"
        case .skippedScheduledBreak(let msn, let scheduled, let reason):
            return "skipped the break scheduled at \(scheduled) (MSN \(msn)): \(reason)"
        case .droppedRequest(let id, let msn, let reason):
            return "dropped requested break \(id) at MSN \(msn): \(reason)"
        case .rejected(let msn, let error):
            return "break log refused a change at MSN \(msn): \(error)"
        }
    }
}

/// Why an operator request was refused.
public enum BreakRequestError: Error, Hashable, CustomStringConvertible {
    /// A break is in progress; return from it first (``BreakTracker/requestReturn()``).
    case breakOpen(id: String)
    /// A "cue now" request is already waiting for the next segment.
    case requestPending(id: String)
    /// No break is in progress.
    case noBreakOpen
    /// A return is already waiting for the next segment.
    case returnPending(id: String)
    /// No dated segment has been seen yet, so there is nothing to name the break after.
    case noContentYet
    /// The requested duration is zero or negative.
    case nonPositiveDuration(HLSDuration)

    public var description: String {
        switch self {
        case .breakOpen(let id): return "break \(id) is in progress"
        case .requestPending(let id): return "break \(id) is already requested for the next segment"
        case .noBreakOpen: return "no break is in progress"
        case .returnPending(let id): return "the return from break \(id) is already requested"
        case .noContentYet: return "the channel has no dated content yet"
        case .nonPositiveDuration(let duration): return "a break needs a positive duration, not \(duration) s"
        }
    }
}
