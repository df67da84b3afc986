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

    public init(ruleSetVersion: UInt64, ruleID: String?, podID: String?, ads: [Pod.Ad]) {
        self.ruleSetVersion = ruleSetVersion
        self.ruleID = ruleID
        self.podID = podID
        self.ads = ads
    }
}

/// Chooses a viewer's pod for a break: a pure function of (session, break, pinned rule set), so every
/// node, every rendition and every reload computes the same decision without storing it (DESIGN
/// "Data flow"; invariant 7).
///
/// 1. The first rule (in order) whose conditions match the viewer's targeting names the eligible
///    pods; no match means slate only.
/// 2. Pods no longer than the break's planned duration are preferred; if none fits, all eligible
///    pods stay candidates (the stitcher cuts the pod at the break's end).
/// 3. The weighted rotation index is ``StableHash`` of (session id, break id, rule-set version).
///
/// Frequency caps and time-of-day conditions need more inputs (the session's history, the break's
/// wall-clock date); they belong to the rule layer that builds on this.
public enum PodChooser {
    public static func choose(session: ViewerSession, break adBreak: AdBreak, ruleSet: AdRuleSet) -> PodDecision {
        choose(
            sessionID: session.id, targeting: session.targeting, breakID: adBreak.id,
            plannedDuration: adBreak.plannedDuration, ruleSet: ruleSet)
    }

    public static func choose(
        sessionID: String,
        targeting: [String: String],
        breakID: String,
        plannedDuration: HLSDuration,
        ruleSet: AdRuleSet
    ) -> PodDecision {
        guard let rule = ruleSet.rules.first(where: { $0.matches(targeting) }) else {
            return PodDecision(ruleSetVersion: ruleSet.version, ruleID: nil, podID: nil, ads: [])
        }
        let eligible = rule.podIDs.compactMap(ruleSet.pod(id:))
        let fitting = eligible.count < 2 ? [] : eligible.filter { duration(of: $0, in: ruleSet) <= plannedDuration }
        let candidates = fitting.isEmpty ? eligible : fitting
        let totalWeight = candidates.reduce(UInt64(0)) { $0 + UInt64(max(1, $1.weight)) }
        guard totalWeight > 0 else {
            return PodDecision(ruleSetVersion: ruleSet.version, ruleID: rule.id, podID: nil, ads: [])
        }
        var hash = StableHash()
        hash.combine(sessionID)
        hash.combine(breakID)
        hash.combine(ruleSet.version)
        var ticket = hash.value % totalWeight
        for pod in candidates {
            let weight = UInt64(max(1, pod.weight))
            if ticket < weight {
                return PodDecision(ruleSetVersion: ruleSet.version, ruleID: rule.id, podID: pod.id, ads: pod.ads)
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
