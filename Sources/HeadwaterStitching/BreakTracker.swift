public import HeadwaterHLS

/// Fills a channel's ``BreakLog`` from everything that can call a break: the source's own signals
/// (`EXT-X-CUE-OUT`/`-IN`, SCTE-35 in `EXT-OATCLS-SCTE35`, `EXT-X-SCTE35` and `EXT-X-DATERANGE`),
/// an operator ``BreakSchedule``, and operator requests ("cue now", "return now").
///
/// ## How it is driven
/// The channel calls ``advance(to:ruleSetVersion:)`` with each version of its cue rendition *before*
/// publishing it, then publishes the version and the ``log`` together: that is exactly the log's
/// contract (a break starts no later than the version listing its first segment and ends no later
/// than the version listing the first segment after it). Each call looks only at segments with a
/// media sequence number above the last one it processed, in order: a segment is judged once, when
/// it is new, so a published break never changes.
///
/// ## Same content, same breaks
/// Every decision is a function of the content alone — the segment's tags, its date and the date of
/// the segment before it — plus the operator requests: no clock, no start-up time. Break ids come
/// from the source and the splice date (`scte-<event>-<ms>`, `cue-<ms>`, `sched-<ms>`,
/// `now-<ms>`). So two nodes, or a node and its restart, fed the same versions record the same
/// breaks for the segments both process; the first call processes the whole window for that
/// reason. A tracker that starts later misses the breaks that began before its first window (and
/// one that would start on that window's first segment unless its splice date is that segment's
/// own): a viewer then sees content there, never a different break.
///
/// ## Where a break starts and ends
/// - A date-less signal (CUE-OUT, an SCTE-35 cue in a vendor tag) takes effect at the segment that
///   carries it: a playlist carries no PTS to place the cue's `pts_time` on.
/// - A dated one (a DATERANGE's `START-DATE`, a scheduled time) takes effect at the first segment
///   whose date is at or after it, within ``tolerance``: a date that falls inside a segment rounds
///   to the next boundary, one announced ahead waits for its segment, and one whose first segment
///   has already gone by is ignored (the break began earlier).
/// - A break ends at the first segment where: the source returns (a CUE-IN, an in cue, the end of
///   its DATERANGE), an operator return was requested, or its planned duration has elapsed. Every
///   break keeps at least one segment; ending one and starting the next at the same segment works
///   (back to back).
/// - One break at a time: a start while a break is open is ignored and reported, except the
///   repeats of the open break's own signals (several syntaxes on one segment, a range re-written
///   with more attributes), which are the same break.
///
/// ## Cost
/// O(new segments + window) per call, plus O(retained breaks) per break recorded; nothing grows
/// with the channel's history once ``prune(before:)`` is called.
public struct BreakTracker: Sendable, Hashable {
    /// The channel served (for the caller's bookkeeping; break ids are per channel already).
    public let channel: String
    /// The operator schedule; replace it on a configuration reload. Takes effect from the next new
    /// segment; a break in progress is not affected.
    public var schedule: BreakSchedule?
    /// The planned duration of a break whose signal states none (a bare `EXT-X-CUE-OUT`, a cue
    /// without `break_duration`): it ends at the source's return, or when this has elapsed. A value
    /// that is not positive means 30 s.
    public var defaultDuration: HLSDuration
    /// The breaks so far: publish it with the content version passed to the last `advance`.
    public internal(set) var log = BreakLog()

    /// How far a segment's date may be before a splice date and still be the splice's segment:
    /// encoders compute splice dates from PTS and segment dates from their own clock, a frame or
    /// so apart.
    public static let tolerance = HLSDuration.milliseconds(100)
    /// Dated starts announced ahead and remembered until their segment comes: a bound against a
    /// source that announces without end.
    static let maximumPendingStarts = 16

    // The state below is set only by processing segments, and by a restore after a restart
    // (``BreakTrackerRecord``, in another file: hence module-internal setters).

    /// The last media sequence number processed.
    var lastProcessed: UInt64?
    /// The date just after the last processed segment: the splice date of a "cue now".
    var nextDate: ProgramDateTime?
    /// The break in progress, with what identifies its signals.
    var open: OpenBreak?
    /// Dated starts waiting for their segment, in the order announced.
    var pending: [PendingStart] = []
    /// A "cue now" waiting for the next new segment.
    var request: Request?
    /// An early return waiting for the next new segment.
    var returnRequested = false
    /// Ad date ranges already dealt with: a packager may write a range again on later segments.
    var seenRanges = RecentRanges(capacity: 64)

