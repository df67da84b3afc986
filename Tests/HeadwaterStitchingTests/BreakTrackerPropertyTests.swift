import Foundation
import HeadwaterHLS
import HeadwaterSCTE35
@testable import HeadwaterStitching
import HeadwaterTesting
import Testing

/// The break tracker over generated timelines: segments of 1.5–2.5 s with date jumps and restarts,
/// versions that add one to three segments, a random mix of every cue syntax (well-formed, repeated,
/// corrupted, cancelled, nested, announced ahead or late), a random schedule and random operator
/// requests. Checks the log's shape after every version, that the stitcher can render every version
/// with it, and that two trackers that start at different versions agree from the moment their
/// states agree.
@Suite("Break tracker over generated timelines")
struct BreakTrackerPropertyTests {
    static let shards = 4
    static let seedsPerShard = 25

    @Test("breaks are ordered, on listed segments, at least one slot, unique, stitchable, and deterministic", .cpuBound, arguments: 0..<shards)
    func generatedTimelines(shard: Int) {
        var coverage = TimelineRun.Coverage()
        let seeds = PropertySeed.seeds(Self.shards * Self.seedsPerShard)
        for seed in seeds[(shard * Self.seedsPerShard)..<((shard + 1) * Self.seedsPerShard)] {
            var run = TimelineRun(seed: seed)
            if let failure = run.run() {
                Issue.record("seed \(seed) (replay with HEADWATER_SEED=\(seed)): \(failure)")
                continue
            }
            coverage.add(run.coverage)
        }
        // The generator exercises what it should.
        #expect(coverage.started[.cue, default: 0] > 10, "\(coverage)")
        #expect(coverage.started[.schedule, default: 0] > 3, "\(coverage)")
        #expect(coverage.started[.request, default: 0] > 3, "\(coverage)")
        #expect(coverage.ended.count >= 3, "\(coverage)")
        #expect(coverage.invalidCues > 0 && coverage.ignoredCues > 0 && coverage.backToBack > 0, "\(coverage)")
        #expect(coverage.synced >= Self.seedsPerShard * 3 / 4, "\(coverage)")
        #expect(coverage.breaksAfterSync > 10, "\(coverage)")
    }
}

/// One generated timeline and the trackers fed with it.
struct TimelineRun {
    struct Coverage: CustomStringConvertible {
        var started: [BreakSource: Int] = [:]
        var ended: [BreakEndCause: Int] = [:]
        var invalidCues = 0
        var ignoredCues = 0
        var backToBack = 0
        var synced = 0
        var breaksAfterSync = 0

        mutating func add(_ other: Coverage) {
            started.merge(other.started, uniquingKeysWith: +)
            ended.merge(other.ended, uniquingKeysWith: +)
            invalidCues += other.invalidCues
            ignoredCues += other.ignoredCues
            backToBack += other.backToBack
            synced += other.synced
            breaksAfterSync += other.breaksAfterSync
        }

        var description: String {
            "started \(started), ended \(ended), invalid \(invalidCues), ignored \(ignoredCues), back to back \(backToBack), "
                + "synced \(synced), breaks after sync \(breaksAfterSync)"
        }
    }

    enum Request {
        case cueNow(HLSDuration)
        case returnNow
    }

    let seed: UInt64
    var random: SeededRandom
    private(set) var versions: [MediaPlaylist] = []
    private(set) var requests: [Int: Request] = [:]
    private(set) var schedule: BreakSchedule?
    private(set) var coverage = Coverage()

    init(seed: UInt64) {
        self.seed = seed
        random = SeededRandom(seed: seed)
        generate()
    }

    // MARK: Generation

