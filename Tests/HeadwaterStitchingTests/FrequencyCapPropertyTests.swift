import HeadwaterHLS
import HeadwaterStitching
import HeadwaterTesting
import Testing

/// Frequency caps over generated live channels: frequent breaks, a window that slides, a break log
/// pruned to the longest cap period the way a channel keeps it, configuration reloads, viewers who
/// join at random times. Every decision is recorded the first time it is seen and must never
/// change, on any later render; a second node with the channel's whole history must agree; the ads
/// each rendered playlist announces must be the recorded pod's; and a capped pod must never be
/// shown to a session more than its count per period.
@Suite("Frequency caps across renders")
struct FrequencyCapPropertyTests {
    static let shards = 4
    static let seedsPerShard = 5
    static let steps = 400

    @Test("decisions never change as the window slides; a capped pod is shown at most N times per period", .cpuBound, arguments: 0..<shards)
    func capsHold(shard: Int) {
        var totals = CapRun.Coverage()
        for seed in Self.seeds(shard, salt: 0) {
            var run = CapRun(seed: seed, changingPeriods: false)
            if let failure = run.run(steps: Self.steps) ?? run.checkCounts() {
                Issue.record("seed \(seed) (replay with HEADWATER_SEED=\(seed)): \(failure)")
            }
            totals.add(run.coverage)
        }
        // The caps must actually bind, and leave viewers of the capped-only rule with slate.
        #expect(totals.decisions > 500 && totals.capped > 50 && totals.slateByCap > 10 && totals.reloads > 5, "\(totals)")
    }

    @Test("reloads that change the cap periods never change a decision", .cpuBound, arguments: 0..<2)
    func reloadsChangingPeriods(shard: Int) {
        var totals = CapRun.Coverage()
        for seed in Self.seeds(shard, salt: 0xCA9) {
            var run = CapRun(seed: seed, changingPeriods: true)
            if let failure = run.run(steps: Self.steps) {
                Issue.record("seed \(seed) (replay with HEADWATER_SEED=\(seed)): \(failure)")
            }
            totals.add(run.coverage)
        }
        #expect(totals.capped > 20 && totals.reloads > 5, "\(totals)")
    }

    static func seeds(_ shard: Int, salt: UInt64) -> [UInt64] {
        PropertySeed.seeds(shards * seedsPerShard)[(shard * seedsPerShard)..<((shard + 1) * seedsPerShard)].map { $0 ^ salt }
    }
}

/// One seed's channel, viewers and what they were shown.
struct CapRun {
    struct Coverage: CustomStringConvertible {
        var decisions = 0
        var capped = 0
        var slateByCap = 0
        var reloads = 0

        mutating func add(_ other: Coverage) {
            decisions += other.decisions
            capped += other.capped
            slateByCap += other.slateByCap
            reloads += other.reloads
        }

        var description: String { "\(decisions) decisions, \(capped) with a pod capped, \(slateByCap) slate by cap, \(reloads) reloads" }
    }

    struct Viewer {
        var session: ViewerSession
        /// By break id: the decision the first time it was seen, with the break's start and pinned version.
        var decisions: [String: (decision: PodDecision, start: ProgramDateTime)] = [:]
    }

    let changingPeriods: Bool
    var random: SeededRandom
    var content = MediaPlaylist(targetDuration: 2, mediaSequence: 1000)
    var log = BreakLog()
    /// Every break ever: what a node that never prunes would have.
    var fullLog = BreakLog()
    var ruleSets: [UInt64: AdRuleSet] = [:]
    var version: UInt64 = 1
    var viewers: [Viewer] = []
    var coverage = Coverage()

    private var nextMSN: UInt64 = 1000
    private var nextDate: ProgramDateTime
    private var dates: [UInt64: ProgramDateTime] = [:]
    private var breakNumber = 0
    private var gap = 2
    private var planned = HLSDuration.zero

    init(seed: UInt64, changingPeriods: Bool) {
        self.changingPeriods = changingPeriods
        random = SeededRandom(seed: seed)
        // Somewhere in 2026, at any millisecond: periods start anywhere relative to the channel.
        nextDate = ProgramDateTime(millisecondsSinceEpoch: 1_767_225_600_000 + Int64(random.int(0...86_400_000)))
        ruleSets[version] = makeRuleSet()
    }