    /// - Parameters:
    ///   - defaultDuration: see ``defaultDuration``; a value that is not positive is replaced by 30 s.
    public init(channel: String, schedule: BreakSchedule? = nil, defaultDuration: HLSDuration = .seconds(30)) {
        self.channel = channel
        self.schedule = schedule
        self.defaultDuration = defaultDuration > .zero ? defaultDuration : .seconds(30)
    }

    /// The id of the break a "cue now" will start at the next new segment, if one is waiting.
    public var requestedBreakID: String? { request?.id }

    /// Whether an early return is waiting for the next new segment.
    public var isReturnRequested: Bool { returnRequested }

    // MARK: Operator requests

    /// Operator "cue now": starts a break of `duration` at the next new segment ``advance(to:ruleSetVersion:)``
    /// processes — unless the source starts one at that very segment, which wins (reported as
    /// ``BreakEvent/droppedRequest(id:msn:reason:)``).
    ///
    /// - Returns: the id the break will have (`now-<ms>`, from the expected date of that segment).
    public mutating func requestBreak(duration: HLSDuration) throws(BreakRequestError) -> String {
        if let open { throw .breakOpen(id: open.id) }
        if let request { throw .requestPending(id: request.id) }
        guard duration > .zero else { throw .nonPositiveDuration(duration) }
        guard let nextDate else { throw .noContentYet }
        let id = uniqueID("now-\(nextDate.millisecondsSinceEpoch)")
        request = Request(id: id, duration: duration)
        return id
    }

    /// Operator early return: the open break ends at the next new segment (its first slot is kept
    /// if the break has only just started).
    public mutating func requestReturn() throws(BreakRequestError) {
        guard let open else { throw .noBreakOpen }
        guard !returnRequested else { throw .returnPending(id: open.id) }
        returnRequested = true
    }

    // MARK: Content

    /// Processes the content version about to be published: every segment whose media sequence
    /// number is above the last one processed (on the first call, every segment), in order,
    /// starting and ending breaks in ``log``.
    ///
    /// - Parameters:
    ///   - content: a version of the channel's cue rendition as the origin will publish it, with
    ///     PROGRAM-DATE-TIME (the log needs dates; without them starts and ends are rejected and
    ///     reported).
    ///   - ruleSetVersion: the ad configuration version current now; a break started now keeps it.
    /// - Returns: what happened, in order, for the caller's logs and metrics.
    ///
    /// Low-latency content (EXT-X-PART-INF) is processed one segment ahead: the segment still being
    /// produced (`last + 1`, its tags those before its first part) is processed as soon as the one
    /// before it is complete, so that a break starts, and returns, before the first part of its
    /// segment is published and the stitched open segment never changes kind (F21). A cue that an
    /// encoder writes only on the completed segment, not before its first part, is then not seen.
    public mutating func advance(to content: MediaPlaylist, ruleSetVersion: UInt64) -> [BreakEvent] {
        guard !content.segments.isEmpty else { return [] }
        let content = Self.withOpenSegment(content)
        let count = content.segments.count
        let first = content.effectiveMediaSequence
        var startIndex = 0
        if let lastProcessed {
            // Media sequence numbers only grow; a version that lists nothing newer adds nothing.
            guard content.mediaSequenceNumber(at: count - 1) > lastProcessed else { return [] }
            if lastProcessed >= first { startIndex = Int(lastProcessed - first) + 1 }
        }
        let dates = content.programDateTimes()
        var events: [BreakEvent] = []
        for index in startIndex..<count {
            process(index: index, of: content, dates: dates, ruleSetVersion: ruleSetVersion, events: &events)
        }
        return events
    }

    /// `content`, and when it is low-latency and live, its open segment as a segment: the tags before
    /// its first part, lasting as long as the segment before it (a guess only the date of a "cue now"
    /// after it depends on).
    static func withOpenSegment(_ content: MediaPlaylist) -> MediaPlaylist {
        guard content.partInformation != nil, !content.endList, let last = content.segments.last else { return content }
        var tags = content.trailingTags
        tags.parts = []
        var open = MediaSegment(uri: last.uri, duration: last.duration)
        open.tags = tags
        var content = content
        content.trailingTags = SegmentTags()
        content.segments.append(open)
        return content
    }

