import Foundation
import HeadwaterHLS
import HeadwaterSCTE35
import HeadwaterStitching
import Testing

/// Whole stitched playlists for named cases, checked in under `Goldens/` and reviewed as diffs.
/// `UPDATE_GOLDENS=1 swift test --filter StitcherGoldenTests` rewrites them.
@Suite("Stitcher goldens")
struct StitcherGoldenTests {
    static let updating = ProcessInfo.processInfo.environment["UPDATE_GOLDENS"] == "1"
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Goldens")

    @Test("a break in the middle of the window, in progress then ended, video and audio")
    func breakInTheMiddleOfTheWindow() throws {
        var channel = GoldenChannel()
        channel.starts[104] = ("b1", .seconds(30), nil)
        channel.ends[109] = "b1"
        try compare("break-mid-window", channel: channel, snapshots: [106, 111], renditions: ["video", "audio"])
    }

    @Test("an early return cuts the pod inside its first ad; CUE markers on")
    func earlyReturn() throws {
        var channel = GoldenChannel()
        channel.starts[103] = ("b2", .seconds(60), nil)
        channel.ends[105] = "b2"
        try compare("early-return", channel: channel, snapshots: [104, 107], options: StitchOptions(cueMarkers: true))
    }

    @Test("a viewer who joins mid-break sees the content, with a discontinuity on every slot")
    func joinMidBreak() throws {
        var channel = GoldenChannel()
        channel.starts[103] = ("b3", .seconds(30), nil)
        channel.ends[108] = "b3"
        // The session starts while slot 1 plays.
        let session = ViewerSession(
            id: "viewer-late", startDate: channel.date(of: 104).adding(.seconds(1)), targeting: ["device": "tv"])
        try compare("join-mid-break", channel: channel, snapshots: [106, 109], session: session)
    }

    @Test("back-to-back breaks, the second from a source cue, a source discontinuity inside it")
    func backToBack() throws {
        var channel = GoldenChannel()
        channel.starts[102] = ("b4", .seconds(18), nil)
        channel.ends[105] = "b4"
        let cue = try SpliceInfoSection.spliceInsert(
            eventID: 0x4800_008F, outOfNetwork: true, ptsTime: 1_936_310_318, duration: 1_620_000
        ).encoded()
        channel.starts[105] = ("b5", .seconds(18), cue)
        channel.ends[108] = "b5"
        channel.discontinuities = [106]
        try compare(
            "back-to-back", channel: channel, snapshots: [106, 110], session: GoldenChannel.phoneViewer,
            options: StitchOptions(cueMarkers: true))
    }

    /// Renders each snapshot, checks consecutive ones with the live-pair checker, compares the bytes.
    private func compare(
        _ name: String,
        channel: GoldenChannel,
        snapshots: [UInt64],
        renditions: [String] = ["video"],
        session: ViewerSession = GoldenChannel.tvViewer,
        options: StitchOptions = StitchOptions()
    ) throws {
        for rendition in renditions {
            var previous: MediaPlaylist?
            for (number, last) in snapshots.enumerated() {
                let (content, log) = try channel.snapshot(through: last, rendition: rendition)
                let playlist = try Stitcher.render(
                    content: content, rendition: rendition, breaks: log, session: session,
                    ruleSets: [1: GoldenChannel.ruleSet], options: options)
                let issues = PlaylistValidator.validate(playlist).filter { $0.severity == .error }
                #expect(issues.isEmpty, "\(name): \(issues)")
                if let previous {
                    let errors = LiveUpdateChecker.check(previous: previous, next: playlist).filter { $0.severity == .error }
                    #expect(errors.isEmpty, "\(name) \(number): \(errors)")
                }
                previous = playlist
                try compareGolden("\(name).\(number + 1).\(rendition).m3u8", PlaylistSerializer.serialize(playlist))
            }
        }
    }