    /// Pods `a` (capped, 1 ad), `b` (capped, 2 ads), `c` (not capped); `tv` viewers rotate among the
    /// capped ones only (slate once both are capped), everyone else among all three.
    mutating func makeRuleSet() -> AdRuleSet {
        func creative(_ id: String) -> Creative {
            var renditions: [String: CreativeRendition] = [:]
            renditions["video"] = CreativeRendition(segments: [
                CreativeSegment(uri: "/ads/v\(version)/\(id)/0.ts", duration: .milliseconds(Int64(random.int(1000...2000))))
            ])
            return Creative(id: id, renditions: renditions)
        }
        let longest: Int64 = changingPeriods ? random.pick([40, 60, 90]) : 60
        let short: Int64 = changingPeriods ? longest / random.pick([1, 2]) : 30
        let creatives = ["a1", "b1", "b2", "c1"].map(creative)
        let pods = [
            Pod(id: "a", ads: [.init(id: "a-1", creativeID: "a1")], weight: random.int(1...3), cap: FrequencyCap(count: 1, per: .seconds(short))),
            Pod(
                id: "b", ads: [.init(id: "b-1", creativeID: "b1"), .init(id: "b-2", creativeID: "b2")], weight: random.int(1...3),
                cap: FrequencyCap(count: 2, per: .seconds(longest))),
            Pod(id: "c", ads: [.init(id: "c-1", creativeID: "c1")], weight: random.int(1...3)),
        ]
        let rules = [
            AdRule(id: "tv", conditions: ["device": ["tv"]], podIDs: ["a", "b"]),
            AdRule(id: "everyone", podIDs: ["a", "b", "c"]),
        ]
        let ruleSet = AdRuleSet(version: version, creatives: creatives, slate: creative("slate"), pods: pods, rules: rules)
        precondition(ruleSet.validate(renditions: ["video"], targetDuration: 2).isEmpty)
        return ruleSet
    }

    mutating func run(steps: Int) -> String? {
        for step in 0..<steps {
            advance()
            if viewers.count < 4, step % 25 == 0 || random.chance(0.02) {
                let targeting: [String: String] = random.chance(0.6) ? ["device": "tv"] : [:]
                viewers.append(Viewer(session: ViewerSession(id: "v\(viewers.count)-\(random.int(0...999_999))", startDate: nextDate, targeting: targeting)))
            }
            for index in viewers.indices where random.chance(0.5) {
                if let failure = check(viewer: index) { return "step \(step), viewer \(viewers[index].session.id): \(failure)" }
            }
        }
        return nil
    }

    /// One more segment; breaks end and start on it; the window slides; the log keeps the longest
    /// cap period of breaks (and the rule sets they pin).
    mutating func advance() {
        let msn = nextMSN
        var segment = MediaSegment(uri: "video/\(msn).ts", duration: .milliseconds(Int64(random.int(1000...2000))))
        if content.segments.isEmpty { segment.tags.programDateTime = nextDate }
        dates[msn] = nextDate
        content.segments.append(segment)
        nextMSN += 1
        nextDate = nextDate.adding(segment.duration)

        if let open = log.openBreak, open.startMediaSequence < msn, dates[msn]!.duration(since: open.startDate) >= planned {
            try! log.endBreak(id: open.id, at: msn, content: content)
            try! fullLog.endBreak(id: open.id, at: msn, content: content)
            gap = random.chance(0.2) ? 0 : random.int(1...5)
        }
        if log.openBreak == nil {
            if gap == 0 {
                breakNumber += 1
                planned = .milliseconds(Int64(random.int(1500...9000)))
                try! log.startBreak(id: "brk\(breakNumber)", at: msn, plannedDuration: planned, ruleSetVersion: version, content: content)
                try! fullLog.startBreak(
                    id: "brk\(breakNumber)", at: msn, plannedDuration: planned, ruleSetVersion: version, content: content)
            } else {
                gap -= 1
            }
        }
        if random.chance(0.03) {
            version += 1
            ruleSets[version] = makeRuleSet()
            coverage.reloads += 1
        }
        if content.segments.count > 10 { content = content.removingSegmentsFromHead(content.segments.count - 10) }

        // What the channel keeps: the breaks the window shows, and those that started within the
        // longest period any cap may have (one day) before the oldest of them — not just the
        // longest of the rule sets in use: a reload may bring a longer one, and its decisions
        // must agree with a node that kept everything.
        let horizon = FrequencyCap.longestPeriod
        let cutoff = oldestShown.adding(HLSDuration(microseconds: -horizon.microseconds))
        var keepFrom = content.effectiveMediaSequence
        if let first = log.breaks.first(where: { $0.startDate >= cutoff }) { keepFrom = min(keepFrom, first.startMediaSequence) }
        log.removeBreaks(endingBefore: keepFrom)
        let pinned = Set(log.breaks.map(\.ruleSetVersion))
        ruleSets = ruleSets.filter { $0.key == version || pinned.contains($0.key) }
    }

