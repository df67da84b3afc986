import HeadwaterHLS
import HeadwaterStitching
import Testing

@Suite("Break log")
struct BreakLogTests {
    /// Segments 100… of 6 s each, a DISCONTINUITY on the given ones.
    static func content(through last: UInt64, discontinuities: Set<UInt64> = [], sequence: UInt64? = nil) -> MediaPlaylist {
        var playlist = MediaPlaylist(targetDuration: 6, mediaSequence: 100)
        playlist.discontinuitySequence = sequence
        var date = GoldenChannel.firstDate
        for msn in UInt64(100)...last {
            var segment = MediaSegment(uri: "v/\(msn).ts", duration: .seconds(6))
            if msn == 100 || discontinuities.contains(msn) {
                segment.tags.discontinuity = msn != 100
                segment.tags.programDateTime = date
            }
            date = date.adding(.seconds(6))
            playlist.segments.append(segment)
        }
        return playlist
    }

    static func render(_ content: MediaPlaylist, _ log: BreakLog, session: ViewerSession = GoldenChannel.tvViewer)
        throws -> MediaPlaylist
    {
        try Stitcher.render(
            content: content, rendition: "video", breaks: log, session: session, ruleSets: [1: GoldenChannel.ruleSet])
    }

    @Test("a break adds one discontinuity per slot plus the return, minus the content's own")
    func numbering() throws {
        var log = BreakLog()
        try log.startBreak(
            id: "a", at: 102, plannedDuration: .seconds(12), ruleSetVersion: 1, content: Self.content(through: 102, sequence: 7))
        // The content has its own discontinuity inside the break (103) and on the return (105).
        let content = Self.content(through: 107, discontinuities: [103, 105], sequence: 7)
        try log.endBreak(id: "a", at: 105, content: content)
        let playlist = try Self.render(content, log)
        // Content 100, 101: DSN 7. Slots 102–104: 8, 9, 10. Return 105: 11. Then 106, 107: 11.
        #expect(playlist.discontinuitySequenceNumbers() == [7, 7, 8, 9, 10, 11, 11, 11])
        #expect(playlist.segments.map(\.tags.discontinuity) == [false, false, true, true, true, true, false, false])
        // The content's numbering after the break was 9 (two tags); the stitched one is 2 more.
        #expect(content.discontinuitySequenceNumbers().last == 9)
    }

    @Test("numbering after pruning old breaks is unchanged")
    func pruningKeepsNumbering() throws {
        var log = BreakLog()
        var content = Self.content(through: 101)
        try log.startBreak(id: "a", at: 101, plannedDuration: .seconds(6), ruleSetVersion: 1, content: content)
        content = Self.content(through: 103)
        try log.endBreak(id: "a", at: 103, content: content)
        try log.startBreak(id: "b", at: 103, plannedDuration: .seconds(6), ruleSetVersion: 1, content: content)
        content = Self.content(through: 110)
        try log.endBreak(id: "b", at: 105, content: content)
        let window = content.removingSegmentsFromHead(6)  // MSN 106…110
        let full = try Self.render(window, log)
        var pruned = log
        pruned.removeBreaks(endingBefore: 106)
        #expect(pruned.breaks.isEmpty)
        #expect(try Self.render(window, pruned) == full)
        #expect(full.discontinuitySequence == 5)  // slots 101–104 and the return at 105
    }

    @Test("the first segment after a break stays in the log until it leaves the window")
    func returnSegmentKeepsItsBreak() throws {
        var log = BreakLog()
        try log.startBreak(id: "a", at: 101, plannedDuration: .seconds(6), ruleSetVersion: 1, content: Self.content(through: 101))
        let content = Self.content(through: 106)
        try log.endBreak(id: "a", at: 103, content: content)
        log.removeBreaks(endingBefore: 103)
        #expect(log.breaks.count == 1)
        let window = content.removingSegmentsFromHead(3)  // head is the return, MSN 103
        let playlist = try Self.render(window, log)
        #expect(playlist.segments[0].tags.discontinuity)
        #expect(playlist.discontinuitySequence == 2)
    }