    /// Forgets the breaks that ended before `msn`: pass the first media sequence number still served
    /// by any window (the log's ``BreakLog/removeBreaks(endingBefore:)``).
    public mutating func prune(before msn: UInt64) {
        log.removeBreaks(endingBefore: msn)
    }

    // MARK: One segment

    private mutating func process(
        index: Int, of content: MediaPlaylist, dates: [ProgramDateTime?], ruleSetVersion: UInt64,
        events: inout [BreakEvent]
    ) {
        let msn = content.mediaSequenceNumber(at: index)
        let segment = content.segments[index]
        let date = dates[index]
        defer {
            lastProcessed = msn
            nextDate = date?.adding(segment.duration)
        }
        // A dated start belongs to this segment if it is the first at or after the date: the date
        // is after the previous segment's (or, for the first listed segment, whose predecessor is
        // unknown, close to this one's own) and not after this one's.
        let tolerance = Self.tolerance
        let previous = index > 0 ? dates[index - 1] : nil
        let earliest: ProgramDateTime? = date.map { previous?.adding(tolerance) ?? $0.adding(.zero - tolerance) }
        let latest = date?.adding(tolerance)

        let cues = cues(in: segment.tags, msn: msn)
        events += cues.events
        let signals = applyCancels(cues.signals, msn: msn, events: &events)

        // Sort the signals: due now, or later.
        var dueEnds: [CueSignal] = []
        var laterEnds: [(end: CueSignal, date: ProgramDateTime)] = []
        var dueStarts: [CueSignal] = []
        var fired: [CueSignal] = []
        for signal in signals {
            switch signal.action {
            case .cancel:
                continue
            case .end:
                if let at = signal.date, let latest, at > latest { laterEnds.append((signal, at)) } else { dueEnds.append(signal) }
            case .start:
                if signal.repeatsOnContinuation, cues.isContinuation {
                    continue  // a break in progress, joined in the middle: content
                }
                if cues.hasInvalidCue {
                    events.append(.ignoredCue(msn: msn, tag: signal.tag, reason: "the segment also carries an invalid cue"))
                    continue
                }
                if let at = signal.date, let latest, let earliest {
                    if at > latest {
                        addPending(signal, at: at, msn: msn, events: &events)
                        continue
                    }
                    if at <= earliest {
                        events.append(
                            .ignoredCue(
                                msn: msn, tag: signal.tag,
                                reason: "splice date \(at) is before this segment's start; the break began earlier"))
                        continue
                    }
                }
                dueStarts.append(signal)
            }
        }
        if let date {
            // Starts announced on earlier segments whose date has come go first.
            fired = pending.filter { date >= $0.date.adding(.zero - tolerance) }.map(\.signal)
            if !fired.isEmpty {
                pending.removeAll { date >= $0.date.adding(.zero - tolerance) }
                dueStarts = fired + dueStarts
            }
        }

        // 1. End the open break (first, so that a break can start at the segment where one ends).
        let before = open
        let (ended, unmatched) = endOpenBreak(at: msn, date: date, dueEnds: dueEnds, content: content, events: &events)

        // 2. Start at most one break: the source's, else a request, else the schedule.
        startFromCues(
            dueStarts, ended: ended, msn: msn, date: date, content: content, ruleSetVersion: ruleSetVersion,
            events: &events)
        if let request {
            self.request = nil
            if let open {
                events.append(.droppedRequest(id: request.id, msn: msn, reason: "the source started break \(open.id) here"))
            } else {
                begin(
                    id: request.id, source: .request, plannedDuration: request.duration, msn: msn, date: date,
                    content: content, ruleSetVersion: ruleSetVersion, events: &events)
            }
        }
        if let schedule, let date, let earliest, let latest {
            scheduledStart(
                schedule, msn: msn, date: date, earliest: earliest, latest: latest, firstSeen: previous == nil,
                content: content, ruleSetVersion: ruleSetVersion, events: &events)
        }

        // 3. The source's ends that ended nothing: the end of a break that starts here (its start was
        // announced ahead and its end is already due: it ends at the next segment), or reported.
        for end in unmatched {
            if var open, open.startMSN == msn, !end.keys.isEmpty, open.accepts(end) {
                open.end = ScheduledEnd(date: end.date ?? date ?? open.startDate, cue: end.cue)
                self.open = open
                continue
            }
            let reason: String
            if let target = before {
                reason =
                    target.source == .cue
                    ? "does not match break \(target.id)" : "break \(target.id) came from the \(target.source), not a cue"
            } else {
                reason = "no break is in progress"
            }
            events.append(.ignoredCue(msn: msn, tag: end.tag, reason: reason))
        }

        // 4. Ends announced ahead: the open break's, or a waiting start's.
        for (end, at) in laterEnds {
            if var open, open.accepts(end) {
                open.end = ScheduledEnd(date: at, cue: end.cue)
                self.open = open
            } else if let index = pending.firstIndex(where: { !$0.signal.keys.isDisjoint(with: end.keys) }) {
                pending[index].signal.end = ScheduledEnd(date: at, cue: end.cue)
            } else {
                events.append(.ignoredCue(msn: msn, tag: end.tag, reason: "announces the end of no break in progress"))
            }
        }

        // Remember the ad date ranges dealt with, so that a repeat is not a new break; those still
        // waiting are remembered when their start comes.
        let waiting = Set(pending.flatMap(\.signal.dateRangeIDs))
        for range in cues.newRanges where !waiting.contains(range.id) { seenRanges.insert(range) }
        for signal in fired {
            for id in signal.dateRangeIDs { seenRanges.insert(RangeIdentity(id: id, startDate: signal.date)) }
        }
    }