    private mutating func generate() {
        let window = random.int(4...10)
        var msn = UInt64(random.int(0...100_000))
        var date = ProgramDateTime(millisecondsSinceEpoch: 1_772_366_400_000 + Int64(random.int(0...86_400)) * 1000)
        var live = MediaPlaylist(targetDuration: 3, mediaSequence: msn)
        live.discontinuitySequence = UInt64(random.int(0...5))
        var ranges: [(id: String, event: UInt32, start: ProgramDateTime)] = []
        var rangeNumber = 0
        let count = random.int(120...200)
        let firstDate = date

        for number in 0..<count {
            var tags = SegmentTags()
            if number > 0, random.chance(0.005) {
                // The source restarts: MSN and dates far ahead, a new window.
                let dsn = live.discontinuitySequenceNumbers().last ?? live.effectiveDiscontinuitySequence
                msn += UInt64(random.int(100...5000))
                date = date.adding(.seconds(Int64(random.int(60...7200))))
                live = MediaPlaylist(targetDuration: 3, mediaSequence: msn)
                live.discontinuitySequence = dsn + 1
            } else if number > 0, random.chance(0.02) {
                tags.discontinuity = true
                date = date.adding(.milliseconds(Int64(random.int(0...30_000))))
            }
            tags.programDateTime = live.segments.isEmpty || tags.discontinuity || random.chance(0.3) ? date : nil
            let duration = HLSDuration.milliseconds(Int64(random.int(1500...2500)))
            decorate(&tags, date: date, duration: duration, ranges: &ranges, rangeNumber: &rangeNumber)
            live.segments.append(MediaSegment(uri: "video/\(msn).ts", duration: duration, tags: tags))
            msn += 1
            date = date.adding(duration)
            if live.segments.count > window { live = live.removingSegmentsFromHead(live.segments.count - window) }
            // Versions add one to three segments.
            if random.chance(0.6) || number == count - 1 {
                versions.append(live)
                if random.chance(0.04) { requests[versions.count - 1] = .cueNow(.milliseconds(Int64(random.int(3000...12_000)))) }
                if random.chance(0.03) { requests[versions.count - 1] = .returnNow }
            }
        }

        switch random.int(0...4) {
        case 0, 1:
            schedule = nil
        case 2, 3:
            let every = Int64(random.int(30...120))
            schedule = try! BreakSchedule(
                every: .seconds(every), duration: .milliseconds(Int64(random.int(3000...30_000))),
                offset: .milliseconds(Int64(random.int(0...Int(every * 1000)))))
        default:
            let midnight = firstDate.millisecondsSinceEpoch / 86_400_000 * 86_400_000
            let base = Int((firstDate.millisecondsSinceEpoch - midnight) / 1000)
            schedule = try! BreakSchedule(
                daily: (0..<3).map { _ in
                    .init(secondsSinceMidnight: (base + random.int(0...400)) % 86_400, duration: .seconds(Int64(random.int(4...25))))
                })
        }
    }

