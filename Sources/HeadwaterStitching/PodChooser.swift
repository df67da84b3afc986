public import HeadwaterHLS

/// What a viewer gets in one break: the pod's ads in order (then slate to the end of the break).
public struct PodDecision: Sendable, Hashable {
    /// The rule-set version the decision was made under (the one the break pinned).
    public var ruleSetVersion: UInt64
    /// The matching rule, `nil` when none matched (slate only).
    public var ruleID: String?
    /// The chosen pod, `nil` for slate only.
    public var podID: String?
    public var ads: [Pod.Ad]
    /// Eligible pods left out because the session had reached their frequency cap.
    public var cappedPodIDs: [String]

    public init(ruleSetVersion: UInt64, ruleID: String?, podID: String?, ads: [Pod.Ad], cappedPodIDs: [String] = []) {
        self.ruleSetVersion = ruleSetVersion
        self.ruleID = ruleID
        self.podID = podID
        self.ads = ads
        self.cappedPodIDs = cappedPodIDs
    }
}

/// Chooses a viewer's pod for a break: a pure function of (session, break, the session's earlier
/// decisions that frequency caps count, pinned rule set), so every node, every rendition and every
/// reload computes the same decision without storing it (DESIGN "Data flow"; invariant 7).
///
/// 1. The first rule (in order) whose conditions match the viewer's targeting, and whose hours
///    contain the break's start date, names the eligible pods; no match means slate only.
/// 2. Pods whose frequency cap the session has reached (``ShownPods``) are left out; if that leaves
///    none, slate only.
/// 3. Pods no longer than the break's planned duration are preferred; if none fits, all remaining
///    pods stay candidates (the stitcher cuts the pod at the break's end).
/// 4. The weighted rotation index is ``StableHash`` of (session id, break id, rule-set version).
///
/// ``SessionDecisions`` supplies the shows that caps count, from the break log.
public enum PodChooser {
    public static func choose(
        session: ViewerSession, break adBreak: AdBreak, ruleSet: AdRuleSet, shown: ShownPods = ShownPods()
    ) -> PodDecision {
        choose(
            sessionID: session.id, targeting: session.targeting, breakID: adBreak.id, startDate: adBreak.startDate,
            plannedDuration: adBreak.plannedDuration, ruleSet: ruleSet, shown: shown)
    }

    public static func choose(
        sessionID: String,
        targeting: [String: String],
        breakID: String,
        startDate: ProgramDateTime,
        plannedDuration: HLSDuration,
        ruleSet: AdRuleSet,
        shown: ShownPods = ShownPods()
    ) -> PodDecision {
        guard let rule = ruleSet.rules.first(where: { $0.matches(targeting, at: startDate) }) else {
            return PodDecision(ruleSetVersion: ruleSet.version, ruleID: nil, podID: nil, ads: [])
        }
        var capped: [String] = []
        let eligible = rule.podIDs.compactMap(ruleSet.pod(id:)).filter { pod in
            guard let cap = pod.cap else { return true }
            let reached = shown.count(of: pod.id, since: cap.periodStart(containing: startDate), upTo: cap.count) >= cap.count
            if reached { capped.append(pod.id) }
            return !reached
        }
        let fitting = eligible.count < 2 ? [] : eligible.filter { duration(of: $0, in: ruleSet) <= plannedDuration }
        let candidates = fitting.isEmpty ? eligible : fitting
        let totalWeight = candidates.reduce(UInt64(0)) { $0 + UInt64(max(1, $1.weight)) }
        guard totalWeight > 0 else {
            return PodDecision(ruleSetVersion: ruleSet.version, ruleID: rule.id, podID: nil, ads: [], cappedPodIDs: capped)
        }
        var hash = StableHash()
        hash.combine(sessionID)
        hash.combine(breakID)
        hash.combine(ruleSet.version)
        var ticket = hash.value % totalWeight
        for pod in candidates {
            let weight = UInt64(max(1, pod.weight))
            if ticket < weight {
                return PodDecision(
                    ruleSetVersion: ruleSet.version, ruleID: rule.id, podID: pod.id, ads: pod.ads, cappedPodIDs: capped)
            }
            ticket -= weight
        }
        preconditionFailure("ticket below the total weight always lands on a pod")
    }

    /// Σ of the pod's creative durations (unknown creatives count as zero; validation rejects them).
    static func duration(of pod: Pod, in ruleSet: AdRuleSet) -> HLSDuration {
        pod.ads.reduce(.zero) { $0 + (ruleSet.creatives[$1.creativeID]?.duration ?? .zero) }
    }
}

/// The pods a session was shown in earlier breaks, with the breaks' start dates, in break order:
/// what frequency caps count.
public struct ShownPods: Sendable, Hashable {
    private var dates: [String: [ProgramDateTime]] = [:]

    public init() {}

    /// Records the decision for a break that started at `date` (after every earlier break).
    public mutating func record(_ decision: PodDecision, at date: ProgramDateTime) {
        if let podID = decision.podID { dates[podID, default: []].append(date) }
    }

