public import HeadwaterHLS

/// A channel's ``BreakTracker`` as it is saved with its window, so that a restart keeps its ad
/// breaks: the breaks aired and the one in progress, the discontinuity numbering of stitched
/// playlists (which depends on every break since the channel started, not only on those in the
/// window), operator requests and announced starts waiting for their segment. A tracker restored
/// from it and fed the restored window decides exactly as the one that wrote it: stitched sessions
/// see the same playlists across the restart.
///
/// Spelled out field by field (not the tracker's internals), so that the saved format changes only
/// on purpose. Dates are ISO 8601 as in playlists, durations µs, cues `0x`-hex.
/// The schedule and the default duration come from the configuration, not from the record.
public struct BreakTrackerRecord: Sendable, Hashable, Codable {
    public var breaks: [Break]
    public var initialOffset: UInt64
    public var lastProcessed: UInt64?
    public var nextDate: String?
    public var open: Open?
    public var pending: [Pending]
    public var requestID: String?
    public var requestDuration: Int64?
    public var returnRequested: Bool
    public var seenRanges: [Range]

    public struct Break: Sendable, Hashable, Codable {
        public var id: String
        public var startMediaSequence: UInt64
        public var startDate: String
        public var plannedDuration: Int64
        public var ruleSetVersion: UInt64
        public var outCue: String?
        public var scte35Out: String?
        public var discontinuitySequenceBeforeStart: UInt64
        public var offsetBefore: UInt64
        public var end: End?
    }

    public struct End: Sendable, Hashable, Codable {
        public var mediaSequence: UInt64
        public var date: String
        public var inCue: String?
        public var scte35In: String?
        public var contentDiscontinuitySequence: UInt64
    }

    /// A cue key: `kind` is `daterange` (with `id`), `splice` (`event`), `segmentation` (`type`,
    /// `event`) or `segmentation-event` (`event`).
    public struct Key: Sendable, Hashable, Codable {
        public var kind: String
        public var id: String?
        public var event: UInt32?
        public var type: UInt8?
    }

    public struct Open: Sendable, Hashable, Codable {
        public var id: String
        /// `cue`, `schedule` or `request`.
        public var source: String
        public var startMSN: UInt64
        public var startDate: String
        public var plannedDuration: Int64
        public var keys: [Key]
        public var ownerKeys: [Key]
        public var endDate: String?
        public var endCue: String?
    }

    public struct Signal: Sendable, Hashable, Codable {
        /// `start`, `end` or `cancel`.
        public var action: String
        public var tag: String
        public var keys: [Key]
        public var rank: Int
        public var plannedDuration: Int64?
        public var cue: String?
        public var eventID: UInt32?
        public var date: String?
        public var endDate: String?
        public var endCue: String?
        public var repeatsOnContinuation: Bool
    }

    public struct Pending: Sendable, Hashable, Codable {
        public var signal: Signal
        public var date: String
    }

    public struct Range: Sendable, Hashable, Codable {
        public var id: String
        public var startDate: String?
    }

    /// Why a record cannot be restored (the channel's breaks then start afresh).
    public struct RestoreError: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}

extension BreakTracker {
    /// The tracker's state, to save with the window it has processed.
    public var record: BreakTrackerRecord {
        BreakTrackerRecord(
            breaks: log.breaks.map(Self.record), initialOffset: log.initialOffset, lastProcessed: lastProcessed,
            nextDate: nextDate?.description, open: open.map(Self.record), pending: pending.map(Self.record),
            requestID: request?.id, requestDuration: request?.duration.microseconds, returnRequested: returnRequested,
            seenRanges: seenRanges.ranges.map { .init(id: $0.id, startDate: $0.startDate?.description) })
    }