    /// The source's ad signals on one segment.
    private mutating func decorate(
        _ tags: inout SegmentTags, date: ProgramDateTime, duration: HLSDuration,
        ranges: inout [(id: String, event: UInt32, start: ProgramDateTime)], rangeNumber: inout Int
    ) {
        guard random.chance(0.22) else { return }
        let event = UInt32(random.int(1...12))
        let seconds = Double(random.int(4...24))
        switch random.int(0...15) {
        case 0:
            let value = random.pick(["\(Int(seconds)).000", "DURATION=\(Int(seconds))", ""])
            tags.adMarkers.append(.cueOut(CueOut(value: value.isEmpty ? nil : value)))
        case 1, 2:
            tags.adMarkers.append(.cueIn(value: nil))
        case 3:
            tags.adMarkers.append(.cueOutContinuation(CueOutContinuation(elapsed: .seconds(2), duration: .seconds(Int64(seconds)))))
        case 4:
            tags.adMarkers.append(TestCues.oatcls(TestCues.spliceOut(event: event, seconds: random.chance(0.7) ? seconds : nil)))
            if random.chance(0.5) { tags.adMarkers.append(.cueOut(CueOut(duration: .seconds(Int64(seconds))))) }
        case 5:
            tags.adMarkers.append(TestCues.oatcls(TestCues.spliceIn(event: event)))
            if random.chance(0.5) { tags.adMarkers.append(.cueIn(value: nil)) }
        case 6:
            let type = random.pick([0x22, 0x30, 0x32, 0x34, 0x36, 0x10, 0x38] as [UInt8])
            var descriptors = [TestCues.segmentation(type, event: event, seconds: seconds)]
            if random.chance(0.3) { descriptors.append(TestCues.segmentation(0x30, event: event &+ 1, seconds: 4)) }
            tags.adMarkers.append(TestCues.oatcls(SpliceInfoSection.timeSignal(ptsTime: 1, descriptors: descriptors)))
        case 7:
            let type = random.pick([0x23, 0x31, 0x33, 0x35, 0x37, 0x11] as [UInt8])
            tags.adMarkers.append(TestCues.oatcls(TestCues.timeSignal(TestCues.segmentation(type, event: event))))
        case 8, 9:
            // A DATERANGE out, on time, ahead, mid-segment or late; sometimes with its end.
            rangeNumber += 1
            let id = "range-\(rangeNumber)"
            let start = date.adding(.milliseconds(Int64(random.int(-3000...8000))))
            let out = TestCues.bytes(TestCues.spliceOut(event: event, seconds: seconds))
            let known = random.chance(0.3) ? HLSDuration.milliseconds(Int64(seconds * 1000) / 2) : nil
            tags.dateRanges.append(
                DateRange(id: id, startDate: start, duration: known, plannedDuration: .milliseconds(Int64(seconds * 1000)), scte35Out: out))
            ranges.append((id, event, start))
            if random.chance(0.3) { tags.adMarkers.append(.cueOut(CueOut(duration: .seconds(Int64(seconds))))) }
        case 10:
            // The in of an earlier range.
            guard let range = ranges.randomElement(using: &random), range.start < date else { return }
            let back = TestCues.bytes(TestCues.spliceIn(event: range.event))
            tags.dateRanges.append(
                DateRange(id: range.id, startDate: range.start, duration: date.duration(since: range.start), scte35In: back))
        case 11:
            let cancel = random.chance(0.5) ? SpliceInfoSection.spliceInsertCancel(eventID: event) : TestCues.segmentationCancel(event: event)
            tags.adMarkers.append(TestCues.oatcls(cancel))
        case 12:
            tags.adMarkers.append(TestCues.oatcls(bytes: TestCues.corrupted(TestCues.spliceOut(event: event, seconds: seconds))))
            if random.chance(0.5) { tags.adMarkers.append(.cueOut(CueOut(duration: .seconds(Int64(seconds))))) }
        case 13:
            let section = random.chance(0.5)
                ? TestCues.timeSignal(TestCues.segmentation(0x34, event: event, seconds: seconds))
                : TestCues.timeSignal(TestCues.segmentation(0x35, event: event))
            tags.adMarkers.append(.scte35([Attribute("CUE", .quoted(TestCues.base64(section)))]))
        case 14:
            rangeNumber += 1
            let section = random.chance(0.6)
                ? TestCues.timeSignal(TestCues.segmentation(0x22, event: event, seconds: seconds))
                : TestCues.timeSignal(TestCues.segmentation(0x23, event: event))
            tags.dateRanges.append(
                DateRange(id: "cmd-\(rangeNumber)", startDate: date.adding(.milliseconds(Int64(random.int(0...4000)))), scte35Cmd: TestCues.bytes(section)))
        default:
            // Back to back: the source returns and leaves again at once.
            tags.adMarkers.append(.cueIn(value: nil))
            tags.adMarkers.append(.cueOut(CueOut(duration: .seconds(Int64(seconds)))))
        }
    }

    // MARK: Checks

