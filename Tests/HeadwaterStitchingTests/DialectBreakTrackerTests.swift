import HeadwaterHLS
import HeadwaterSCTE35
import HeadwaterStitching
import Testing

/// The break tracker fed playlists as an encoder wrote them, read by the tolerant parse: each
/// ad-marker dialect gives the break its canonical form gives (id, start, planned duration, end).
/// Content: 2 s segments from MSN 1000, a break from 1004 to 1009 (10 s planned), windows of six.
@Suite("Break tracker: ad-marker dialects")
struct DialectBreakTrackerTests {
    static let out = try! SpliceInfoSection.spliceInsert(eventID: 9, outOfNetwork: true, ptsTime: 900_000, duration: 900_000)
        .base64String()
    static let back = try! SpliceInfoSection.spliceInsert(eventID: 9, outOfNetwork: false, ptsTime: 1_800_000).base64String()

    /// (dialect, start tag, continuation tag, end tag, the canonical dialect it must match)
    static let dialects: [(name: String, start: String, continuation: String, end: String, canonical: String)] = [
        ("bare CUE-OUT-CONT", "#EXT-X-CUE-OUT:10.000", "#EXT-X-CUE-OUT-CONT", "#EXT-X-CUE-IN", "cue-out"),
        ("CUE-OUT:10,SpliceType=LiveDAI", "#EXT-X-CUE-OUT:10,SpliceType=LiveDAI", "", "#EXT-X-CUE-IN", "cue-out"),
        ("CUE-OUT:DURATION=10,BREAKID / CUE-IN:BREAKID", "#EXT-X-CUE-OUT:DURATION=10,BREAKID=7", "", "#EXT-X-CUE-IN:BREAKID=7", "cue-out"),
        (
            "Adobe EXT-X-CUE", "#EXT-X-CUE:TYPE=SpliceOut,ID=7,TIME=8.0,DURATION=10.0",
            "#EXT-X-CUE-CONT:ID=7,AVAIL-DUR-ELAPSED=2.0", "#EXT-X-CUE:TYPE=SpliceIn,ID=7", "cue-out"
        ),
        ("EXT-X-SCTE35 CUE-OUT=YES without a cue", "#EXT-X-SCTE35:CUE-OUT=YES,DURATION=10", "#EXT-X-SCTE35:CUE-OUT=CONT", "#EXT-X-SCTE35:CUE-IN=YES", "cue-out"),
        ("EXT-X-SPLICEPOINT-SCTE35", "#EXT-X-SPLICEPOINT-SCTE35:\(out)", "", "#EXT-X-SPLICEPOINT-SCTE35:\(back)", "oatcls"),
    ]

    static let canonical: [String: (start: String, continuation: String, end: String)] = [
        "cue-out": ("#EXT-X-CUE-OUT:10.000", "#EXT-X-CUE-OUT-CONT:2.000/10", "#EXT-X-CUE-IN"),
        "oatcls": ("#EXT-OATCLS-SCTE35:\(out)", "", "#EXT-OATCLS-SCTE35:\(back)"),
    ]

    /// The encoder's playlist through `last`, parsed as ingest parses it.
    static func playlist(through last: UInt64, start: String, continuation: String, end: String) throws -> MediaPlaylist {
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:1000\n"
        text += "#EXT-X-PROGRAM-DATE-TIME:2026-03-01T12:00:00.000Z\n"
        for msn in UInt64(1000)...last {
            let tag = msn == 1004 ? start : msn == 1009 ? end : (1005..<1009).contains(msn) ? continuation : ""
            if !tag.isEmpty { text += tag + "\n" }
            text += "#EXTINF:2.000,\nvideo/\(msn).ts\n"
        }
        guard case .media(let media) = try PlaylistParser().parseTolerating(Array(text.utf8)).playlist else {
            throw PlaylistParseError(.missingTargetDuration, line: 1, "not a media playlist")
        }
        return media
    }

    static func breaks(start: String, continuation: String, end: String) throws -> [String] {
        var tracker = BreakTracker(channel: "news")
        for last in UInt64(1002)...1014 {
            let whole = try playlist(through: last, start: start, continuation: continuation, end: end)
            _ = tracker.advance(to: whole.removingSegmentsFromHead(max(0, whole.segments.count - 6)), ruleSetVersion: 1)
        }
        return tracker.log.breaks.map { "\($0.id) \($0.startMediaSequence) \($0.plannedDuration) \($0.end?.mediaSequence ?? 0)" }
    }

    @Test("each dialect gives the break its canonical form gives", arguments: dialects.map(\.name))
    func sameBreak(_ name: String) throws {
        let dialect = try #require(Self.dialects.first { $0.name == name })
        let canonical = try #require(Self.canonical[dialect.canonical])
        let expected = try Self.breaks(start: canonical.start, continuation: canonical.continuation, end: canonical.end)
        #expect(expected.count == 1 && expected[0].hasSuffix(" 1004 10.000 1009"), "\(expected)")
        #expect(try Self.breaks(start: dialect.start, continuation: dialect.continuation, end: dialect.end) == expected)
    }
}
