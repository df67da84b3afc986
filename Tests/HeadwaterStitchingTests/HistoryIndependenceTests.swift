import HeadwaterHLS
import HeadwaterStitching
import HeadwaterTesting
import Testing

/// Render cost and output depend on the window, not on the channel's history: a log that kept every
/// break of a long run renders exactly what a pruned one does, and the stitcher only looks at the
/// breaks that touch the window (one binary search to find them).
@Suite("Stitching does not depend on history")
struct HistoryIndependenceTests {
    @Test("2,000 past breaks: the same bytes as a pruned log; a second node renders the same bytes")
    func longHistory() throws {
        var random = SeededRandom(seed: 42)
        var content = MediaPlaylist(targetDuration: 6, mediaSequence: 1)
        var log = BreakLog()
        var date = GoldenChannel.firstDate
        var breakCount = 0
        var open: (id: String, end: UInt64)?
        for msn in UInt64(1)...12_000 {
            var segment = MediaSegment(uri: "video/\(msn).ts", duration: .milliseconds(Int64(random.int(4000...6000))))
            if content.segments.isEmpty { segment.tags.programDateTime = date }
            date = date.adding(segment.duration)
            content.segments.append(segment)
            if let current = open, current.end == msn {
                try log.endBreak(id: current.id, at: msn, content: content)
                open = nil
            }
            if open == nil, msn % 6 == 0 {
                breakCount += 1
                try log.startBreak(
                    id: "b\(breakCount)", at: msn, plannedDuration: .seconds(12), ruleSetVersion: 1, content: content)
                open = ("b\(breakCount)", msn + UInt64(random.int(1...3)))
            }
            if content.segments.count > 10 { content = content.removingSegmentsFromHead(1) }
        }
        #expect(log.breaks.count == 2000)
        let session = ViewerSession(id: "v", startDate: GoldenChannel.firstDate, targeting: ["device": "tv"])
        let full = try Stitcher.render(
            content: content, rendition: "video", breaks: log, session: session, ruleSets: [1: GoldenChannel.ruleSet])
        var pruned = log
        pruned.removeBreaks(endingBefore: content.effectiveMediaSequence)
        #expect(pruned.breaks.count <= 3)
        let again = try Stitcher.render(
            content: content, rendition: "video", breaks: pruned, session: session, ruleSets: [1: GoldenChannel.ruleSet])
        #expect(PlaylistSerializer.string(again) == PlaylistSerializer.string(full))
        #expect(full.discontinuitySequence! > 5000)  // 2,000 breaks of 1–3 slots, each + 1 return
    }
}
