import HeadwaterHLS
import HeadwaterStitching

/// The inputs of the stitching benchmark: a synthetic live channel (2 s segments with
/// PROGRAM-DATE-TIME, one rendition) run for a day under the demo's schedule (a 20 s break every
/// minute), its break log with every break retained (nothing pruned: the worst case), an ad
/// configuration like the demo's, and viewer sessions that started when the channel did.
struct StitchFixture {
    static let rendition = "v1"
    static let segmentDuration = HLSDuration.seconds(2)
    static let targetDuration = 2
    /// 2026-11-21T00:00:00Z: whole minutes and whole 10-minute cap periods from the first segment.
    static let channelStart = ProgramDateTime(millisecondsSinceEpoch: 1_795_219_200_000)
    static let firstMediaSequence: UInt64 = 1_000_000

    /// The media sequence number of the segment that starts `seconds` after the channel started.
    static func mediaSequence(atSecond seconds: Int) -> UInt64 {
        firstMediaSequence + UInt64(seconds / 2)
    }

    /// `count` content segments ending with segment `last`, as the origin publishes them (URIs
    /// resolved against the channel, PDT on every segment).
    static func content(endingAt last: UInt64, count: Int) -> MediaPlaylist {
        let first = last + 1 - UInt64(count)
        var playlist = MediaPlaylist(targetDuration: targetDuration, mediaSequence: first)
        playlist.version = 3
        playlist.independentSegments = true
        playlist.segments.reserveCapacity(count)
        for msn in first...last {
            var segment = MediaSegment(uri: "/live/demo/v1/\(msn).ts", duration: segmentDuration)
            segment.programDateTime = channelStart.adding(
                HLSDuration(microseconds: Int64(msn - firstMediaSequence) * segmentDuration.microseconds))
            playlist.segments.append(segment)
        }
        return playlist
    }

    /// Runs a ``BreakTracker`` with the demo schedule over the channel, one published version (a
    /// 15-segment window) per new segment, and returns the log as published with the version that
    /// ends at each of `snapshots` (ascending media sequence numbers). Nothing is pruned.
    static func breakLogs(at snapshots: [UInt64], ruleSetVersion: UInt64) throws -> [UInt64: BreakLog] {
        let schedule = try BreakSchedule(every: .seconds(60), duration: .seconds(20))
        var tracker = BreakTracker(channel: "demo", schedule: schedule)
        var logs: [UInt64: BreakLog] = [:]
        guard let lastSnapshot = snapshots.max() else { return logs }
        var last = firstMediaSequence + 14
        while last <= lastSnapshot {
            _ = tracker.advance(to: content(endingAt: last, count: 15), ruleSetVersion: ruleSetVersion)
            if snapshots.contains(last) { logs[last] = tracker.log }
            last += 1
        }
        return logs
    }

    /// The demo's ad configuration (Config/ads.yaml) in one rendition: four creatives of 2 s
    /// segments, a 2 s slate, TV pods in weighted rotation with the long one capped at 1 per 10
    /// minutes, a phone pod, a default pod. Unlike the demo, every creative has tracking URLs (five
    /// events, with macros), so every ad's date range carries them.
    static func ruleSet(version: UInt64) -> AdRuleSet {
        func creative(_ id: String, segments: Int) -> Creative {
            let media = CreativeRendition(
                segments: (0..<segments).map {
                    CreativeSegment(uri: "/ads/\(id)/v1/seg-0000\($0).ts", duration: segmentDuration)
                })
            let base = "http://127.0.0.1:9/track"
            let tracking: [TrackingEvent: [String]] = [
                .impression: ["\(base)/impression?session={session}&break={break}&ad={ad}"],
                .firstQuartile: ["\(base)/q1?session={session}&ad={ad}"],
                .midpoint: ["\(base)/q2?session={session}&ad={ad}"],
                .thirdQuartile: ["\(base)/q3?session={session}&ad={ad}"],
                .complete: ["\(base)/complete?session={session}&ad={ad}"],
            ]
            return Creative(id: id, renditions: [rendition: media], tracking: tracking)
        }
        let slate = Creative(
            id: "slate",
            renditions: [
                rendition: CreativeRendition(segments: [CreativeSegment(uri: "/slate/v1/seg-00000.ts", duration: segmentDuration)])
            ])
        func ad(_ creative: String, id: String? = nil) -> Pod.Ad { Pod.Ad(id: id ?? creative, creativeID: creative) }
        return AdRuleSet(
            version: version,
            creatives: [creative("ad1", segments: 3), creative("ad2", segments: 3), creative("ad3", segments: 3), creative("ad4", segments: 2)],
            slate: slate,
            pods: [
                Pod(id: "tv-long", ads: [ad("ad1"), ad("ad2"), ad("ad3")], weight: 2, cap: FrequencyCap(count: 1, per: .seconds(600))),
                Pod(id: "tv-short", ads: [ad("ad2"), ad("ad1")]),
                Pod(id: "phone", ads: [ad("ad4"), ad("ad3")]),
                Pod(id: "everyone", ads: [ad("ad3", id: "house-promo"), ad("ad4")]),
            ],
            rules: [
                AdRule(id: "tv", conditions: ["device": ["tv", "stb"]], podIDs: ["tv-long", "tv-short"]),
                AdRule(id: "phone", conditions: ["device": ["phone"]], podIDs: ["phone"]),
                AdRule(id: "default", podIDs: ["everyone"]),
            ])
    }

    /// `count` sessions that started at `start`, with 22-character ids like the server's.
    static func sessions(count: Int, device: String, start: ProgramDateTime = channelStart) -> [ViewerSession] {
        var generator = SplitMix64(seed: 0x6865_6164_7761_7465)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        return (0..<count).map { _ in
            let id = String(decoding: (0..<22).map { _ in alphabet[Int(generator.next() & 63)] }, as: UTF8.self)
            return ViewerSession(id: id, startDate: start, targeting: ["channel": "demo", "device": device])
        }
    }
}

/// A small seeded generator, so every run measures the same sessions.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