    /// Starts the break scheduled for segment `msn`, if one is: the latest scheduled time in
    /// `(earliest, latest]`, unless a break is open or the segment is a whole break duration late
    /// (a gap in the content). At the first segment seen, a scheduled break that began before it is
    /// reported as skipped.
    private mutating func scheduledStart(
        _ schedule: BreakSchedule, msn: UInt64, date: ProgramDateTime, earliest: ProgramDateTime,
        latest: ProgramDateTime, firstSeen: Bool, content: MediaPlaylist, ruleSetVersion: UInt64,
        events: inout [BreakEvent]
    ) {
        guard let occurrence = schedule.latestOccurrence(after: earliest, through: latest) else {
            if firstSeen, let missed = schedule.latestOccurrence(after: date.adding(.seconds(-86_400)), through: earliest),
                missed.time.adding(missed.duration) > date
            {
                events.append(
                    .skippedScheduledBreak(msn: msn, scheduled: missed.time, reason: "it began before the first segment seen"))
            }
            return
        }
        let lateness = date.duration(since: occurrence.time)
        if let open {
            let reason = open.startMSN == msn ? "break \(open.id) starts at the same segment" : "it falls inside break \(open.id)"
            events.append(.skippedScheduledBreak(msn: msn, scheduled: occurrence.time, reason: reason))
        } else if lateness >= occurrence.duration {
            events.append(
                .skippedScheduledBreak(
                    msn: msn, scheduled: occurrence.time,
                    reason: "the first segment after it starts \(lateness) s late, not less than the break's \(occurrence.duration) s"))
        } else {
            begin(
                id: uniqueID("sched-\(date.millisecondsSinceEpoch)"), source: .schedule,
                plannedDuration: occurrence.duration, msn: msn, date: date, content: content,
                ruleSetVersion: ruleSetVersion, events: &events)
        }
    }

    /// Drops the starts a cancel names — earlier on this segment, or announced and waiting — and
    /// reports every cancel (HLS-RULES D14: a cancelled splice is not stitched).
    private mutating func applyCancels(_ signals: [CueSignal], msn: UInt64, events: inout [BreakEvent]) -> [CueSignal] {
        var result: [CueSignal] = []
        for signal in signals {
            guard signal.action == .cancel else {
                result.append(signal)
                continue
            }
            let matches: (Set<CueKey>) -> Bool = { keys in signal.keys.contains { $0.cancels(keys) } }
            let before = result.count + pending.count
            result.removeAll { $0.action == .start && matches($0.keys) }
            pending.removeAll { matches($0.signal.keys) }
            let event = signal.eventID.map { "splice event \($0)" } ?? "segmentation event"
            let reason =
                result.count + pending.count < before
                ? "cancels \(event): the announced break is dropped" : "cancels \(event), which is not waiting to start"
            events.append(.ignoredCue(msn: msn, tag: signal.tag, reason: reason))
        }
        return result
    }

