import HeadwaterHLS
import HeadwaterSCTE35
import HeadwaterStitching
import Testing

/// The break tracker against each way a break is called: every cue syntax, a schedule, operator
/// requests; and against bad input. Content: 2 s segments from MSN 1000 (``TrackerChannel``),
/// windows of six.
@Suite("Break tracker")
struct BreakTrackerTests {
    // MARK: EXT-X-CUE-OUT / EXT-X-CUE-IN

    @Test("EXT-X-CUE-OUT with a duration, plain or DURATION=, runs for that duration", arguments: ["6.000", "6", "DURATION=6"])
    func cueOutWithDuration(value: String) {
        var channel = TrackerChannel(count: 14)
        channel.add(.cueOut(CueOut(value: value)), at: 1005)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1003)
        // 1005 starts at +10 s; +16 s (1008) is the first segment at or after 6 s later.
        #expect(tracker.shapes == [BreakShape(id: "cue-\(channel.millis(1005))", start: 1005, end: 1008, planned: .seconds(6))])
        #expect(
            events == [
                .started(id: "cue-\(channel.millis(1005))", msn: 1005, source: .cue, plannedDuration: .seconds(6)),
                .ended(id: "cue-\(channel.millis(1005))", msn: 1008, early: false, cause: .plannedDurationElapsed),
            ])
        #expect(tracker.log.breaks[0].startDate == channel.date(of: 1005))
    }

    @Test("a bare EXT-X-CUE-OUT lasts the default duration, or until the CUE-IN")
    func bareCueOut() {
        var channel = TrackerChannel(count: 16)
        channel.add(.cueOut(CueOut(value: nil)), at: 1005)
        var tracker = BreakTracker(channel: "news", defaultDuration: .seconds(8))
        channel.feed(&tracker, from: 1003)
        #expect(tracker.shapes.map(\.end) == [1009])
        #expect(tracker.shapes.map(\.planned) == [.seconds(8)])

        channel.add(.cueIn(value: nil), at: 1007)
        var early = BreakTracker(channel: "news", defaultDuration: .seconds(8))
        let events = channel.feed(&early, from: 1003)
        #expect(early.shapes.map(\.end) == [1007])
        #expect(events.contains(.ended(id: "cue-\(channel.millis(1005))", msn: 1007, early: true, cause: .cue)))
    }

    @Test("an early EXT-X-CUE-IN ends the break there")
    func earlyCueIn() {
        var channel = TrackerChannel(count: 14)
        channel.add(.cueOut(CueOut(duration: .seconds(30))), at: 1004)
        channel.add(.cueIn(value: nil), at: 1006)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1002)
        #expect(tracker.shapes.map { [$0.start, $0.end] } == [[1004, 1006]])
        #expect(tracker.log.breaks[0].end?.inCue == nil)
        #expect(events.filter { !$0.isStarted } == [.ended(id: "cue-\(channel.millis(1004))", msn: 1006, early: true, cause: .cue)])
    }

    @Test("a break in progress when the tracker starts (CUE-OUT-CONT on the window) stays content")
    func joinsMidBreak() {
        var channel = TrackerChannel(count: 14)
        channel.add(.cueOut(CueOut(duration: .seconds(12))), at: 1002)
        for msn in UInt64(1003)...1007 {
            channel.add(.cueOutContinuation(CueOutContinuation(elapsed: .seconds(Int64(msn - 1002) * 2), duration: .seconds(12))), at: msn)
            channel.add(TestCues.oatcls(TestCues.spliceOut(event: 4, seconds: 12)), at: msn)  // some packagers repeat the cue
        }
        channel.add(.cueIn(value: nil), at: 1008)
        var late = BreakTracker(channel: "news")
        let events = channel.feed(&late, from: 1008)  // first window: 1003…1008
        #expect(late.log.breaks.isEmpty)
        #expect(events == [.ignoredCue(msn: 1008, tag: "EXT-X-CUE-IN", reason: "no break is in progress")])

        var early = BreakTracker(channel: "news")
        #expect(channel.feed(&early, from: 1002).allSatisfy { !$0.isIgnoredCue })
        #expect(early.shapes.map { [$0.start, $0.end] } == [[1002, 1008]])
    }

    // MARK: SCTE-35 in vendor tags

    @Test("EXT-OATCLS-SCTE35 splice_insert out and in: the cues become SCTE35-OUT and SCTE35-IN")
    func oatclsSpliceInsert() {
        var channel = TrackerChannel(count: 14)
        let out = TestCues.spliceOut(event: 0x4800_008F, seconds: 20)
        let back = TestCues.spliceIn(event: 0x4800_008F)
        channel.add(TestCues.oatcls(out), at: 1004)
        channel.add(TestCues.oatcls(back), at: 1007)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1002)
        let id = "scte-\(0x4800_008F)-\(channel.millis(1004))"
        #expect(tracker.shapes == [BreakShape(id: id, start: 1004, end: 1007, planned: .seconds(20))])
        #expect(tracker.log.breaks[0].outCue == TestCues.bytes(out))
        #expect(tracker.log.breaks[0].end?.inCue == TestCues.bytes(back))
        #expect(events.last == .ended(id: id, msn: 1007, early: true, cause: .cue))
    }

    @Test("EXT-X-SCTE35 CUE= with a time_signal placement opportunity, base64 or hex", arguments: [false, true])
    func scte35Tag(hex: Bool) throws {
        var channel = TrackerChannel(count: 14)
        let out = TestCues.timeSignal(TestCues.segmentation(0x34, event: 9, seconds: 8))
        let back = TestCues.timeSignal(TestCues.segmentation(0x35, event: 9))
        func text(_ section: SpliceInfoSection) throws -> String { hex ? try section.hexString() : try section.base64String() }
        channel.add(.scte35([Attribute("CUE", .quoted(try text(out))), Attribute("CUE-OUT", .token("YES"))]), at: 1004)
        channel.add(.scte35([Attribute("CUE", .quoted(try text(back))), Attribute("CUE-IN", .token("YES"))]), at: 1006)
        var tracker = BreakTracker(channel: "news")
        channel.feed(&tracker, from: 1002)
        #expect(tracker.shapes == [BreakShape(id: "scte-9-\(channel.millis(1004))", start: 1004, end: 1006, planned: .seconds(8))])
        #expect(tracker.log.breaks[0].outCue == TestCues.bytes(out))
    }

    @Test("segmentation types: break, ads and placement opportunities start and end; others do not",
        arguments: [(0x22, true), (0x30, true), (0x32, true), (0x34, true), (0x36, true), (0x10, false), (0x38, false), (0x01, false)] as [(UInt8, Bool)])
    func segmentationTypes(type: UInt8, startsBreak: Bool) {
        var channel = TrackerChannel(count: 14)
        channel.add(TestCues.oatcls(TestCues.timeSignal(TestCues.segmentation(type, event: 3, seconds: 30))), at: 1004)
        channel.add(TestCues.oatcls(TestCues.timeSignal(TestCues.segmentation(type &+ 1, event: 3))), at: 1006)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1002)
        #expect(tracker.shapes.map { [$0.start, $0.end] } == (startsBreak ? [[1004, 1006]] : []))
        #expect(events.allSatisfy { !$0.isIgnoredCue })
    }

    @Test("ads nested in a placement opportunity do not end it; its own end does")
    func nestedSegmentation() {
        var channel = TrackerChannel(count: 16)
        channel.add(
            TestCues.oatcls(
                TestCues.timeSignal(TestCues.segmentation(0x34, event: 1, seconds: 30), TestCues.segmentation(0x30, event: 2, seconds: 6))),
            at: 1004)
        channel.add(
            TestCues.oatcls(TestCues.timeSignal(TestCues.segmentation(0x31, event: 2), TestCues.segmentation(0x30, event: 3, seconds: 6))),
            at: 1007)
        channel.add(
            TestCues.oatcls(TestCues.timeSignal(TestCues.segmentation(0x31, event: 3), TestCues.segmentation(0x35, event: 1))), at: 1010)
        var tracker = BreakTracker(channel: "news")
        channel.feed(&tracker, from: 1002)
        #expect(tracker.shapes == [BreakShape(id: "scte-1-\(channel.millis(1004))", start: 1004, end: 1010, planned: .seconds(30))])
    }

    // MARK: EXT-X-DATERANGE

    @Test("DATERANGE SCTE35-OUT, then the same ID with SCTE35-IN and DURATION")
    func dateRangeOutIn() {
        var channel = TrackerChannel(count: 14)
        let out = TestCues.bytes(TestCues.spliceOut(event: 0x100, seconds: 10))
        let back = TestCues.bytes(TestCues.spliceIn(event: 0x100))
        channel.add(DateRange(id: "splice-100", startDate: channel.date(of: 1004), plannedDuration: .seconds(10), scte35Out: out), at: 1004)
        channel.add(
            DateRange(id: "splice-100", startDate: channel.date(of: 1004), duration: .seconds(6), scte35In: back), at: 1007)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1002)
        let id = "scte-256-\(channel.millis(1004))"
        #expect(tracker.shapes == [BreakShape(id: id, start: 1004, end: 1007, planned: .seconds(10))])
        #expect(tracker.log.breaks[0].outCue == out)
        #expect(tracker.log.breaks[0].end?.inCue == back)
        #expect(events.last == .ended(id: id, msn: 1007, early: true, cause: .cue))
        // The origin carries the range onto the head when 1004 slides out: not a new break.
        #expect(events.filter(\.isIgnoredCue).isEmpty)
    }

    @Test("a cue cut from an MPEG-TS packet (section + 0xFF stuffing) starts the break; the break keeps the section alone")
    func stuffedCue() {
        var channel = TrackerChannel(count: 14)
        let out = TestCues.bytes(TestCues.spliceOut(event: 0x101, seconds: 10))
        let stuffed = out + [UInt8](repeating: 0xFF, count: 40)
        channel.add(
            DateRange(id: "splice-101", startDate: channel.date(of: 1004), plannedDuration: .seconds(10), scte35Out: stuffed), at: 1004)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1002)
        #expect(events.filter(\.isInvalidCue).isEmpty)
        #expect(tracker.log.breaks.count == 1)
        #expect(tracker.log.breaks.first?.outCue == out, "the stitched SCTE35-OUT carries no stuffing")
    }

    @Test("a range ID reused with another START-DATE is a new break; a repeat of the same range is not")
    func reusedRangeID() {
        var channel = TrackerChannel(count: 20)
        let out = TestCues.bytes(TestCues.spliceOut(event: 0x6FFF_FFF0, seconds: 4))
        channel.add(DateRange(id: "splice-6FFFFFF0", startDate: channel.date(of: 1003), plannedDuration: .seconds(4), scte35Out: out), at: 1003)
        // The packager writes the range again later (same START-DATE): the same, finished break.
        channel.add(DateRange(id: "splice-6FFFFFF0", startDate: channel.date(of: 1003), plannedDuration: .seconds(4), scte35Out: out), at: 1008)
        // The encoder reuses the event id, and so the ID, for a later break.
        channel.add(DateRange(id: "splice-6FFFFFF0", startDate: channel.date(of: 1012), plannedDuration: .seconds(4), scte35Out: out), at: 1012)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1002)
        #expect(tracker.shapes.map { [$0.start, $0.end] } == [[1003, 1005], [1012, 1014]])
        #expect(events.filter(\.isIgnoredCue).isEmpty)
    }

    @Test("a DATERANGE announced ahead starts at the first segment at or after START-DATE",
        arguments: [(0, 1005), (700, 1006), (1_950, 1006), (-80, 1005)] as [(Int64, UInt64)])
    func dateRangeAhead(offsetMilliseconds: Int64, expected: UInt64) {
        var channel = TrackerChannel(count: 14)
        let start = channel.date(of: 1005).adding(.milliseconds(offsetMilliseconds))
        channel.add(
            DateRange(id: "ahead", startDate: start, plannedDuration: .seconds(4), scte35Out: TestCues.bytes(TestCues.spliceOut(event: 1, seconds: 4))),
            at: 1002)
        var tracker = BreakTracker(channel: "news")
        channel.feed(&tracker, from: 1001)
        #expect(tracker.shapes.map(\.start) == [expected])
        #expect(tracker.log.breaks.first?.startDate == channel.date(of: expected))
    }

    @Test("a DATERANGE written after its splice: inside the previous segment starts here, earlier is ignored",
        arguments: [(500, true), (-500, false), (-2_000, false)] as [(Int64, Bool)])
    func dateRangeLate(offsetMilliseconds: Int64, starts: Bool) {
        var channel = TrackerChannel(count: 14)
        // Written on 1006; the splice date is relative to 1005's start.
        let start = channel.date(of: 1005).adding(.milliseconds(offsetMilliseconds))
        channel.add(DateRange(id: "late", startDate: start, plannedDuration: .seconds(4), scte35Out: TestCues.bytes(TestCues.spliceOut(event: 1, seconds: 4))), at: 1006)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1003)
        #expect(tracker.shapes.map(\.start) == (starts ? [1006] : []))
        #expect(events.contains(where: \.isIgnoredCue) == !starts)
    }

    @Test("a DATERANGE that states its end (DURATION) ends the break there")
    func dateRangeWithDuration() {
        var channel = TrackerChannel(count: 14)
        channel.add(
            DateRange(
                id: "known", startDate: channel.date(of: 1004), duration: .seconds(5), plannedDuration: .seconds(30),
                scte35Out: TestCues.bytes(TestCues.spliceOut(event: 2, seconds: 30))),
            at: 1004)
        var tracker = BreakTracker(channel: "news")
        channel.feed(&tracker, from: 1002)
        // 1004 + 5 s falls inside 1006: the break ends at 1007.
        #expect(tracker.shapes.map { [$0.start, $0.end] } == [[1004, 1007]])
    }

    @Test("SCTE35-CMD: a time_signal Break Start starts, a Break End ends")
    func dateRangeCommand() {
        var channel = TrackerChannel(count: 14)
        channel.add(
            DateRange(
                id: "cmd-1", startDate: channel.date(of: 1004),
                scte35Cmd: TestCues.bytes(TestCues.timeSignal(TestCues.segmentation(0x22, event: 12, seconds: 20)))),
            at: 1004)
        channel.add(
            DateRange(id: "cmd-2", startDate: channel.date(of: 1008), scte35Cmd: TestCues.bytes(TestCues.timeSignal(TestCues.segmentation(0x23, event: 12)))),
            at: 1008)
        channel.add(DateRange(id: "null", startDate: channel.date(of: 1005), scte35Cmd: TestCues.bytes(.spliceNull())), at: 1005)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1002)
        #expect(tracker.shapes == [BreakShape(id: "scte-12-\(channel.millis(1004))", start: 1004, end: 1008, planned: .seconds(20))])
        #expect(events.allSatisfy { !$0.isIgnoredCue })
    }

    @Test("date ranges without SCTE-35 (programmes) are not ad signals")
    func programDateRange() {
        var channel = TrackerChannel(count: 10)
        channel.add(DateRange(id: "show", class: "com.example.program", startDate: channel.date(of: 1004), duration: .seconds(4)), at: 1004)
        var tracker = BreakTracker(channel: "news")
        #expect(channel.feed(&tracker, from: 1002).isEmpty)
        #expect(tracker.log.breaks.isEmpty)
    }

    // MARK: Several signals, invalid cues, cancels

    @Test("CUE-OUT, OATCLS and DATERANGE on one segment are one break, ended once")
    func oneBreakManySignals() {
        var channel = TrackerChannel(count: 14)
        let out = TestCues.spliceOut(event: 5, seconds: 10)
        let back = TestCues.spliceIn(event: 5)
        channel.add(TestCues.oatcls(out), at: 1004)
        channel.add(.cueOut(CueOut(duration: .seconds(10))), at: 1004)
        channel.add(DateRange(id: "splice-5", startDate: channel.date(of: 1004), plannedDuration: .seconds(10), scte35Out: TestCues.bytes(out)), at: 1004)
        channel.add(TestCues.oatcls(back), at: 1007)
        channel.add(.cueIn(value: nil), at: 1007)
        channel.add(DateRange(id: "splice-5", startDate: channel.date(of: 1004), duration: .seconds(6), scte35In: TestCues.bytes(back)), at: 1007)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1002)
        let id = "scte-5-\(channel.millis(1004))"
        #expect(
            events == [
                .started(id: id, msn: 1004, source: .cue, plannedDuration: .seconds(10)),
                .ended(id: id, msn: 1007, early: true, cause: .cue),
            ])
        #expect(tracker.log.breaks[0].outCue == TestCues.bytes(out))
    }

    @Test("a cue with a bad CRC is reported and no break is started from its segment", arguments: [false, true])
    func invalidCue(withCueOut: Bool) {
        var channel = TrackerChannel(count: 14)
        channel.add(TestCues.oatcls(bytes: TestCues.corrupted(TestCues.spliceOut(event: 6, seconds: 10))), at: 1004)
        if withCueOut { channel.add(.cueOut(CueOut(duration: .seconds(10))), at: 1004) }
        channel.add(
            DateRange(id: "bad", startDate: channel.date(of: 1009), scte35Out: TestCues.corrupted(TestCues.spliceOut(event: 7, seconds: 4))),
            at: 1009)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1002)
        #expect(tracker.log.breaks.isEmpty)
        let invalid = events.filter(\.isInvalidCue)
        #expect(invalid.count == 2)
        guard case .invalidCue(let msn, let tag, let reason, let label)? = invalid.first else { return }
        #expect(msn == 1004 && tag == "EXT-OATCLS-SCTE35" && reason.contains("CRC") && label == "crc_mismatch")
        #expect(events.contains(where: \.isIgnoredCue) == withCueOut)
    }

    @Test("undecodable text (not base64, not hex) is an invalid cue")
    func undecodableCue() {
        var channel = TrackerChannel(count: 10)
        channel.add(.oatclsSCTE35(base64: "not*base64"), at: 1004)
        channel.add(.scte35([Attribute("CUE", .quoted("/DA"))]), at: 1005)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1002)
        #expect(events.filter(\.isInvalidCue).count == 2)
        #expect(tracker.log.breaks.isEmpty)
    }

    @Test("a cancel drops the announced start with its event id", arguments: [false, true])
    func cancel(segmentation: Bool) {
        var channel = TrackerChannel(count: 14)
        let out = segmentation ? TestCues.timeSignal(TestCues.segmentation(0x34, event: 7, seconds: 6)) : TestCues.spliceOut(event: 7, seconds: 6)
        channel.add(DateRange(id: "ahead", startDate: channel.date(of: 1006), scte35Out: TestCues.bytes(out)), at: 1003)
        let cancel = segmentation ? TestCues.segmentationCancel(event: 7) : SpliceInfoSection.spliceInsertCancel(eventID: 7)
        channel.add(TestCues.oatcls(cancel), at: 1004)
        // A cancel with nothing waiting is only reported.
        channel.add(TestCues.oatcls(cancel), at: 1008)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1002)
        #expect(tracker.log.breaks.isEmpty)
        let reasons = events.compactMap { event -> String? in
            if case .ignoredCue(_, _, let reason) = event { return reason }
            return nil
        }
        #expect(reasons.count == 2)
        #expect(reasons.first?.contains("dropped") == true)
        #expect(reasons.last?.contains("not waiting") == true)

        // Without the cancel, the break starts.
        channel.tags[1004] = nil
        var uncancelled = BreakTracker(channel: "news")
        channel.feed(&uncancelled, from: 1002, through: 1007)
        #expect(uncancelled.shapes.map(\.start) == [1006])
    }

    @Test("a start while a break is open and an end with none are ignored and reported")
    func ignoredSignals() {
        var channel = TrackerChannel(count: 14)
        channel.add(.cueOut(CueOut(duration: .seconds(20))), at: 1003)
        channel.add(.cueOut(CueOut(duration: .seconds(10))), at: 1005)
        channel.add(.cueIn(value: nil), at: 1006)
        channel.add(.cueIn(value: nil), at: 1008)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1002)
        #expect(tracker.shapes.map { [$0.start, $0.end] } == [[1003, 1006]])
        let id = "cue-\(channel.millis(1003))"
        #expect(
            events.filter(\.isIgnoredCue) == [
                .ignoredCue(msn: 1005, tag: "EXT-X-CUE-OUT", reason: "break \(id) is in progress"),
                .ignoredCue(msn: 1008, tag: "EXT-X-CUE-IN", reason: "no break is in progress"),
            ])
    }

    @Test("back to back: the break that ends at a segment and the one that starts there")
    func backToBack() throws {
        var channel = TrackerChannel(count: 16)
        channel.add(.cueOut(CueOut(duration: .seconds(6))), at: 1003)  // ends by duration at 1006
        channel.add(.cueOut(CueOut(duration: .seconds(30))), at: 1006)
        channel.add(.cueIn(value: nil), at: 1009)
        channel.add(.cueOut(CueOut(duration: .seconds(4))), at: 1009)  // CUE-IN and CUE-OUT together
        var tracker = BreakTracker(channel: "news")
        for last in UInt64(1002)...channel.lastMSN {
            let version = channel.version(through: last)
            _ = tracker.advance(to: version, ruleSetVersion: 1)
            _ = try TrackerRendering.render(version, tracker.log)
        }
        #expect(tracker.shapes.map { [$0.start, $0.end] } == [[1003, 1006], [1006, 1009], [1009, 1011]])
    }

    // MARK: Schedule

    @Test("a periodic schedule is aligned to the epoch: breaks at the first segment at or after each time")
    func periodicSchedule() throws {
        var channel = TrackerChannel(count: 70)
        channel.window = 8
        // 12:00:00 is a multiple of 60 s since the epoch: breaks at 12:00:10 (1005), 12:01:10 (1035), 12:02:10 (1065).
        let aligned = try BreakSchedule(every: .seconds(60), duration: .seconds(6), offset: .seconds(10))
        var tracker = BreakTracker(channel: "news", schedule: aligned)
        let events = channel.feed(&tracker, from: 1002)
        #expect(
            tracker.shapes == [
                BreakShape(id: "sched-\(channel.millis(1005))", start: 1005, end: 1008, planned: .seconds(6)),
                BreakShape(id: "sched-\(channel.millis(1035))", start: 1035, end: 1038, planned: .seconds(6)),
                BreakShape(id: "sched-\(channel.millis(1065))", start: 1065, end: 1068, planned: .seconds(6)),
            ])
        #expect(events.allSatisfy { !$0.isSkippedSchedule })

        // A node that starts later agrees on the later breaks, ids included.
        var later = BreakTracker(channel: "news", schedule: aligned)
        channel.feed(&later, from: 1020)
        #expect(later.shapes == Array(tracker.shapes.dropFirst()))
    }

    @Test("a scheduled break that began before the first segment seen is skipped, not started late")
    func scheduleLateAtStartUp() throws {
        let channel = TrackerChannel(count: 20)
        // A 21 s break at 12:00:00 (1000); the tracker's first window starts 20 s later (1010).
        let schedule = try BreakSchedule(every: .seconds(3600), duration: .seconds(21))
        var tracker = BreakTracker(channel: "news", schedule: schedule)
        let events = channel.feed(&tracker, from: 1015)
        #expect(tracker.log.breaks.isEmpty)
        #expect(events == [.skippedScheduledBreak(msn: 1010, scheduled: channel.date(of: 1000), reason: "it began before the first segment seen")])

        var onTime = BreakTracker(channel: "news", schedule: schedule)
        channel.feed(&onTime, from: 1000)
        #expect(onTime.shapes.map { [$0.start, $0.end] } == [[1000, 1011]])
    }

    @Test("a scheduled time inside a gap in the content is skipped if the break would be over")
    func scheduleInGap() throws {
        var channel = TrackerChannel(count: 20)
        channel.dateJumps[1010] = .seconds(60)  // 1009 ends at 12:00:20, 1010 starts at 12:01:20
        let daily = try BreakSchedule(daily: [
            .init(secondsSinceMidnight: 12 * 3600 + 30, duration: .seconds(10)),  // 12:00:30: 50 s late
            .init(secondsSinceMidnight: 12 * 3600 + 40, duration: .seconds(60)),  // 12:00:40: 40 s late of 60
        ])
        var tracker = BreakTracker(channel: "news", schedule: daily)
        let events = channel.feed(&tracker, from: 1003)
        // The latest time in the gap is the one considered.
        #expect(tracker.shapes.map(\.id) == ["sched-\(channel.millis(1010))"])
        #expect(events.filter(\.isSkippedSchedule).isEmpty)

        let short = try BreakSchedule(daily: [.init(secondsSinceMidnight: 12 * 3600 + 30, duration: .seconds(10))])
        var skipping = BreakTracker(channel: "news", schedule: short)
        let skipped = channel.feed(&skipping, from: 1003)
        #expect(skipping.log.breaks.isEmpty)
        #expect(skipped.filter(\.isSkippedSchedule).count == 1)
    }

    @Test("fixed times of day, UTC")
    func dailySchedule() throws {
        let channel = TrackerChannel(count: 24)
        let schedule = try BreakSchedule(daily: [
            .init(secondsSinceMidnight: 12 * 3600 + 31, duration: .seconds(6)),  // inside 1015: starts at 1016
            .init(secondsSinceMidnight: 11 * 3600, duration: .seconds(6)),
        ])
        var tracker = BreakTracker(channel: "news", schedule: schedule)
        channel.feed(&tracker, from: 1003)
        #expect(tracker.shapes == [BreakShape(id: "sched-\(channel.millis(1016))", start: 1016, end: 1019, planned: .seconds(6))])
    }

    @Test("a scheduled time inside an open break is skipped")
    func scheduleInsideBreak() throws {
        var channel = TrackerChannel(count: 20)
        channel.add(.cueOut(CueOut(duration: .seconds(20))), at: 1002)
        let schedule = try BreakSchedule(every: .seconds(3600), duration: .seconds(6), offset: .seconds(10))
        var tracker = BreakTracker(channel: "news", schedule: schedule)
        let events = channel.feed(&tracker, from: 1001)
        #expect(tracker.shapes.map(\.start) == [1002])
        #expect(events.filter(\.isSkippedSchedule).count == 1)
    }

    @Test("schedules reject nonsense")
    func scheduleValidation() {
        #expect(throws: BreakScheduleError.nonPositiveInterval(.zero)) { try BreakSchedule(every: .zero, duration: .seconds(1)) }
        #expect(throws: BreakScheduleError.nonPositiveDuration(.zero)) { try BreakSchedule(every: .seconds(60), duration: .zero) }
        #expect(throws: BreakScheduleError.timeOfDayOutOfRange(86_400)) {
            try BreakSchedule(daily: [.init(secondsSinceMidnight: 86_400, duration: .seconds(1))])
        }
    }

    @Test("periodic occurrences with negative and large offsets")
    func periodicOccurrences() throws {
        let schedule = try BreakSchedule(every: .seconds(60), duration: .seconds(5), offset: .seconds(-10))
        let at = { (ms: Int64) in ProgramDateTime(millisecondsSinceEpoch: ms) }
        #expect(schedule.latestOccurrence(after: at(0), through: at(60_000))?.time == at(50_000))
        #expect(schedule.latestOccurrence(after: at(50_000), through: at(109_999)) == nil)
        #expect(schedule.latestOccurrence(after: at(-100_000), through: at(-60_000))?.time == at(-70_000))
        let large = try BreakSchedule(every: .seconds(60), duration: .seconds(5), offset: .seconds(3_610))
        #expect(large.latestOccurrence(after: at(0), through: at(60_000))?.time == at(10_000))
    }

    // MARK: Operator requests

    @Test("cue now starts at the next new segment with the id it returned")
    func cueNow() throws {
        let channel = TrackerChannel(count: 14)
        var tracker = BreakTracker(channel: "news")
        #expect(throws: BreakRequestError.noContentYet) { try tracker.requestBreak(duration: .seconds(6)) }
        channel.feed(&tracker, from: 1002, through: 1005)
        #expect(throws: BreakRequestError.nonPositiveDuration(.zero)) { try tracker.requestBreak(duration: .zero) }
        let id = try tracker.requestBreak(duration: .seconds(6))
        #expect(id == "now-\(channel.millis(1006))")
        #expect(tracker.requestedBreakID == id)
        #expect(throws: BreakRequestError.requestPending(id: id)) { try tracker.requestBreak(duration: .seconds(6)) }
        let events = channel.feed(&tracker, from: 1006)
        #expect(tracker.shapes == [BreakShape(id: id, start: 1006, end: 1009, planned: .seconds(6))])
        #expect(events.first == .started(id: id, msn: 1006, source: .request, plannedDuration: .seconds(6)))
    }

    @Test("cue now is refused during a break; return now ends it at the next segment")
    func returnNow() throws {
        var channel = TrackerChannel(count: 14)
        channel.add(.cueOut(CueOut(duration: .seconds(30))), at: 1004)
        var tracker = BreakTracker(channel: "news")
        #expect(throws: BreakRequestError.noBreakOpen) { try tracker.requestReturn() }
        channel.feed(&tracker, from: 1002, through: 1005)
        let id = "cue-\(channel.millis(1004))"
        #expect(throws: BreakRequestError.breakOpen(id: id)) { try tracker.requestBreak(duration: .seconds(6)) }
        try tracker.requestReturn()
        #expect(throws: BreakRequestError.returnPending(id: id)) { try tracker.requestReturn() }
        let events = channel.feed(&tracker, from: 1006)
        #expect(events == [.ended(id: id, msn: 1006, early: true, cause: .request)])
        #expect(!tracker.isReturnRequested)
    }

    @Test("a return requested at the break's first segment keeps that slot")
    func returnAtFirstSlot() throws {
        var channel = TrackerChannel(count: 10)
        channel.add(.cueOut(CueOut(duration: .seconds(30))), at: 1005)
        var tracker = BreakTracker(channel: "news")
        channel.feed(&tracker, from: 1002, through: 1005)
        try tracker.requestReturn()
        channel.feed(&tracker, from: 1006)
        #expect(tracker.shapes.map { [$0.start, $0.end] } == [[1005, 1006]])
    }

    @Test("when the source starts a break at the requested segment, the source wins")
    func requestLosesToSource() throws {
        var channel = TrackerChannel(count: 12)
        channel.add(.cueOut(CueOut(duration: .seconds(4))), at: 1006)
        var tracker = BreakTracker(channel: "news")
        channel.feed(&tracker, from: 1002, through: 1005)
        let id = try tracker.requestBreak(duration: .seconds(10))
        let events = channel.feed(&tracker, from: 1006)
        #expect(tracker.shapes.map(\.id) == ["cue-\(channel.millis(1006))"])
        #expect(events.contains { if case .droppedRequest(id, 1006, _) = $0 { return true } else { return false } })
    }

    // MARK: Determinism and robustness

    @Test("two trackers that start at different windows record the same breaks from the moment both see them")
    func determinism() throws {
        var channel = TrackerChannel(count: 60)
        channel.add(.cueOut(CueOut(duration: .seconds(10))), at: 1003)  // 1003…1008, open when B starts
        channel.add(.cueOut(CueOut(duration: .seconds(4))), at: 1006)  // ignored by A (a break is open), started by B
        channel.add(
            DateRange(
                id: "ahead", startDate: channel.date(of: 1014), plannedDuration: .seconds(6),
                scte35Out: TestCues.bytes(TestCues.spliceOut(event: 8, seconds: 6))),
            at: 1002)  // announced before B's first window: carried onto its head
        channel.add(TestCues.oatcls(TestCues.timeSignal(TestCues.segmentation(0x34, event: 2, seconds: 8))), at: 1024)
        channel.add(.cueOut(CueOut(value: nil)), at: 1033)
        channel.add(.cueIn(value: nil), at: 1036)
        let schedule = try BreakSchedule(every: .seconds(3600), duration: .seconds(6), offset: .seconds(90))  // 12:01:30 = 1045
        var a = BreakTracker(channel: "news", schedule: schedule)
        var b = BreakTracker(channel: "news", schedule: schedule)
        channel.feed(&a, from: 1002)
        channel.feed(&b, from: 1009)  // first window 1004…1009
        #expect(a.shapes.map(\.start) == [1003, 1014, 1024, 1033, 1045])
        // B saw 1006's CUE-OUT as a start (it could not know of A's break): a break A does not have.
        #expect(b.shapes.map(\.start) == [1006, 1014, 1024, 1033, 1045])
        #expect(a.shapes.filter { $0.start >= 1009 } == b.shapes.filter { $0.start >= 1009 })
    }

    @Test("content without dates: starts are rejected and reported, nothing crashes")
    func withoutDates() {
        var channel = TrackerChannel(count: 10)
        channel.withoutDates = true
        channel.add(.cueOut(CueOut(duration: .seconds(4))), at: 1004)
        var tracker = BreakTracker(channel: "news")
        let events = channel.feed(&tracker, from: 1002)
        #expect(tracker.log.breaks.isEmpty)
        #expect(events == [.rejected(msn: 1004, error: .contentWithoutDates(msn: 1004))])
        #expect(throws: BreakRequestError.noContentYet) { try tracker.requestBreak(duration: .seconds(4)) }
    }

    @Test("a restart (MSN and dates far ahead) ends the open break and carries on; MSN going back adds nothing")
    func restart() throws {
        var channel = TrackerChannel(count: 12)
        channel.add(.cueOut(CueOut(duration: .seconds(60))), at: 1008)
        var tracker = BreakTracker(channel: "news")
        channel.feed(&tracker, from: 1003, through: 1010)
        // The source restarts an hour later at MSN 50000, with a cue on its third segment.
        var restarted = MediaPlaylist(targetDuration: 3, mediaSequence: 50_000)
        restarted.discontinuitySequence = 3
        for number in 0..<6 {
            var segment = MediaSegment(uri: "video/r\(number).ts", duration: .seconds(2))
            segment.tags.programDateTime = channel.date(of: 1010).adding(.seconds(3600 + 2 * Int64(number)))
            if number == 2 { segment.tags.adMarkers = [.cueOut(CueOut(duration: .seconds(4)))] }
            restarted.segments.append(segment)
        }
        let events = tracker.advance(to: restarted, ruleSetVersion: 1)
        #expect(tracker.shapes.map { [$0.start, $0.end] } == [[1008, 50_000], [50_002, 50_004]])
        #expect(events.first == .ended(id: "cue-\(channel.millis(1008))", msn: 50_000, early: false, cause: .plannedDurationElapsed))
        _ = try TrackerRendering.render(restarted, tracker.log)
        // An older version again: nothing new.
        #expect(tracker.advance(to: channel.version(through: 1011), ruleSetVersion: 1).isEmpty)
    }

    @Test("prune forgets ended breaks before the window; the tracker carries on")
    func prune() {
        var channel = TrackerChannel(count: 30)
        channel.add(.cueOut(CueOut(duration: .seconds(4))), at: 1003)
        channel.add(.cueOut(CueOut(duration: .seconds(4))), at: 1020)
        var tracker = BreakTracker(channel: "news")
        channel.feed(&tracker, from: 1002, through: 1012)
        tracker.prune(before: 1007)
        #expect(tracker.log.breaks.isEmpty)
        channel.feed(&tracker, from: 1013)
        #expect(tracker.shapes.map(\.start) == [1020])
    }

    @Test("event descriptions are one line")
    func descriptions() {
        let events: [BreakEvent] = [
            .started(id: "cue-1", msn: 5, source: .schedule, plannedDuration: .seconds(30)),
            .ended(id: "cue-1", msn: 9, early: true, cause: .cue),
            .invalidCue(msn: 5, tag: "EXT-OATCLS-SCTE35", reason: "CRC_32 mismatch", label: "crc_mismatch"),
            .ignoredCue(msn: 5, tag: "EXT-X-CUE-IN", reason: "no break is in progress"),
            .skippedScheduledBreak(msn: 5, scheduled: TrackerChannel.firstDate, reason: "late"),
            .droppedRequest(id: "now-1", msn: 5, reason: "the source started a break"),
            .rejected(msn: 5, error: .contentWithoutDates(msn: 5)),
        ]
        for event in events {
            #expect(!event.description.contains("\n"))
            #expect(event.description.contains("5") || event.description.contains("9"))
        }
        #expect(events[0].description == "break cue-1 started at MSN 5 (schedule, planned 30.000 s)")
        #expect(events[1].description == "break cue-1 ended at MSN 9 (cue, early)")
    }
}

/// Renders a stitched playlist of the tracker's log with a one-creative rule set.
enum TrackerRendering {
    static let ruleSet: AdRuleSet = {
        let renditions = ["video": CreativeRendition(segments: [CreativeSegment(uri: "/ads/a/0.ts", duration: .seconds(2))])]
        let slate = Creative(id: "slate", renditions: ["video": CreativeRendition(segments: [CreativeSegment(uri: "/slate/0.ts", duration: .seconds(1))])])
        return AdRuleSet(
            version: 1, creatives: [Creative(id: "ad-a", renditions: renditions)], slate: slate,
            pods: [Pod(id: "pod", ads: [.init(id: "a", creativeID: "ad-a")])], rules: [AdRule(id: "all", podIDs: ["pod"])])
    }()

    static let session = ViewerSession(id: "viewer", startDate: ProgramDateTime(millisecondsSinceEpoch: 0))

    static func render(_ content: MediaPlaylist, _ log: BreakLog) throws -> MediaPlaylist {
        try Stitcher.render(content: content, rendition: "video", breaks: log, session: session, ruleSets: [1: ruleSet])
    }
}
