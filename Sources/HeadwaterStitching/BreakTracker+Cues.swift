import HeadwaterHLS
import HeadwaterSCTE35

// Reading a segment's ad signals into one vocabulary (HLS-RULES D, H, I): every syntax a source may
// use becomes a `CueSignal` — start, end or cancel — with the identities that pair an end with its
// start and let repeats of one break be recognised.

/// What identifies a break across the signals that describe it.
enum CueKey: Sendable, Hashable {
    /// An `EXT-X-DATERANGE` `ID`.
    case dateRange(String)
    /// A `splice_insert()` `splice_event_id`.
    case spliceEvent(UInt32)
    /// A `segmentation_descriptor()`: `segmentation_type_id` and `segmentation_event_id`.
    case segmentation(type: UInt8, event: UInt32)
    /// A cancelled segmentation event (its type is not sent).
    case segmentationEvent(UInt32)

    /// Whether this cancel key names the event of a start with `keys`.
    func cancels(_ keys: Set<CueKey>) -> Bool {
        switch self {
        case .spliceEvent: return keys.contains(self)
        case .segmentationEvent(let event):
            return keys.contains {
                if case .segmentation(_, let other) = $0 { return other == event }
                return false
            }
        case .dateRange, .segmentation: return false
        }
    }
}

/// A break's end announced ahead (a DATERANGE's `END-DATE` or `DURATION`).
struct ScheduledEnd: Sendable, Hashable {
    var date: ProgramDateTime
    var cue: [UInt8]?
}

/// One ad signal of a segment.
struct CueSignal: Sendable, Hashable {
    enum Action: Sendable, Hashable { case start, end, cancel }

    var action: Action
    /// The tag name, for events (bounded, fit for a metric label).
    var tag: String
    var keys: Set<CueKey> = []
    /// How much of the programme a start covers: 3 a whole break (splice_insert, segmentation
    /// Break Start), 2 a placement opportunity, 1 a single ad or an unspecified DATERANGE, 0 a
    /// bare CUE-OUT. When signals of several ranks start one break, only the highest rank's end
    /// ends it: the ads nested in a placement opportunity do not.
    var rank = 0
    var plannedDuration: HLSDuration?
    /// The splice_info_section: `outCue` of a start, `inCue` of an end.
    var cue: [UInt8]?
    var eventID: UInt32?
    /// When it takes effect (a DATERANGE's dates); `nil`: at the segment that carries it.
    var date: ProgramDateTime?
    /// A start's end, when its DATERANGE already states it.
    var end: ScheduledEnd?
    /// A start from `EXT-OATCLS-SCTE35` / `EXT-X-SCTE35`, which packagers repeat on the
    /// continuation segments of a break: not a start there.
    var repeatsOnContinuation = false

    var dateRangeIDs: [String] {
        keys.compactMap {
            if case .dateRange(let id) = $0 { return id }
            return nil
        }
    }
}

/// The ad signals of one segment, in order: date ranges first, then the ad-marker tags as written.
struct SegmentCues {
    var signals: [CueSignal] = []
    /// A cue on the segment could not be decoded: no break starts from this segment's signals, as
    /// the bad cue may describe it differently (DESIGN "Bad input": don't stitch that break).
    var hasInvalidCue = false
    /// The segment carries `EXT-X-CUE-OUT-CONT` (or `EXT-X-SCTE35` `CUE-OUT=CONT`): the source is in
    /// the middle of a break.
    var isContinuation = false
    /// The ad date ranges read for the first time (to be remembered once dealt with).
    var newRanges: [BreakTracker.RangeIdentity] = []
    var events: [BreakEvent] = []
}

extension BreakTracker {
    /// `segmentation_type_id`s that start a break (Break, Provider/Distributor Advertisement and
    /// Placement Opportunity Start), with their rank.
    static func startRank(segmentationType type: UInt8) -> Int? {
        switch type {
        case 0x22: return 3
        case 0x34, 0x36: return 2
        case 0x30, 0x32: return 1
        default: return nil
        }
    }

    /// `segmentation_type_id`s that end one: the Start type + 1.
    static func isEndType(segmentationType type: UInt8) -> Bool {
        [0x23, 0x31, 0x33, 0x35, 0x37].contains(type)
    }

