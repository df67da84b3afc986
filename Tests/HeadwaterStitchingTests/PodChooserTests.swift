import HeadwaterHLS
import HeadwaterStitching
import Testing

@Suite("Pod chooser")
struct PodChooserTests {
    static let ruleSet = GoldenChannel.ruleSet

    static func choose(_ session: String, _ breakID: String = "b", targeting: [String: String] = ["device": "tv"], ruleSet: AdRuleSet = ruleSet, planned: HLSDuration = .seconds(60)) -> PodDecision {
        PodChooser.choose(
            sessionID: session, targeting: targeting, breakID: breakID, startDate: GoldenChannel.firstDate,
            plannedDuration: planned, ruleSet: ruleSet)
    }

    @Test("the first matching rule gives the eligible pods; no match means slate only")
    func rules() {
        #expect(Self.choose("s", targeting: ["device": "tv"]).podID == "pod-tv")
        #expect(Self.choose("s", targeting: ["device": "phone"]).podID == "pod-phone")
        #expect(Self.choose("s", targeting: [:]).podID == "pod-phone")
        var onlyTV = Self.ruleSet
        onlyTV.rules.removeLast()
        let none = Self.choose("s", targeting: ["device": "phone"], ruleSet: onlyTV)
        #expect(none.podID == nil && none.ads.isEmpty && none.ruleID == nil)
    }

    @Test("same inputs, same pod; the rotation spreads sessions over pods by weight")
    func rotation() {
        var ruleSet = Self.ruleSet
        ruleSet.pods = (0..<3).map { Pod(id: "p\($0)", ads: [.init(id: "x", creativeID: "ad-b")], weight: $0 == 2 ? 2 : 1) }
        ruleSet.rules = [AdRule(id: "all", podIDs: ["p0", "p1", "p2"])]
        var counts: [String: Int] = [:]
        for number in 0..<4000 {
            let decision = Self.choose("session-\(number)", ruleSet: ruleSet)
            #expect(decision == Self.choose("session-\(number)", ruleSet: ruleSet))
            counts[decision.podID!, default: 0] += 1
        }
        // Weights 1:1:2 → about 1000, 1000, 2000.
        #expect((850...1150).contains(counts["p0"]!) && (850...1150).contains(counts["p1"]!), "\(counts)")
        #expect((1800...2200).contains(counts["p2"]!), "\(counts)")
    }

    @Test("the decision depends on the break and the pinned version, nothing else")
    func inputs() {
        var ruleSet = Self.ruleSet
        ruleSet.pods = (0..<8).map { Pod(id: "p\($0)", ads: [.init(id: "x", creativeID: "ad-b")]) }
        ruleSet.rules = [AdRule(id: "all", podIDs: ruleSet.pods.map(\.id))]
        var next = ruleSet
        next.version = 2
        let sessions = (0..<64).map { "session-\($0)" }
        let byBreak = sessions.filter { Self.choose($0, "b1", ruleSet: ruleSet).podID != Self.choose($0, "b2", ruleSet: ruleSet).podID }
        let byVersion = sessions.filter { Self.choose($0, ruleSet: ruleSet).podID != Self.choose($0, ruleSet: next).podID }
        #expect(byBreak.count > 32 && byVersion.count > 32)
    }

    @Test("pods that fit the planned duration are preferred; otherwise the longer ones still play, cut")
    func fitting() {
        var ruleSet = Self.ruleSet
        ruleSet.rules = [AdRule(id: "all", podIDs: ["pod-tv", "pod-phone"])]  // 25 s and 10 s
        for number in 0..<50 {
            #expect(Self.choose("s\(number)", ruleSet: ruleSet, planned: .seconds(12)).podID == "pod-phone")
        }
        let both = Set((0..<50).map { Self.choose("s\($0)", ruleSet: ruleSet, planned: .seconds(5)).podID })
        #expect(both == ["pod-tv", "pod-phone"])
    }

    @Test("a known decision: the hash is a wire format across releases and nodes")
    func stable() {
        // If this changes, every viewer's ads change on upgrade: only change it on purpose.
        var ruleSet = Self.ruleSet
        ruleSet.pods = (0..<8).map { Pod(id: "p\($0)", ads: []) }
        ruleSet.rules = [AdRule(id: "all", podIDs: ruleSet.pods.map(\.id))]
        let picks = (0..<8).map { Self.choose("session-\($0)", ruleSet: ruleSet).podID! }
        #expect(picks == Self.expectedPicks, "\(picks)")
    }

    static let expectedPicks = ["p2", "p1", "p1", "p6", "p3", "p4", "p0", "p2"]
}
