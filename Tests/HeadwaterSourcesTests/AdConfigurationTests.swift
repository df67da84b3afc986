import Foundation
import HeadwaterConfiguration
import HeadwaterHLS
import HeadwaterSources
import HeadwaterStitching
import Testing

/// The repository's root (for Config/ads.yaml and Public/).
private let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

@Suite("Ad configuration (Config/ads.yaml)")
struct AdConfigurationTests {
    static let demoRenditions = ["v0", "v1", "v2", "audio-alt"]

    // MARK: The demo

    @Test("the demo ads.yaml loads and fits the demo channel's ladder")
    func demo() throws {
        let ads = try AdConfiguration.load(
            file: repositoryRoot + "/Config/ads.yaml", publicDirectory: repositoryRoot + "/Config/../Public", version: 7)
        let demo = try LoopPackage.load(multivariantPath: demoPackagePath)
        #expect(demo.renditions.map(\.name).sorted() == Self.demoRenditions.sorted())
        let problems = ads.validate(
            channel: "demo", renditions: demo.renditions.map(\.name), targetDuration: demo.targetDuration,
            maximumSegmentDuration: demo.durations.max())
        #expect(problems == [])

        let ruleSet = ads.ruleSet
        #expect(ruleSet.version == 7)
        #expect(ruleSet.creatives.keys.sorted() == ["ad1", "ad2", "ad3", "ad4"])
        let ad1 = try #require(ruleSet.creatives["ad1"]?.renditions["audio-alt"])
        #expect(ad1.segments.map(\.uri) == ["/ads/ad1/audio-alt/seg-00000.ts", "/ads/ad1/audio-alt/seg-00001.ts", "/ads/ad1/audio-alt/seg-00002.ts"])
        #expect(ad1.segments.allSatisfy { $0.duration == .seconds(2) } && ad1.map == nil)
        #expect(ruleSet.creatives["ad4"]?.duration == .seconds(4))
        #expect(ruleSet.slate.renditions["v2"]?.segments.map(\.uri) == ["/slate/v2/seg-00000.ts"])
        #expect(ruleSet.creatives["ad1"]?.tracking.count == TrackingEvent.allCases.count)
        #expect(ruleSet.longestCapPeriod == .seconds(600) && ruleSet.headerNames.isEmpty)

        // tv and phone viewers get different pods with different creatives; tv rotates among two.
        func decisions(_ targeting: [String: String]) -> [PodDecision] {
            (0..<200).map { number in
                PodChooser.choose(
                    sessionID: "session-\(number)", targeting: targeting, breakID: "b1",
                    startDate: ProgramDateTime(millisecondsSinceEpoch: 1_772_366_400_000), plannedDuration: .seconds(20),
                    ruleSet: ruleSet)
            }
        }
        let tv = decisions(["device": "tv"])
        let phone = decisions(["device": "phone"])
        let other = decisions([:])
        #expect(Set(tv.compactMap(\.podID)) == ["tv-long", "tv-short"])
        #expect(Set(phone.compactMap(\.podID)) == ["phone"] && Set(other.compactMap(\.podID)) == ["everyone"])
        let tvCreatives = Set(tv.flatMap(\.ads).map(\.creativeID))
        let phoneCreatives = Set(phone.flatMap(\.ads).map(\.creativeID))
        #expect(tvCreatives != phoneCreatives && phone[0].ads.first?.creativeID == "ad4")
        #expect(ruleSet.pod(id: "tv-long")?.cap == FrequencyCap(count: 1, per: .seconds(600)))
        #expect(ruleSet.pod(id: "everyone")?.ads.first == Pod.Ad(id: "house-promo", creativeID: "ad3"))
    }

    // MARK: Bad input: ladders and durations, per channel