    /// What an SCTE-35 section means for breaks (HLS-RULES I2, I3): a `splice_insert()` out / in /
    /// cancel, or a `time_signal()`'s segmentation descriptors of the break types. Other commands
    /// (splice_null heartbeats, bandwidth reservation, private) and segmentation types (programme
    /// boundaries, chapters, overlays) say nothing about breaks: no signal.
    static func signals(of section: SpliceInfoSection, bytes: [UInt8], tag: String) -> [CueSignal] {
        switch section.command {
        case .spliceInsert(let insert):
            let keys: Set<CueKey> = [.spliceEvent(insert.eventID)]
            guard let event = insert.scheduledEvent else {
                return [CueSignal(action: .cancel, tag: tag, keys: keys, cue: bytes, eventID: insert.eventID)]
            }
            guard event.outOfNetwork else {
                return [CueSignal(action: .end, tag: tag, keys: keys, cue: bytes, eventID: insert.eventID)]
            }
            return [
                CueSignal(
                    action: .start, tag: tag, keys: keys, rank: 3,
                    plannedDuration: positive(event.breakDuration.map { HLSDuration(microseconds: $0.durationMicroseconds) }),
                    cue: bytes, eventID: insert.eventID)
            ]
        case .timeSignal:
            var result: [CueSignal] = []
            for descriptor in section.segmentationDescriptors {
                guard let event = descriptor.scheduledEvent else {
                    result.append(
                        CueSignal(action: .cancel, tag: tag, keys: [.segmentationEvent(descriptor.eventID)], cue: bytes))
                    continue
                }
                let type = event.typeID.rawValue
                let keys: Set<CueKey> = [.segmentation(type: type, event: descriptor.eventID)]
                if let rank = startRank(segmentationType: type) {
                    result.append(
                        CueSignal(
                            action: .start, tag: tag, keys: keys, rank: rank,
                            plannedDuration: positive(descriptor.durationMicroseconds.map(HLSDuration.init(microseconds:))),
                            cue: bytes, eventID: descriptor.eventID))
                } else if isEndType(segmentationType: type) {
                    result.append(CueSignal(action: .end, tag: tag, keys: keys, cue: bytes, eventID: descriptor.eventID))
                }
            }
            return result
        default:
            return []
        }
    }

    static func positive(_ duration: HLSDuration?) -> HLSDuration? {
        guard let duration, duration > .zero else { return nil }
        return duration
    }

    /// Decodes a section (CRC verified); on failure, records an ``BreakEvent/invalidCue(msn:tag:reason:label:)``.
    /// The bytes returned are the section's alone: MPEG-TS stuffing after it (a cue cut from a TS
    /// packet) is not carried into the playlists Headwater writes.
    static func decode(
        _ decode: () throws(SCTE35Error) -> SpliceInfoSection, tag: String, msn: UInt64, context: String,
        into cues: inout SegmentCues
    ) -> (SpliceInfoSection, [UInt8])? {
        do {
            let section = try decode()
            // The model is lossless: re-encoding gives the bytes received, less any stuffing.
            var bare = section
            bare.trailingStuffingCount = 0
            let bytes = try bare.encoded()
            if section.isEncrypted {
                cues.events.append(.ignoredCue(msn: msn, tag: tag, reason: "\(context)encrypted cue, cannot be read"))
                return nil
            }
            return (section, bytes)
        } catch {
            cues.hasInvalidCue = true
            cues.events.append(.invalidCue(msn: msn, tag: tag, reason: "\(context)\(error)", label: error.reasonLabel))
            return nil
        }
    }