    private mutating func addPending(_ signal: CueSignal, at date: ProgramDateTime, msn: UInt64, events: inout [BreakEvent]) {
        pending.append(PendingStart(signal: signal, date: date))
        if pending.count > Self.maximumPendingStarts {
            let dropped = pending.removeFirst()
            events.append(
                .ignoredCue(
                    msn: msn, tag: dropped.signal.tag,
                    reason: "more than \(Self.maximumPendingStarts) breaks announced ahead; dropped the one at \(dropped.date)"))
        }
    }

    /// Ends the open break at `msn` if its time has come; returns the break that ended here, if any,
    /// and the source's ends that do not belong to the open break.
    private mutating func endOpenBreak(
        at msn: UInt64, date: ProgramDateTime?, dueEnds: [CueSignal], content: MediaPlaylist,
        events: inout [BreakEvent]
    ) -> (ended: OpenBreak?, unmatched: [CueSignal]) {
        let target = open
        if let target, target.startMSN < msn {
            let tolerance = Self.tolerance
            let plannedEnd = target.startDate.adding(target.plannedDuration - tolerance)
            var cause: BreakEndCause?
            var inCue: [UInt8]?
            if let end = dueEnds.first(where: { target.accepts($0) }) {
                cause = .cue
                inCue = end.cue
            } else if let end = target.end, let date, date >= end.date.adding(.zero - tolerance) {
                cause = .cue
                inCue = end.cue
            } else if returnRequested {
                cause = .request
            } else if let date, date >= plannedEnd {
                cause = .plannedDurationElapsed
            } else if let date, date < target.startDate {
                cause = .datesWentBack
            }
            if let cause {
                do throws(BreakLogError) {
                    try log.endBreak(id: target.id, at: msn, inCue: inCue, content: content)
                    open = nil
                    returnRequested = false
                    let early = cause != .plannedDurationElapsed && date.map { $0 < plannedEnd } ?? false
                    events.append(.ended(id: target.id, msn: msn, early: early, cause: cause))
                } catch {
                    events.append(.rejected(msn: msn, error: error))
                }
            }
        }
        let unmatched = dueEnds.filter { !(target?.accepts($0) ?? false) }
        return (open == nil ? target : nil, unmatched)
    }

    /// Starts one break from the source's signals due at `msn` — all of them describe it — or
    /// reports why not.
    private mutating func startFromCues(
        _ starts: [CueSignal], ended: OpenBreak?, msn: UInt64, date: ProgramDateTime?, content: MediaPlaylist,
        ruleSetVersion: UInt64, events: inout [BreakEvent]
    ) {
        guard !starts.isEmpty else { return }
        if let open {
            for start in starts where open.keys.isDisjoint(with: start.keys) {
                events.append(.ignoredCue(msn: msn, tag: start.tag, reason: "break \(open.id) is in progress"))
            }
            return
        }
        // A repeat of the break that has just ended (its out cue re-sent with the in cue) is not a new one.
        let fresh = starts.filter { start in ended.map { $0.keys.isDisjoint(with: start.keys) } ?? true }
        guard !fresh.isEmpty else { return }
        let rank = fresh.map(\.rank).max()!
        let ordered = fresh.filter { $0.rank == rank } + fresh.filter { $0.rank != rank }
        let planned = ordered.lazy.compactMap(\.plannedDuration).first ?? (defaultDuration > .zero ? defaultDuration : .seconds(30))
        let eventID = ordered.lazy.compactMap(\.eventID).first
        let millis = date.map { String($0.millisecondsSinceEpoch) } ?? "?"
        let base = eventID.map { "scte-\($0)-\(millis)" } ?? "cue-\(millis)"
        begin(
            id: uniqueID(base), source: .cue, plannedDuration: planned, msn: msn, date: date, content: content,
            ruleSetVersion: ruleSetVersion, outCue: ordered.lazy.compactMap(\.cue).first, events: &events)
        guard var open, open.startMSN == msn else { return }
        open.keys = fresh.reduce(into: []) { $0.formUnion($1.keys) }
        open.ownerKeys = fresh.filter { $0.rank == rank }.reduce(into: []) { $0.formUnion($1.keys) }
        open.end = ordered.lazy.compactMap(\.end).first
        self.open = open
    }