    @Test("a creative without one of the channel's renditions")
    func missingRendition() throws {
        let fixture = try AdsFixture()
        try fixture.package("ad1", ["v0": ["2.000"], "v1": ["2.000"]])
        let ads = try fixture.load(Self.oneCreative("ad1"))
        #expect(ads.validate(channel: "demo", renditions: ["v0", "v1", "v2"], targetDuration: 2, maximumSegmentDuration: nil).map(\.description) == [
            #"ads.yaml:3: creatives.ad1.package: missing rendition "v2" (channel "demo")"#
        ])
        #expect(ads.validate(channel: "demo", renditions: ["v0", "v1"], targetDuration: 2, maximumSegmentDuration: nil) == [])
    }

    @Test("a creative segmented differently in two renditions")
    func differentSegmentation() throws {
        let fixture = try AdsFixture()
        try fixture.package("ad1", ["v0": ["2.000", "2.000"], "v1": ["2.000", "1.500"]])
        let ads = try fixture.load(Self.oneCreative("ad1"))
        #expect(ads.validate(channel: "demo", renditions: ["v0", "v1"], targetDuration: 2, maximumSegmentDuration: nil).map(\.description) == [
            #"ads.yaml:3: creatives.ad1.package: v1/index.m3u8: segmentation differs from rendition "v0" (2 segments: 2.000, 1.500 vs 2 segments: 2.000, 2.000); every rendition must have the same segment durations (channel "demo")"#
        ])
    }

    @Test("a creative segment longer than the channel's target duration, and than its segments")
    func longSegment() throws {
        let fixture = try AdsFixture()
        try fixture.package("ad1", ["v0": ["2.000", "2.600"], "v1": ["2.000", "2.600"]])
        try fixture.package("slate", ["v0": ["2.400"], "v1": ["2.400"]])
        let ads = try fixture.load(Self.oneCreative("ad1", slate: "../Public/ads/slate/master.m3u8"))
        #expect(ads.validate(channel: "news", renditions: ["v0", "v1"], targetDuration: 2, maximumSegmentDuration: nil).map(\.description) == [
            #"ads.yaml:3: creatives.ad1.package: v0/index.m3u8:7: EXTINF 2.600 rounds to 3 s, above the channel's target duration 2 s (channel "news")"#,
            #"ads.yaml:3: creatives.ad1.package: v1/index.m3u8:7: EXTINF 2.600 rounds to 3 s, above the channel's target duration 2 s (channel "news")"#,
        ])
        #expect(ads.validate(channel: "news", renditions: ["v0"], targetDuration: 3, maximumSegmentDuration: .seconds(2)).map(\.description) == [
            #"ads.yaml:3: creatives.ad1.package: v0/index.m3u8:7: EXTINF 2.600 is longer than the content's segments (2.000) (channel "news")"#,
            #"ads.yaml:4: slate: v0/index.m3u8:5: EXTINF 2.400 is longer than the content's segments (2.000) (channel "news")"#,
        ])
    }

    @Test("a slate that is one of the creatives is reported once, under creatives")
    func slateCreative() throws {
        let fixture = try AdsFixture()
        try fixture.package("ad1", ["v0": ["2.000"]])
        let ads = try fixture.load(Self.oneCreative("ad1", slate: "ad1"))
        #expect(ads.ruleSet.slate.renditions == ads.ruleSet.creatives["ad1"]?.renditions)
        #expect(ads.validate(channel: "demo", renditions: ["v0", "v1"], targetDuration: 2, maximumSegmentDuration: nil).map(\.description) == [
            #"ads.yaml:3: creatives.ad1.package: missing rendition "v1" (channel "demo")"#
        ])
    }

    // MARK: Bad input: the file itself

    @Test("unknown creative in a pod, unknown pod in a rule")
    func references() throws {
        let fixture = try AdsFixture()
        try fixture.package("ad1", ["v0": ["2.000"]])
        let problems = fixture.problems(
            """
            creatives:
              ad1: {package: ../Public/ads/ad1/master.m3u8}
            slate: ad1
            pods:
              tv-long:
                ads: [ad1, ad9, {creative: ad8, id: promo}]
            rules:
              - id: tv
                pods: [tv-long, nope]
            """)
        #expect(problems == [
            #"ads.yaml:6: pods.tv-long.ads[1]: unknown creative "ad9""#,
            #"ads.yaml:6: pods.tv-long.ads[2]: unknown creative "ad8""#,
            #"ads.yaml:9: rules[0].pods[1]: unknown pod "nope""#,
        ])
    }

    @Test("unknown keys, anywhere, each with its line")
    func unknownKeys() throws {
        let fixture = try AdsFixture()
        try fixture.package("ad1", ["v0": ["2.000"]])
        let problems = fixture.problems(
            """
            creatives:
              ad1:
                package: ../Public/ads/ad1/master.m3u8
                tracking: {impresion: ["http://t.example/"]}
            slate: ad1
            colour: blue
            pods:
              p: {ads: [ad1], cap: {count: 1, per: 60, every: 2}}
            rules:
              - {id: r, pods: [p], pod: [p]}
            """)
        #expect(problems == [
            "ads.yaml:6: colour: unknown key (expected one of: creatives, part_target, pods, rules, slate)",
            "ads.yaml:4: creatives.ad1.tracking.impresion: unknown key (expected one of: complete, first_quartile, impression, midpoint, third_quartile)",
            "ads.yaml:8: pods.p.cap.every: unknown key (expected one of: count, per)",
            "ads.yaml:10: rules[0].pod: unknown key (expected one of: id, pods, when)",
        ])
    }

    @Test("creatives and slate are cut into low-latency parts like the loop channel (part_target), or not (off)")
    func creativeParts() throws {
        let path = repositoryRoot + "/Config/ads.yaml"
        let ads = try AdConfiguration.load(file: path, publicDirectory: repositoryRoot + "/Public", version: 1)
        let demo = try LoopPackage.load(multivariantPath: demoPackagePath).cuttingParts(every: 400_000)
        for (id, creative) in ads.ruleSet.creatives.sorted(by: { $0.key < $1.key }) + [("slate", ads.ruleSet.slate)] {
            for (name, rendition) in creative.renditions {
                for segment in rendition.segments {
                    // 2 s segments in five ~0.4 s parts that cover the file, the first starting with a key
                    // frame, none over the demo's PART-TARGET: a player's part cadence holds through a break.
                    #expect(segment.parts.count == 5, "\(id) \(name) \(segment.uri)")
                    #expect(segment.parts.first?.offset == 0 && segment.parts.first?.independent == true)
                    #expect(zip(segment.parts, segment.parts.dropFirst()).allSatisfy { $0.offset + $0.length == $1.offset })
                    #expect(segment.parts.reduce(HLSDuration.zero) { $0 + $1.duration } == segment.duration)
                    #expect(segment.parts.allSatisfy { $0.duration <= demo.partTarget! }, "\(id) \(name) \(segment.uri)")
                }
            }
        }
        let off = FileManager.default.temporaryDirectory.appendingPathComponent("ads-parts-off-\(getpid()).yaml").path
        defer { try? FileManager.default.removeItem(atPath: off) }
        try ((try String(contentsOfFile: path, encoding: .utf8)).replacingOccurrences(of: "../Public/", with: repositoryRoot + "/Public/")
            + "\npart_target: off\n").write(toFile: off, atomically: true, encoding: .utf8)
        let whole = try AdConfiguration.load(file: off, publicDirectory: repositoryRoot + "/Public", version: 1)
        #expect(whole.ruleSet.creatives.values.allSatisfy { $0.renditions.values.allSatisfy { $0.segments.allSatisfy(\.parts.isEmpty) } })
        let problems = try AdsFixture().problems(
            """
            part_target: 7
            creatives: {}
            slate: x
            pods: {}
            rules: []
            """)
        #expect(problems.first == "ads.yaml:1: part_target: expected seconds from 0.1 to 2 (e.g. 0.4), or off")
    }

    @Test("bad frequency caps")
    func badCaps() throws {
        let fixture = try AdsFixture()
        try fixture.package("ad1", ["v0": ["2.000"]])
        let problems = fixture.problems(
            """
            creatives:
              ad1: {package: ../Public/ads/ad1/master.m3u8}
            slate: ad1
            pods:
              zero: {ads: [ad1], cap: {count: 0, per: 10m}}
              unit: {ads: [ad1], cap: {count: 1, per: 10 minutes}}
              long: {ads: [ad1], cap: {count: 1, per: 2d}}
              odd:  {ads: [ad1], cap: {count: 1, per: 7m}}
              half: {ads: [ad1], cap: {per: 1h}}
              many: {ads: [ad1], cap: {count: two, per: 1h}}
            rules:
              - {id: r, pods: [zero, unit, long, odd, half, many]}
            """)
        #expect(problems == [
            "ads.yaml:6: pods.unit.cap.per: must be a duration: seconds (600) or a number with s, m, h or d (30s, 10m, 1h, 1d)",
            "ads.yaml:9: pods.half.cap.count: required: shows allowed per period",
            "ads.yaml:10: pods.many.cap.count: must be an integer",
            "ads.yaml:5: pods.zero.cap.count: must be at least 1 (remove the pod from the rules to never show it)",
            "ads.yaml:7: pods.long.cap.per: must be a whole number of seconds from 1 to 86400 (one day), got 172800.000",
            "ads.yaml:8: pods.odd.cap.per: 420 s does not divide the longest cap period 600 s; cap periods must nest (e.g. 600, 1800, 3600)",
        ])
    }

    @Test("bad hours and conditions")
    func badHours() throws {
        let fixture = try AdsFixture()
        try fixture.package("ad1", ["v0": ["2.000"]])
        let problems = fixture.problems(
            """
            creatives:
              ad1: {package: ../Public/ads/ad1/master.m3u8}
            slate: ad1
            pods:
              p: {ads: [ad1]}
            rules:
              - id: evening
                when: {hours: 6pm-10pm}
                pods: [p]
              - id: day
                when:
                  hours: ["06-09", "09-09", "25-03"]
                  header.User-Agent: ["*TV*"]
                  geo: []
                pods: [p]
            """)
        #expect(problems == [
            #"ads.yaml:8: rules[0].when.hours: must be HH-HH in UTC, e.g. 06-22 (22-06 wraps past midnight, 00-24 is all day), got "6pm-10pm""#,
            #"ads.yaml:14: rules[1].when.geo: must accept at least one value"#,
            #"ads.yaml:13: rules[1].when.header.User-Agent: header names are matched lower-case: write header.user-agent"#,
            "ads.yaml:12: rules[1].when.hours[1]: 09-09 is not an hour range: HH-HH with a start 00-23 and a different end 01-24 (UTC; 22-06 wraps past midnight, 00-24 is all day)",
            "ads.yaml:12: rules[1].when.hours[2]: 25-03 is not an hour range: HH-HH with a start 00-23 and a different end 01-24 (UTC; 22-06 wraps past midnight, 00-24 is all day)",
        ])
    }

    @Test("bad tracking URLs")
    func badTracking() throws {
        let fixture = try AdsFixture()
        try fixture.package("ad1", ["v0": ["2.000"]])
        let problems = fixture.problems(
            """
            creatives:
              ad1:
                package: ../Public/ads/ad1/master.m3u8
                tracking:
                  impression:
                    - http://t.example/ok?s={session}
                    - http://t.example/a b
                    - "http://t.example/\\"q\\""
                  complete: http://t.example/{user}
                  midpoint: [/relative]
            slate: ad1
            pods: {p: {ads: [ad1]}}
            rules: [{id: r, pods: [p]}]
            """)
        #expect(problems == [
            "ads.yaml:7: creatives.ad1.tracking.impression[1]: contains a space; percent-encode it (%20)",
            "ads.yaml:8: creatives.ad1.tracking.impression[2]: contains a double quote; percent-encode it (%22)",
            "ads.yaml:10: creatives.ad1.tracking.midpoint[0]: must be an http:// or https:// URL",
            "ads.yaml:9: creatives.ad1.tracking.complete: unknown macro {user} (known: {session}, {break}, {ad}, {creative})",
        ])
    }

    @Test("packages: unreadable, outside server.public, not VOD, a missing segment, explicit url")
    func packages() throws {
        let fixture = try AdsFixture()
        try fixture.package("ad1", ["v0": ["2.000", "2.000"]])
        try fixture.package("live", ["v0": ["2.000"]], endList: false)
        try fixture.package("gone", ["v0": ["2.000", "2.000"]])
        try FileManager.default.removeItem(atPath: fixture.root + "/Public/ads/gone/v0/seg-1.ts")
        try FileManager.default.createDirectory(atPath: fixture.root + "/Elsewhere", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: fixture.root + "/Public/ads/ad1", toPath: fixture.root + "/Elsewhere/ad1")
        let problems = fixture.problems(
            """
            creatives:
              missing: {package: ../Public/ads/none/master.m3u8}
              outside: {package: ../Elsewhere/ad1/master.m3u8}
              live: {package: ../Public/ads/live/master.m3u8}
              gone: {package: ../Public/ads/gone/master.m3u8}
              cdn: {package: ../Elsewhere/ad1/master.m3u8, url: https://cdn.example/ads/ad1}
              badurl: {package: ../Public/ads/ad1/master.m3u8, url: ads/ad1/}
            slate: cdn
            pods: {p: {ads: [missing, outside, live, gone, cdn, badurl]}}
            rules: [{id: r, pods: [p]}]
            """)
        let config = fixture.root + "/Config/"
        #expect(problems == [
            "ads.yaml:2: creatives.missing.package: \(config)../Public/ads/none/master.m3u8: cannot read file",
            "ads.yaml:3: creatives.outside.package: ../Elsewhere/ad1/master.m3u8 is not under server.public (\(fixture.root)/Public); move it there or set url to where its directory is served",
            "ads.yaml:4: creatives.live.package: v0/index.m3u8: a creative must be a VOD media playlist (EXT-X-ENDLIST)",
            #"ads.yaml:5: creatives.gone.package: v0/index.m3u8:8: "seg-1.ts" does not exist"#,
            "ads.yaml:7: creatives.badurl.url: must be a root-relative path (/ads/ad1/) or an http:// or https:// URL, without spaces, quotes, query or fragment",
        ])
        // The explicit URL, and the default one under server.public.
        let good = try fixture.load(
            """
            creatives:
              cdn: {package: ../Elsewhere/ad1/master.m3u8, url: https://cdn.example/ads/ad1}
              ad1: {package: ../Public/ads/ad1/master.m3u8}
            slate: {package: ../Public/ads/ad1/master.m3u8, url: /slate/}
            pods: {p: {ads: [cdn, ad1]}}
            rules: [{id: r, pods: [p]}]
            """)
        #expect(good.ruleSet.creatives["cdn"]?.renditions["v0"]?.segments.map(\.uri) == ["https://cdn.example/ads/ad1/v0/seg-0.ts", "https://cdn.example/ads/ad1/v0/seg-1.ts"])
        #expect(good.ruleSet.creatives["ad1"]?.renditions["v0"]?.segments.first?.uri == "/ads/ad1/v0/seg-0.ts")
        #expect(good.ruleSet.slate.renditions["v0"]?.segments.first?.uri == "/slate/v0/seg-0.ts")
    }

    @Test("required keys, YAML syntax, an unreadable file")
    func required() throws {
        let fixture = try AdsFixture()
        #expect(fixture.problems("creatives: {}\n") == [
            "ads.yaml:1: slate: required: the package (or creative id) that fills breaks after the pod",
            "ads.yaml:1: pods: required: the pods, by id",
            "ads.yaml:1: rules: required: the rules that choose pods, in priority order",
        ])
        let syntax = fixture.problems("pods:\n  p: {ads: [a}\n")
        #expect(syntax.count == 1 && syntax[0].hasPrefix("ads.yaml:2: not valid YAML"), "\(syntax)")
        #expect(throws: ConfigurationError.self) {
            try AdConfiguration.load(file: fixture.root + "/Config/none.yaml", publicDirectory: nil, version: 1)
        }
    }

    // MARK: Helpers

    static func oneCreative(_ id: String, slate: String? = nil) -> String {
        """
        creatives:
          \(id):
            package: ../Public/ads/\(id)/master.m3u8
        slate: \(slate ?? id)
        pods: {p: {ads: [\(id)]}}
        rules: [{id: r, pods: [p]}]
        """
    }
}