    /// The ad signals on segment `msn`.
    ///
    /// Ad markers are read by what they mean (``AdMarker/role``, ``AdMarker/plannedDuration``), not by
    /// their syntax, so every dialect the parser reads into a marker (Elemental, Google DAI,
    /// MediaTailor, Adobe, threefive, Wowza, Harmonic) calls a break exactly as the canonical form does.
    func cues(in tags: SegmentTags, msn: UInt64) -> SegmentCues {
        var cues = SegmentCues()
        for range in tags.dateRanges { dateRangeSignals(range, msn: msn, into: &cues) }
        for marker in tags.adMarkers {
            if case .scte35(let attributes) = marker {
                scte35TagSignals(attributes, marker: marker, msn: msn, into: &cues)
                continue
            }
            let tag = Self.tagName(of: marker)
            switch marker.role {
            case .start:
                cues.signals.append(CueSignal(action: .start, tag: tag, plannedDuration: Self.positive(marker.plannedDuration)))
            case .end:
                cues.signals.append(CueSignal(action: .end, tag: tag))
            case .continuation:
                cues.isContinuation = true
            case .cue:
                guard let base64 = marker.scte35Base64,
                    let (section, bytes) = Self.decode(
                        { () throws(SCTE35Error) in try SpliceInfoSection(base64: base64) }, tag: tag, msn: msn,
                        context: "", into: &cues)
                else { continue }
                for var signal in Self.signals(of: section, bytes: bytes, tag: tag) {
                    signal.repeatsOnContinuation = true
                    cues.signals.append(signal)
                }
            case .metadata:
                continue
            }
        }
        return cues
    }

    /// The marker's tag name, for events and metric labels (a bounded set).
    static func tagName(of marker: AdMarker) -> String {
        switch marker {
        case .cueOut: return AdMarker.cueOutTag
        case .cueOutContinuation: return AdMarker.cueOutContinuationTag
        case .cueIn: return AdMarker.cueInTag
        case .oatclsSCTE35: return AdMarker.oatclsTag
        case .scte35: return AdMarker.scte35Tag
        case .asset: return AdMarker.assetTag
        }
    }

    /// `#EXT-X-SCTE35:CUE="<base64>"[,CUE-OUT=YES|CUE-IN=YES|CUE-OUT=CONT]` (H6): the cue decides;
    /// without one (or with a cue that says nothing about breaks) the marker's ``AdMarker/role`` does
    /// (`CUE-OUT`/`CUE-IN`, or `TYPE=OUT`/`IN`).
    private func scte35TagSignals(
        _ attributes: AttributeList, marker: AdMarker, msn: UInt64, into cues: inout SegmentCues
    ) {
        let tag = AdMarker.scte35Tag
        let continuation = attributes.string("CUE-OUT")?.uppercased() == "CONT"
        if continuation { cues.isContinuation = true }
        var found: [CueSignal] = []
        var bytes: [UInt8]?
        if let text = attributes.string("CUE") {
            guard
                let (section, cue) = Self.decode(
                    { () throws(SCTE35Error) in try SpliceInfoSection(text: text) }, tag: tag, msn: msn, context: "",
                    into: &cues)
            else { return }
            bytes = cue
            found = Self.signals(of: section, bytes: cue, tag: tag)
        }
        if found.isEmpty, !continuation {
            // With a CUE the role is `.cue`; what the attributes alone say is the role without it.
            let bare = AttributeList(attributes.attributes.filter { $0.name != "CUE" })
            switch AdMarker.scte35(bare).role {
            case .start:
                found = [CueSignal(action: .start, tag: tag, plannedDuration: Self.positive(marker.plannedDuration), cue: bytes)]
            case .end:
                found = [CueSignal(action: .end, tag: tag, cue: bytes)]
            case .continuation, .cue, .metadata:
                break
            }
        }
        for var signal in found {
            signal.repeatsOnContinuation = true
            cues.signals.append(signal)
        }
    }