    /// How many times `podID` was shown in breaks that started at or after `start`, counting no
    /// further than `limit`: O(limit).
    public func count(of podID: String, since start: ProgramDateTime, upTo limit: Int) -> Int {
        guard let shows = dates[podID] else { return 0 }
        var count = 0
        for date in shows.reversed() {
            guard date >= start, count < limit else { break }
            count += 1
        }
        return count
    }
}

/// One session's pod decisions for the breaks of a break log, frequency caps included, memoized:
/// what ``Stitcher`` uses (once per render), and what anything else that needs to know what a session
/// was shown should use, so that it agrees with the playlists.
///
/// ## Frequency caps without a session store
/// A pod capped at N per period P is shown to a session at most N times in each epoch-aligned period
/// of length P. The decision for break `b` under a rule set with caps replays the session's
/// decisions for the breaks of the *horizon* — the breaks before `b` back to the later of the session's
/// start and the start of the period of the rule set's ``AdRuleSet/longestCapPeriod`` containing `b`
/// — in order, each with the shows before it, and then decides `b`. Validation makes every cap period
/// of a rule set divide its longest, so each cap period containing `b` lies inside that horizon, and
/// the replay decides those breaks exactly as their own playlists did while they pinned rule sets
/// with the same longest period. The decision for `b` is therefore a pure function of the session,
/// `b`, the breaks of its horizon and their pinned rule sets: it never changes as long as the break
/// log keeps those breaks (``AdRuleSet/longestCapPeriod`` says how long), on any node.
///
/// Where breaks of one horizon pin rule sets of different longest cap periods (a reload changed the
/// caps), the replay counts the earlier breaks from the newer horizon: decisions still never change,
/// but in the period of that reload a cap can be off by the shows counted differently.
///
/// Cost: O(breaks in one horizon) per horizon, once per render; rule sets without caps cost nothing
/// beyond the decision itself.
public struct SessionDecisions: Sendable {
    public let log: BreakLog
    public let session: ViewerSession
    public let ruleSets: [UInt64: AdRuleSet]
    private var decisions: [Int: PodDecision?] = [:]
    /// Replays by (first break index, horizon start in ms).
    private var replays: [Horizon: Replay] = [:]

    private struct Horizon: Hashable {
        var first: Int
        var start: Int64
    }

    private struct Replay: Sendable {
        var next: Int
        var shown = ShownPods()
        var decisions: [Int: PodDecision] = [:]
    }

    public init(log: BreakLog, session: ViewerSession, ruleSets: [UInt64: AdRuleSet]) {
        self.log = log
        self.session = session
        self.ruleSets = ruleSets
    }

    /// The decision for the break with `id`; `nil` when the log has no such break or the break started
    /// before the session (the session sees the channel's content there).
    public mutating func decision(forBreak id: String) throws(StitchingError) -> PodDecision? {
        guard let index = log.breaks.firstIndex(where: { $0.id == id }) else { return nil }
        return try decision(at: index)
    }

    /// The decision for `log.breaks[index]`; `nil` when it started before the session.
    public mutating func decision(at index: Int) throws(StitchingError) -> PodDecision? {
        if let known = decisions[index] { return known }
        let adBreak = log.breaks[index]
        let decision: PodDecision?
        if adBreak.startDate < session.startDate {
            decision = nil
        } else {
            let ruleSet = try ruleSet(for: adBreak)
            if let longest = ruleSet.longestCapPeriod {
                let start = max(session.startDate, FrequencyCap.periodStart(containing: adBreak.startDate, period: longest))
                decision = try replay(through: index, from: start)
            } else {
                decision = PodChooser.choose(session: session, break: adBreak, ruleSet: ruleSet)
            }
        }
        decisions[index] = decision
        return decision
    }

    /// Decides the breaks from the horizon's first through `index`, in order, counting shows.
    private mutating func replay(through index: Int, from start: ProgramDateTime) throws(StitchingError) -> PodDecision {
        // The horizon: the contiguous earlier breaks that started at or after `start`.
        var first = index
        while first > 0, log.breaks[first - 1].startDate >= start { first -= 1 }
        let key = Horizon(first: first, start: start.millisecondsSinceEpoch)
        var replay = replays[key] ?? Replay(next: first)
        defer { replays[key] = replay }
        while replay.next <= index {
            let adBreak = log.breaks[replay.next]
            let decision = PodChooser.choose(
                session: session, break: adBreak, ruleSet: try ruleSet(for: adBreak), shown: replay.shown)
            replay.shown.record(decision, at: adBreak.startDate)
            replay.decisions[replay.next] = decision
            replay.next += 1
        }
        return replay.decisions[index]!
    }

    private func ruleSet(for adBreak: AdBreak) throws(StitchingError) -> AdRuleSet {
        guard let ruleSet = ruleSets[adBreak.ruleSetVersion] else {
            throw .missingRuleSet(version: adBreak.ruleSetVersion, breakID: adBreak.id)
        }
        return ruleSet
    }
}