    /// The tracker `record` describes, with the configuration's schedule and default duration.
    public init(
        channel: String, schedule: BreakSchedule?, defaultDuration: HLSDuration, restoring record: BreakTrackerRecord
    ) throws(BreakTrackerRecord.RestoreError) {
        self.init(channel: channel, schedule: schedule, defaultDuration: defaultDuration)
        var breaks: [AdBreak] = []
        for stored in record.breaks { breaks.append(try Self.adBreak(stored)) }
        guard zip(breaks, breaks.dropFirst()).allSatisfy({ $0.startMediaSequence < $1.startMediaSequence }),
            breaks.dropLast().allSatisfy({ $0.end != nil })
        else { throw .init(message: "saved breaks are out of order, or one before the last is open") }
        log.breaks = breaks
        log.initialOffset = record.initialOffset
        lastProcessed = record.lastProcessed
        nextDate = try record.nextDate.map(Self.date)
        open = try record.open.map(Self.openBreak)
        pending = try record.pending.map { stored throws(BreakTrackerRecord.RestoreError) in
            PendingStart(signal: try Self.signal(stored.signal), date: try Self.date(stored.date))
        }
        if let id = record.requestID, let duration = record.requestDuration {
            request = Request(id: id, duration: HLSDuration(microseconds: duration))
        }
        returnRequested = record.returnRequested
        for range in record.seenRanges {
            seenRanges.insert(RangeIdentity(id: range.id, startDate: try range.startDate.map(Self.date)))
        }
    }

    // MARK: Records

    private static func record(_ adBreak: AdBreak) -> BreakTrackerRecord.Break {
        BreakTrackerRecord.Break(
            id: adBreak.id, startMediaSequence: adBreak.startMediaSequence, startDate: adBreak.startDate.description,
            plannedDuration: adBreak.plannedDuration.microseconds, ruleSetVersion: adBreak.ruleSetVersion,
            outCue: adBreak.outCue.map(HexSequence.encode), scte35Out: adBreak.scte35Out.map(HexSequence.encode),
            discontinuitySequenceBeforeStart: adBreak.discontinuitySequenceBeforeStart, offsetBefore: adBreak.offsetBefore,
            end: adBreak.end.map { end in
                .init(
                    mediaSequence: end.mediaSequence, date: end.date.description, inCue: end.inCue.map(HexSequence.encode),
                    scte35In: end.scte35In.map(HexSequence.encode), contentDiscontinuitySequence: end.contentDiscontinuitySequence)
            })
    }

    private static func record(_ key: CueKey) -> BreakTrackerRecord.Key {
        switch key {
        case .dateRange(let id): .init(kind: "daterange", id: id)
        case .spliceEvent(let event): .init(kind: "splice", event: event)
        case .segmentation(let type, let event): .init(kind: "segmentation", event: event, type: type)
        case .segmentationEvent(let event): .init(kind: "segmentation-event", event: event)
        }
    }

    /// Keys in a stable order, so that equal trackers give equal records.
    private static func record(_ keys: Set<CueKey>) -> [BreakTrackerRecord.Key] {
        keys.map(record).sorted { ($0.kind, $0.id ?? "", $0.event ?? 0, $0.type ?? 0) < ($1.kind, $1.id ?? "", $1.event ?? 0, $1.type ?? 0) }
    }

    private static func record(_ open: OpenBreak) -> BreakTrackerRecord.Open {
        BreakTrackerRecord.Open(
            id: open.id, source: open.source.rawValue, startMSN: open.startMSN, startDate: open.startDate.description,
            plannedDuration: open.plannedDuration.microseconds, keys: record(open.keys), ownerKeys: record(open.ownerKeys),
            endDate: open.end?.date.description, endCue: open.end?.cue.map(HexSequence.encode))
    }

    private static func record(_ pending: PendingStart) -> BreakTrackerRecord.Pending {
        let signal = pending.signal
        let action =
            switch signal.action {
            case .start: "start"
            case .end: "end"
            case .cancel: "cancel"
            }
        return BreakTrackerRecord.Pending(
            signal: .init(
                action: action, tag: signal.tag, keys: record(signal.keys), rank: signal.rank,
                plannedDuration: signal.plannedDuration?.microseconds, cue: signal.cue.map(HexSequence.encode),
                eventID: signal.eventID, date: signal.date?.description, endDate: signal.end?.date.description,
                endCue: signal.end?.cue.map(HexSequence.encode), repeatsOnContinuation: signal.repeatsOnContinuation),
            date: pending.date.description)
    }

    // MARK: Restoring

    private static func date(_ text: String) throws(BreakTrackerRecord.RestoreError) -> ProgramDateTime {
        guard let date = ProgramDateTime(iso8601: text) else { throw .init(message: "saved date \(text) does not parse") }
        return date
    }

    private static func bytes(_ text: String?) throws(BreakTrackerRecord.RestoreError) -> [UInt8]? {
        guard let text else { return nil }
        guard let bytes = HexSequence.decode(text) else { throw .init(message: "saved cue \(text) is not hex") }
        return bytes
    }