    private func compareGolden(_ file: String, _ bytes: [UInt8]) throws {
        let url = Self.directory.appendingPathComponent(file)
        if Self.updating {
            try FileManager.default.createDirectory(at: Self.directory, withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
            return
        }
        guard let golden = try? [UInt8](Data(contentsOf: url)) else {
            Issue.record("no golden \(file); run UPDATE_GOLDENS=1 swift test --filter StitcherGoldenTests and review it")
            return
        }
        let expected = String(decoding: golden, as: UTF8.self)
        let actual = String(decoding: bytes, as: UTF8.self)
        let firstDifference = zip(expected.split(separator: "\n", omittingEmptySubsequences: false), actual.split(separator: "\n", omittingEmptySubsequences: false))
            .enumerated().first { $0.element.0 != $0.element.1 }
            .map { "line \($0.offset + 1): expected \(String($0.element.0).debugDescription), got \(String($0.element.1).debugDescription)" }
        #expect(actual == expected, "\(file): \(firstDifference ?? "lengths differ")")
    }
}

/// A small deterministic channel: 6 s segments from MSN 100 at 2026-03-01T12:00:00Z, a window of
/// eight, breaks started and ended at given media sequence numbers.
struct GoldenChannel {
    var starts: [UInt64: (id: String, planned: HLSDuration, cue: [UInt8]?)] = [:]
    var ends: [UInt64: String] = [:]
    var discontinuities: Set<UInt64> = []
    var firstMSN: UInt64 = 100
    var windowSize = 8
    static let firstDate = ProgramDateTime(millisecondsSinceEpoch: 1_772_366_400_000)

    static let tvViewer = ViewerSession(
        id: "viewer-tv", startDate: ProgramDateTime(millisecondsSinceEpoch: 1_772_366_000_000), targeting: ["device": "tv"])
    static let phoneViewer = ViewerSession(
        id: "viewer-phone", startDate: ProgramDateTime(millisecondsSinceEpoch: 1_772_366_000_000),
        targeting: ["device": "phone"])

    /// Two creatives conditioned to the channel's 6 s (a 15 s and a 10 s ad), a 2 s slate.
    static let ruleSet: AdRuleSet = {
        func creative(_ id: String, _ seconds: [Int64]) -> Creative {
            var renditions: [String: CreativeRendition] = [:]
            for name in ["video", "audio"] {
                renditions[name] = CreativeRendition(
                    segments: seconds.enumerated().map { index, duration in
                        CreativeSegment(uri: "/ads/\(id)/\(name)/\(index).ts", duration: .milliseconds(duration))
                    })
            }
            return Creative(id: id, renditions: renditions)
        }
        return AdRuleSet(
            version: 1,
            creatives: [creative("ad-a", [6000, 6000, 3000]), creative("ad-b", [6000, 4000])],
            slate: creative("slate", [1000, 2000, 4000, 6000]),
            pods: [
                Pod(id: "pod-tv", ads: [.init(id: "spring-sale", creativeID: "ad-a"), .init(id: "car", creativeID: "ad-b")]),
                Pod(id: "pod-phone", ads: [.init(id: "car", creativeID: "ad-b")]),
            ],
            rules: [
                AdRule(id: "tv", conditions: ["device": ["tv"]], podIDs: ["pod-tv"]),
                AdRule(id: "everyone", podIDs: ["pod-phone"]),
            ])
    }()

    func duration(of msn: UInt64) -> HLSDuration { .seconds(6) }

    func date(of msn: UInt64) -> ProgramDateTime {
        var date = Self.firstDate
        for earlier in firstMSN..<msn { date = date.adding(duration(of: earlier)) }
        return date
    }

    /// The content window of `rendition` whose last segment is `last`, and the break log as of it.
    func snapshot(through last: UInt64, rendition: String) throws -> (MediaPlaylist, BreakLog) {
        var content = MediaPlaylist(targetDuration: 6, mediaSequence: firstMSN)
        content.version = 3
        var log = BreakLog()
        var date = Self.firstDate
        for msn in firstMSN...last {
            var segment = MediaSegment(uri: "\(rendition)/\(msn).ts", duration: duration(of: msn))
            if msn == firstMSN || discontinuities.contains(msn) {
                segment.tags.discontinuity = msn != firstMSN
                segment.tags.programDateTime = date
            }
            date = date.adding(segment.duration)
            content.segments.append(segment)
            if let id = ends[msn] { try log.endBreak(id: id, at: msn, content: content) }
            if let start = starts[msn] {
                try log.startBreak(
                    id: start.id, at: msn, plannedDuration: start.planned, ruleSetVersion: 1, outCue: start.cue,
                    content: content)
            }
        }
        let window = content.removingSegmentsFromHead(max(0, content.segments.count - windowSize))
        log.removeBreaks(endingBefore: window.effectiveMediaSequence)
        return (window, log)
    }
}