    /// The start of the oldest break the window shows, or of the window.
    var oldestShown: ProgramDateTime {
        let first = content.effectiveMediaSequence
        return log.breaks.last(where: { $0.startMediaSequence <= first })?.startDate ?? dates[first]!
    }

    /// Renders the viewer's playlist and checks every decision it can see.
    mutating func check(viewer index: Int) -> String? {
        let session = viewers[index].session
        let playlist: MediaPlaylist
        do {
            playlist = try Stitcher.render(content: content, rendition: "video", breaks: log, session: session, ruleSets: ruleSets)
        } catch {
            return "render failed: \(error)"
        }
        var pruned = SessionDecisions(log: log, session: session, ruleSets: ruleSets)
        var full = SessionDecisions(log: fullLog, session: session, ruleSets: ruleSets)
        for (position, adBreak) in log.breaks.enumerated() where adBreak.startDate >= oldestShown {
            let decision: PodDecision?
            do {
                decision = try pruned.decision(at: position)
                // A node with the whole history decides alike.
                guard try full.decision(forBreak: adBreak.id) == decision else {
                    return "\(adBreak.id): the pruned log decides \(String(describing: decision)), the full history another"
                }
            } catch {
                return "\(adBreak.id): \(error)"
            }
            guard let decision else { continue }
            if let known = viewers[index].decisions[adBreak.id] {
                if known.decision != decision { return "\(adBreak.id) was \(known.decision), now \(decision)" }
            } else {
                viewers[index].decisions[adBreak.id] = (decision, adBreak.startDate)
                coverage.decisions += 1
                if !decision.cappedPodIDs.isEmpty { coverage.capped += 1 }
                if !decision.cappedPodIDs.isEmpty, decision.podID == nil { coverage.slateByCap += 1 }
            }
        }
        // The playlist announces the recorded pod's ads.
        for range in playlist.segments.flatMap(\.tags.dateRanges) where range.class == "com.headwater.ad" {
            let breakID = String(range.id.split(separator: "/")[0])
            guard let known = viewers[index].decisions[breakID] else { return "\(range.id) for a break never decided" }
            guard let adID = range.attributes.string("X-AD-ID"), known.decision.ads.contains(where: { $0.id == adID }) else {
                return "\(range.id) announces \(range.attributes.string("X-AD-ID") ?? "-"), the decision is \(known.decision)"
            }
        }
        return nil
    }

    /// No capped pod shown more than its count in any period (the caps are the same in every version
    /// unless `changingPeriods`).
    func checkCounts() -> String? {
        let caps = Dictionary(uniqueKeysWithValues: ruleSets[version]!.pods.compactMap { pod in pod.cap.map { (pod.id, $0) } })
        for viewer in viewers {
            var counts: [String: Int] = [:]
            for (_, shown) in viewer.decisions {
                guard let podID = shown.decision.podID, let cap = caps[podID] else { continue }
                let key = "\(podID) in the period from \(cap.periodStart(containing: shown.start))"
                counts[key, default: 0] += 1
                if counts[key]! > cap.count { return "\(viewer.session.id) was shown \(key) \(counts[key]!) times, cap \(cap.count)" }
            }
        }
        return nil
    }
}