    private static func adBreak(_ stored: BreakTrackerRecord.Break) throws(BreakTrackerRecord.RestoreError) -> AdBreak {
        guard BreakLog.isValidID(stored.id), stored.plannedDuration > 0 else {
            throw .init(message: "saved break \(stored.id.debugDescription) is not valid")
        }
        var end: AdBreak.End?
        if let stored = stored.end {
            end = AdBreak.End(
                mediaSequence: stored.mediaSequence, date: try date(stored.date), inCue: try bytes(stored.inCue),
                scte35In: try bytes(stored.scte35In), contentDiscontinuitySequence: stored.contentDiscontinuitySequence)
        }
        if let end {
            // What ``BreakLog/endBreak(id:at:inCue:content:)`` guarantees, and the numbering relies on.
            guard end.mediaSequence > stored.startMediaSequence,
                end.contentDiscontinuitySequence >= stored.discontinuitySequenceBeforeStart,
                end.contentDiscontinuitySequence - stored.discontinuitySequenceBeforeStart
                    <= end.mediaSequence - stored.startMediaSequence + 1
            else { throw .init(message: "saved break \(stored.id) has an inconsistent end") }
        }
        return AdBreak(
            id: stored.id, startMediaSequence: stored.startMediaSequence, startDate: try date(stored.startDate),
            plannedDuration: HLSDuration(microseconds: stored.plannedDuration), ruleSetVersion: stored.ruleSetVersion,
            outCue: try bytes(stored.outCue), end: end, scte35Out: try bytes(stored.scte35Out),
            discontinuitySequenceBeforeStart: stored.discontinuitySequenceBeforeStart, offsetBefore: stored.offsetBefore)
    }

    private static func key(_ stored: BreakTrackerRecord.Key) throws(BreakTrackerRecord.RestoreError) -> CueKey {
        switch (stored.kind, stored.id, stored.event, stored.type) {
        case ("daterange", let id?, _, _): return .dateRange(id)
        case ("splice", _, let event?, _): return .spliceEvent(event)
        case ("segmentation", _, let event?, let type?): return .segmentation(type: type, event: event)
        case ("segmentation-event", _, let event?, _): return .segmentationEvent(event)
        default: throw .init(message: "saved cue key \(stored) is not valid")
        }
    }

    private static func keys(_ stored: [BreakTrackerRecord.Key]) throws(BreakTrackerRecord.RestoreError) -> Set<CueKey> {
        var keys = Set<CueKey>()
        for key in stored { keys.insert(try Self.key(key)) }
        return keys
    }

    private static func scheduledEnd(
        _ date: String?, _ cue: String?
    ) throws(BreakTrackerRecord.RestoreError) -> ScheduledEnd? {
        guard let date else { return nil }
        return ScheduledEnd(date: try Self.date(date), cue: try bytes(cue))
    }

    private static func openBreak(_ stored: BreakTrackerRecord.Open) throws(BreakTrackerRecord.RestoreError) -> OpenBreak {
        guard let source = BreakSource(rawValue: stored.source) else {
            throw .init(message: "saved break source \(stored.source) is not valid")
        }
        var open = OpenBreak(
            id: stored.id, source: source, startMSN: stored.startMSN, startDate: try date(stored.startDate),
            plannedDuration: HLSDuration(microseconds: stored.plannedDuration))
        open.keys = try keys(stored.keys)
        open.ownerKeys = try keys(stored.ownerKeys)
        open.end = try scheduledEnd(stored.endDate, stored.endCue)
        return open
    }

    private static func signal(_ stored: BreakTrackerRecord.Signal) throws(BreakTrackerRecord.RestoreError) -> CueSignal {
        let action: CueSignal.Action
        switch stored.action {
        case "start": action = .start
        case "end": action = .end
        case "cancel": action = .cancel
        default: throw .init(message: "saved cue action \(stored.action) is not valid")
        }
        var signal = CueSignal(action: action, tag: stored.tag)
        signal.keys = try keys(stored.keys)
        signal.rank = stored.rank
        signal.plannedDuration = stored.plannedDuration.map { HLSDuration(microseconds: $0) }
        signal.cue = try bytes(stored.cue)
        signal.eventID = stored.eventID
        signal.date = try stored.date.map(date)
        signal.end = try scheduledEnd(stored.endDate, stored.endCue)
        signal.repeatsOnContinuation = stored.repeatsOnContinuation
        return signal
    }
}