/// A temporary `Config/` and `Public/` with small creative packages (empty segment files: loading
/// does not probe them).
struct AdsFixture {
    let root: String

    init() throws {
        root = NSTemporaryDirectory() + "headwater-ads-\(UUID().uuidString)"
        for directory in ["Config", "Public/ads"] {
            try FileManager.default.createDirectory(atPath: root + "/" + directory, withIntermediateDirectories: true)
        }
    }

    /// `Public/ads/<name>/`: a multivariant playlist and one media playlist per rendition, with these
    /// EXTINFs (segments `seg-<n>.ts`).
    func package(_ name: String, _ renditions: [String: [String]], endList: Bool = true) throws {
        let directory = root + "/Public/ads/" + name
        var master = "#EXTM3U\n"
        for (rendition, durations) in renditions.sorted(by: { $0.key < $1.key }) {
            master += "#EXT-X-STREAM-INF:BANDWIDTH=100000\n\(rendition)/index.m3u8\n"
            try FileManager.default.createDirectory(atPath: directory + "/" + rendition, withIntermediateDirectories: true)
            var media = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:3\n#EXT-X-PLAYLIST-TYPE:VOD\n"
            for (index, duration) in durations.enumerated() {
                media += "#EXTINF:\(duration),\nseg-\(index).ts\n"
                try Data().write(to: URL(fileURLWithPath: "\(directory)/\(rendition)/seg-\(index).ts"))
            }
            if endList { media += "#EXT-X-ENDLIST\n" }
            try media.write(toFile: "\(directory)/\(rendition)/index.m3u8", atomically: true, encoding: .utf8)
        }
        try master.write(toFile: directory + "/master.m3u8", atomically: true, encoding: .utf8)
    }

    /// Loads `yaml` as `Config/ads.yaml`, reported as `ads.yaml`, with `Public/` as server.public.
    func load(_ yaml: String) throws(ConfigurationError) -> AdConfiguration {
        try AdConfiguration.parse(
            yaml, file: "ads.yaml", baseDirectory: root + "/Config", publicDirectory: root + "/Public", version: 1)
    }

    /// Every problem `yaml` has, as printed.
    func problems(_ yaml: String) -> [String] {
        do {
            _ = try load(yaml)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }
}