    /// Feeds every tracker; returns the first broken property.
    mutating func run() -> String? {
        var tracker = BreakTracker(channel: "generated", schedule: schedule)
        var startedIDs: Set<String> = []
        var previousLast: UInt64?
        var previousBreaks: [String: AdBreak] = [:]

        // Determinism: A sees every version, B starts later; neither gets requests.
        var a = BreakTracker(channel: "generated", schedule: schedule)
        var b = BreakTracker(channel: "generated", schedule: schedule)
        let join = random.int(1...max(1, versions.count / 2))
        var syncedAt: UInt64?

        for (index, version) in versions.enumerated() {
            switch requests[index] {
            case .cueNow(let duration)?: _ = try? tracker.requestBreak(duration: duration)
            case .returnNow?: try? tracker.requestReturn()
            case nil: break
            }
            let events = tracker.advance(to: version, ruleSetVersion: 1)
            let first = version.effectiveMediaSequence
            let last = first + UInt64(version.segments.count - 1)
            let dates = version.programDateTimes()
            for event in events {
                switch event {
                case .started(let id, let msn, let source, _):
                    coverage.started[source, default: 0] += 1
                    guard startedIDs.insert(id).inserted else { return "break id \(id) used twice" }
                    guard msn >= first, msn <= last else { return "\(id) starts at \(msn), outside the version \(first)…\(last)" }
                    if let previousLast, msn <= previousLast { return "\(id) starts at \(msn), already published" }
                    guard tracker.log.adBreak(id: id)?.startDate == dates[Int(msn - first)] else {
                        return "\(id) does not start at the date of segment \(msn)"
                    }
                    if tracker.log.breaks.contains(where: { $0.end?.mediaSequence == msn }) { coverage.backToBack += 1 }
                case .ended(let id, let msn, _, let cause):
                    coverage.ended[cause, default: 0] += 1
                    if let previousLast, msn <= previousLast { return "\(id) ends at \(msn), already published" }
                case .invalidCue: coverage.invalidCues += 1
                case .ignoredCue: coverage.ignoredCues += 1
                case .rejected(let msn, let error): return "the log refused a change at \(msn): \(error)"
                default: break
                }
            }
            // The log's shape.
            let breaks = tracker.log.breaks
            for (position, adBreak) in breaks.enumerated() {
                if let end = adBreak.end, end.mediaSequence <= adBreak.startMediaSequence {
                    return "\(adBreak.id) has no slot: \(adBreak.startMediaSequence)…\(end.mediaSequence)"
                }
                guard position + 1 < breaks.count else { continue }
                guard let end = adBreak.end else { return "\(adBreak.id) is open but not the last break" }
                if end.mediaSequence > breaks[position + 1].startMediaSequence {
                    return "\(adBreak.id) ends at \(end.mediaSequence), after \(breaks[position + 1].id) starts"
                }
            }
            // What was published does not change.
            for adBreak in breaks {
                guard let before = previousBreaks[adBreak.id] else { continue }
                if before.end != nil, before != adBreak { return "\(adBreak.id) changed after it ended" }
                if before.startMediaSequence != adBreak.startMediaSequence { return "\(adBreak.id) moved" }
            }
            previousBreaks = Dictionary(uniqueKeysWithValues: breaks.map { ($0.id, $0) })
            previousLast = last
            // The stitcher can render the version with the log, before and after pruning.
            do {
                _ = try TrackerRendering.render(version, tracker.log)
                tracker.prune(before: first)
                _ = try TrackerRendering.render(version, tracker.log)
            } catch {
                return "rendering \(first)…\(last): \(error)"
            }

            // Determinism.
            let fromA = a.advance(to: version, ruleSetVersion: 1).filter(\.isDecision)
            guard index >= join else { continue }
            let fromB = b.advance(to: version, ruleSetVersion: 1).filter(\.isDecision)
            if let syncedAt {
                if fromA != fromB { return "after the trackers agreed at \(syncedAt): A \(fromA), B \(fromB)" }
                coverage.breaksAfterSync += fromA.filter(\.isStarted).count
            } else if a.open == b.open, a.pending == b.pending {
                syncedAt = last
                coverage.synced += 1
            }
        }
        if let syncedAt {
            let fromA = a.shapes.filter { $0.start > syncedAt }
            let fromB = b.shapes.filter { $0.start > syncedAt }
            if fromA != fromB { return "breaks after \(syncedAt) differ: A \(fromA), B \(fromB)" }
        }
        return nil
    }
}

extension BreakEvent {
    /// A start or an end: what the log records.
    var isDecision: Bool {
        switch self {
        case .started, .ended: return true
        default: return false
        }
    }
}