    /// Records a break starting at `msn`.
    private mutating func begin(
        id: String, source: BreakSource, plannedDuration: HLSDuration, msn: UInt64, date: ProgramDateTime?,
        content: MediaPlaylist, ruleSetVersion: UInt64, outCue: [UInt8]? = nil, events: inout [BreakEvent]
    ) {
        guard let date else {
            events.append(.rejected(msn: msn, error: .contentWithoutDates(msn: msn)))
            return
        }
        do throws(BreakLogError) {
            try log.startBreak(
                id: id, at: msn, plannedDuration: plannedDuration, ruleSetVersion: ruleSetVersion, outCue: outCue,
                content: content)
            open = OpenBreak(id: id, source: source, startMSN: msn, startDate: date, plannedDuration: plannedDuration)
            returnRequested = false
            events.append(.started(id: id, msn: msn, source: source, plannedDuration: plannedDuration))
        } catch {
            events.append(.rejected(msn: msn, error: error))
        }
    }

    /// `base`, or `base-2`, `base-3`… if a retained break has it (dates that went back).
    private func uniqueID(_ base: String) -> String {
        var id = base
        var number = 1
        while log.adBreak(id: id) != nil || request?.id == id {
            number += 1
            id = "\(base)-\(number)"
        }
        return id
    }
}

// MARK: - State

extension BreakTracker {
    /// The break in progress and what identifies its signals.
    struct OpenBreak: Sendable, Hashable {
        var id: String
        var source: BreakSource
        var startMSN: UInt64
        var startDate: ProgramDateTime
        var plannedDuration: HLSDuration
        /// Every signal that started it: their repeats are the same break.
        var keys: Set<CueKey> = []
        /// The signals of the highest rank: only their ends end it.
        var ownerKeys: Set<CueKey> = []
        /// Its end as the source announced it.
        var end: ScheduledEnd?

        /// Whether the source's end signal `end` ends this break. Only a break from the source's
        /// signals ends at one. A generic end (CUE-IN) ends it; an end that names a break — a date
        /// range ID, a splice event, a segmentation type — ends it only if it pairs with one of the
        /// signals of the highest rank that started it: another range's end, another event's, or a
        /// nested ad's (an Advertisement End inside a Placement Opportunity) does not.
        func accepts(_ end: CueSignal) -> Bool {
            guard source == .cue else { return false }
            if end.keys.isEmpty { return true }
            return end.keys.contains { key in
                switch key {
                case .dateRange, .spliceEvent:
                    return ownerKeys.contains(key)
                case .segmentation(let type, _):
                    return ownerKeys.contains {
                        if case .segmentation(let start, _) = $0 { return start &+ 1 == type }
                        return false
                    }
                case .segmentationEvent:
                    return false
                }
            }
        }
    }

    /// A dated start announced ahead of its segment.
    struct PendingStart: Sendable, Hashable {
        var signal: CueSignal
        var date: ProgramDateTime
    }

    /// A "cue now" waiting for its segment.
    struct Request: Sendable, Hashable {
        var id: String
        var duration: HLSDuration
    }

    /// A date range: its ID, and its START-DATE, as encoders that derive IDs from reused event ids
    /// give a later range the ID of an earlier one.
    struct RangeIdentity: Sendable, Hashable {
        var id: String
        var startDate: ProgramDateTime?

        /// The same range, as far as the tags tell: a later tag of one range repeats its START-DATE
        /// or omits it (D2, D8).
        func matches(_ other: RangeIdentity) -> Bool {
            guard id == other.id else { return false }
            guard let start = startDate, let otherStart = other.startDate else { return true }
            return start.millisecondsSinceEpoch == otherStart.millisecondsSinceEpoch
        }
    }

    /// The last `capacity` ranges inserted.
    struct RecentRanges: Sendable, Hashable {
        let capacity: Int
        private(set) var ranges: [RangeIdentity] = []

        init(capacity: Int) { self.capacity = capacity }

        func contains(_ range: RangeIdentity) -> Bool { ranges.contains { $0.matches(range) } }

        mutating func insert(_ range: RangeIdentity) {
            guard !ranges.contains(range) else { return }
            ranges.append(range)
            if ranges.count > capacity { ranges.removeFirst(ranges.count - capacity) }
        }
    }
}