    /// `EXT-X-DATERANGE` with `SCTE35-OUT` (start), `SCTE35-IN` (end) or `SCTE35-CMD` (the cue
    /// decides), taking effect at `START-DATE` (the splice time, D13) — or, for an end, at `END-DATE`
    /// / `START-DATE + DURATION` when stated. A later tag of the open break's range (same ID) only
    /// adds its end (D8, D12); a range already dealt with is not read again. Date ranges without
    /// SCTE-35 attributes (programmes, interstitials) are not ad signals.
    private func dateRangeSignals(_ range: DateRange, msn: UInt64, into cues: inout SegmentCues) {
        let tag = DateRange.tagName
        let id = range.id
        let attributes = range.attributes
        let hasOut = attributes.contains("SCTE35-OUT")
        let hasIn = attributes.contains("SCTE35-IN")
        let hasCommand = attributes.contains("SCTE35-CMD")
        var endDate = range.endDate
        if endDate == nil, let start = range.startDate, let duration = range.duration, duration >= .zero {
            endDate = start.adding(duration)
        }

        func section(_ name: String) -> (SpliceInfoSection, [UInt8])? {
            guard let bytes = attributes.hexBytes(name) else {
                cues.hasInvalidCue = true
                cues.events.append(
                    .invalidCue(
                        msn: msn, tag: tag, reason: "ID \(id.debugDescription): \(name) is not a hexadecimal sequence",
                        label: BreakEvent.invalidHexLabel))
                return nil
            }
            return Self.decode(
                { () throws(SCTE35Error) in try SpliceInfoSection(bytes: bytes) }, tag: tag, msn: msn,
                context: "ID \(id.debugDescription) \(name): ", into: &cues)
        }

        let key = CueKey.dateRange(id)
        let known = open?.keys.contains(key) == true || pending.contains { $0.signal.keys.contains(key) }
        if known {
            // A later tag of a range in progress: only its end is news. Ends of ranges nested in the
            // open break (an ad inside a placement opportunity) do not end it.
            if let open, open.keys.contains(key), !open.ownerKeys.contains(key) { return }
            guard hasIn || endDate != nil else { return }
            var cue: [UInt8]?
            if hasIn {
                guard let (_, bytes) = section("SCTE35-IN") else { return }
                cue = bytes
            }
            cues.signals.append(CueSignal(action: .end, tag: tag, keys: [key], cue: cue, date: endDate))
            return
        }
        let identity = RangeIdentity(id: id, startDate: range.startDate)
        guard !seenRanges.contains(identity), hasOut || hasIn || hasCommand else { return }
        cues.newRanges.append(identity)

        if hasOut {
            guard let (out, outBytes) = section("SCTE35-OUT") else { return }
            let meaning = Self.signals(of: out, bytes: outBytes, tag: tag)
            if meaning.contains(where: { $0.action == .cancel }) {
                for var cancel in meaning where cancel.action == .cancel {
                    cancel.keys.insert(key)
                    cues.signals.append(cancel)
                }
                return
            }
            var end: ScheduledEnd?
            if let endDate {
                var inCue: [UInt8]?
                if hasIn {
                    guard let (_, bytes) = section("SCTE35-IN") else { return }
                    inCue = bytes
                }
                end = ScheduledEnd(date: endDate, cue: inCue)
            }
            let starts = meaning.filter { $0.action == .start }
            var signal = CueSignal(
                action: .start, tag: tag, keys: [key], rank: max(1, starts.map(\.rank).max() ?? 0), cue: outBytes,
                eventID: starts.first?.eventID, date: range.startDate, end: end)
            for start in starts { signal.keys.formUnion(start.keys) }
            var statedLength: HLSDuration?
            if let start = range.startDate, let endDate { statedLength = endDate.duration(since: start) }
            signal.plannedDuration =
                Self.positive(range.plannedDuration) ?? starts.lazy.compactMap(\.plannedDuration).first
                ?? Self.positive(statedLength)
            cues.signals.append(signal)
        } else if hasIn {
            // The range's ID pairs it with its out (D10, D11), not the cue's event ids, which
            // encoders reuse.
            guard let (_, inBytes) = section("SCTE35-IN") else { return }
            cues.signals.append(CueSignal(action: .end, tag: tag, keys: [key], cue: inBytes, date: endDate ?? range.startDate))
        } else {
            guard let (command, bytes) = section("SCTE35-CMD") else { return }
            for var signal in Self.signals(of: command, bytes: bytes, tag: tag) {
                signal.keys.insert(key)
                signal.date = range.startDate
                if signal.action == .start {
                    signal.rank = max(1, signal.rank)
                    signal.plannedDuration = Self.positive(range.plannedDuration) ?? signal.plannedDuration
                }
                cues.signals.append(signal)
            }
        }
    }
}
