import HeadwaterHLS
import HeadwaterStitching
import Testing

@Suite("Ad rule set validation")
struct RuleSetValidationTests {
    static let renditions = ["video", "audio"]

    @Test("the golden rule set is valid")
    func valid() {
        #expect(GoldenChannel.ruleSet.validate(renditions: Self.renditions, targetDuration: 6) == [])
    }

    @Test("a creative longer than the target duration is refused, with its key path")
    func tooLong() {
        var ruleSet = GoldenChannel.ruleSet
        for name in Self.renditions { ruleSet.creatives["ad-a"]!.renditions[name]!.segments[1].duration = .milliseconds(6500) }
        let issues = ruleSet.validate(renditions: Self.renditions, targetDuration: 6)
        #expect(issues.map(\.path) == [#"creatives["ad-a"].renditions["audio"].segments[1]"#, #"creatives["ad-a"].renditions["video"].segments[1]"#])
        #expect(issues.first?.message == "EXTINF 6.500 rounds to 7 s, above the channel's target duration 6 s")
        // 6.499 rounds to 6: accepted (B1 compares the rounded value).
        for name in Self.renditions { ruleSet.creatives["ad-a"]!.renditions[name]!.segments[1].duration = .milliseconds(6499) }
        #expect(ruleSet.validate(renditions: Self.renditions, targetDuration: 6) == [])
        // Unless the channel asks for creatives no longer than its own segments.
        #expect(ruleSet.validate(renditions: Self.renditions, targetDuration: 6, maximumSegmentDuration: .seconds(6)).count == 2)
    }

    @Test("a mismatched ladder: a missing rendition, a different segmentation")
    func ladder() {
        var ruleSet = GoldenChannel.ruleSet
        ruleSet.creatives["ad-b"]!.renditions["audio"] = nil
        ruleSet.slate.renditions["audio"]!.segments.append(CreativeSegment(uri: "/ads/slate/audio/1.ts", duration: .seconds(2)))
        let issues = ruleSet.validate(renditions: Self.renditions, targetDuration: 6).map(\.description)
        #expect(issues == [
            #"creatives["ad-b"].renditions: missing rendition "audio""#,
            #"slate.renditions["video"]: segmentation differs from rendition "audio" (4 segments: 1.000, 2.000, 4.000, 6.000 vs 5 segments: 1.000, 2.000, 4.000, 6.000, 2.000); every rendition must have the same segment durations"#,
        ])
        #expect(GoldenChannel.ruleSet.validate(renditions: ["video", "audio", "hd"], targetDuration: 6).count == 3)
    }

    @Test("pods and rules must name what exists")
    func references() {
        var ruleSet = GoldenChannel.ruleSet
        ruleSet.pods.append(Pod(id: "pod-tv", ads: [.init(id: "x", creativeID: "nope")], weight: 0))
        ruleSet.rules.append(AdRule(id: "tv", podIDs: ["missing"]))
        let issues = ruleSet.validate(renditions: Self.renditions, targetDuration: 6).map(\.description)
        #expect(issues == [
            #"pods[2].id: duplicate pod id "pod-tv""#,
            "pods[2].weight: must be at least 1",
            #"pods[2].ads[0].creative: unknown creative "nope""#,
            #"rules[2].id: duplicate rule id "tv""#,
            #"rules[2].pods[0]: unknown pod "missing""#,
        ])
    }

    @Test("byte ranges need offsets; durations must be positive")
    func segments() {
        var ruleSet = GoldenChannel.ruleSet
        ruleSet.creatives["ad-b"]!.renditions["video"]!.segments[0].byteRange = ByteRange(length: 100)
        ruleSet.creatives["ad-b"]!.renditions["audio"]!.segments[0].byteRange = ByteRange(length: 100, offset: 0)
        ruleSet.slate.renditions["video"]!.segments[0].duration = .zero
        ruleSet.slate.renditions["audio"]!.segments[0].duration = .zero
        let issues = ruleSet.validate(renditions: Self.renditions, targetDuration: 6).map(\.description)
        #expect(issues == [
            #"creatives["ad-b"].renditions["video"].segments[0]: byte range 100 needs an explicit offset"#,
            #"slate.renditions["audio"].segments[0]: EXTINF 0.000 must be positive"#,
            #"slate.renditions["video"].segments[0]: EXTINF 0.000 must be positive"#,
        ])
    }
}