    @Test("a break announced ahead of its first segment takes its date from the last one")
    func announcedAhead() throws {
        var log = BreakLog()
        try log.startBreak(id: "a", at: 103, plannedDuration: .seconds(30), ruleSetVersion: 1, content: Self.content(through: 102))
        #expect(log.openBreak?.startDate == GoldenChannel.firstDate.adding(.seconds(18)))
    }

    @Test("a break announced on the open segment of low-latency content is dated by the tags before its first part")
    func announcedOnOpenSegment() throws {
        // The open segment 103 starts a discontinuity 2.5 s after 102 ends: its date is in the trailing
        // tags. A return and a back-to-back start announced there agree on that date.
        var content = Self.content(through: 102)
        let openDate = GoldenChannel.firstDate.adding(.milliseconds(20_500))
        content.trailingTags.discontinuity = true
        content.trailingTags.programDateTime = openDate
        var log = BreakLog()
        try log.startBreak(id: "a", at: 101, plannedDuration: .seconds(12), ruleSetVersion: 1, content: Self.content(through: 101))
        try log.endBreak(id: "a", at: 103, content: content)
        try log.startBreak(id: "b", at: 103, plannedDuration: .seconds(6), ruleSetVersion: 1, content: content)
        #expect(log.breaks[0].end?.date == openDate)
        #expect(log.openBreak?.startDate == openDate)
    }

    @Test("contract violations are errors, not crashes")
    func contract() throws {
        var log = BreakLog()
        let content = Self.content(through: 105)
        #expect(throws: BreakLogError.invalidID("a/b")) {
            try log.startBreak(id: "a/b", at: 101, plannedDuration: .seconds(6), ruleSetVersion: 1, content: content)
        }
        #expect(throws: BreakLogError.notInContent(msn: 120, first: 100, end: 106)) {
            try log.startBreak(id: "a", at: 120, plannedDuration: .seconds(6), ruleSetVersion: 1, content: content)
        }
        #expect(throws: BreakLogError.nonPositivePlannedDuration(id: "a")) {
            try log.startBreak(id: "a", at: 101, plannedDuration: .zero, ruleSetVersion: 1, content: content)
        }
        try log.startBreak(id: "a", at: 101, plannedDuration: .seconds(6), ruleSetVersion: 1, content: content)
        #expect(throws: BreakLogError.previousBreakOpen(id: "a")) {
            try log.startBreak(id: "b", at: 104, plannedDuration: .seconds(6), ruleSetVersion: 1, content: content)
        }
        #expect(throws: BreakLogError.endsBeforeFirstSlot(id: "a", start: 101, end: 101)) {
            try log.endBreak(id: "a", at: 101, content: content)
        }
        try log.endBreak(id: "a", at: 103, content: content)
        #expect(throws: BreakLogError.alreadyEnded("a")) { try log.endBreak(id: "a", at: 104, content: content) }
        #expect(throws: BreakLogError.duplicateID("a")) {
            try log.startBreak(id: "a", at: 104, plannedDuration: .seconds(6), ruleSetVersion: 1, content: content)
        }
        #expect(throws: BreakLogError.overlapsPreviousBreak(id: "b", start: 102, previousEnd: 103)) {
            try log.startBreak(id: "b", at: 102, plannedDuration: .seconds(6), ruleSetVersion: 1, content: content)
        }
    }

    @Test("a log that does not describe the content is refused, not rendered wrong")
    func mismatchedLog() throws {
        var log = BreakLog()
        try log.startBreak(id: "a", at: 102, plannedDuration: .seconds(12), ruleSetVersion: 1, content: Self.content(through: 102))
        try log.endBreak(id: "a", at: 104, content: Self.content(through: 104))
        // Another channel's content: a discontinuity the log never saw, before the break.
        let other = Self.content(through: 106, discontinuities: [101])
        #expect(throws: StitchingError.breakLogMismatch(msn: 102)) { try Self.render(other, log) }
    }
}
