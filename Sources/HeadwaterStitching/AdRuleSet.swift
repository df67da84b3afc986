/// One version of a channel's ad configuration: creatives, the slate, pods, and the rules that pick
/// a pod for a viewer. A value: a configuration reload makes a new version, and every break pins the
/// version that was current when it started (``AdBreak/ruleSetVersion``), so a viewer's decision for
/// a break never changes mid-break, even if the ads are reconfigured (DESIGN invariant 7).
///
/// The stitcher reads creatives and the slate from the *pinned* version too: a creative's URIs for a
/// break already on screen never change under a reload. Keep every version that a break still in
/// some window pins (the break log says which).
public struct AdRuleSet: Sendable, Hashable {
    /// Identifies this version; increases with every reload.
    public var version: UInt64
    /// By creative id.
    public var creatives: [String: Creative]
    /// Fills a break after the pod (and all of a break when no pod is eligible). Looped as needed.
    public var slate: Creative
    public var pods: [Pod]
    /// In priority order: the first rule whose conditions match the viewer gives the eligible pods.
    public var rules: [AdRule]

    public init(version: UInt64, creatives: [Creative], slate: Creative, pods: [Pod], rules: [AdRule]) {
        self.version = version
        self.creatives = Dictionary(creatives.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        self.slate = slate
        self.pods = pods
        self.rules = rules
    }

    /// The pod with `id`.
    public func pod(id: String) -> Pod? { pods.first { $0.id == id } }
}

/// An ordered list of ads played back to back in one break.
public struct Pod: Sendable, Hashable, Identifiable {
    public var id: String
    public var ads: [Ad]
    /// Relative weight in the rotation among eligible pods (≥ 1).
    public var weight: Int

    public init(id: String, ads: [Ad], weight: Int = 1) {
        self.id = id
        self.ads = ads
        self.weight = weight
    }

    /// One ad of a pod: what the viewer is shown (`creativeID`) under an ad id (written as
    /// `X-AD-ID`, the campaign-side identity; several ads may share a creative).
    public struct Ad: Sendable, Hashable {
        public var id: String
        public var creativeID: String

        public init(id: String, creativeID: String) {
            self.id = id
            self.creativeID = creativeID
        }
    }
}

/// Which pods a viewer may get: every condition must hold (an empty rule matches everyone).
public struct AdRule: Sendable, Hashable, Identifiable {
    public var id: String
    /// Targeting key → accepted values (e.g. `device: [tv]`). A viewer without the key does not match.
    public var conditions: [String: Set<String>]
    /// The pods this rule rotates among, by id.
    public var podIDs: [String]

    public init(id: String, conditions: [String: Set<String>] = [:], podIDs: [String]) {
        self.id = id
        self.conditions = conditions
        self.podIDs = podIDs
    }

    /// Whether `targeting` satisfies every condition.
    public func matches(_ targeting: [String: String]) -> Bool {
        conditions.allSatisfy { key, accepted in targeting[key].map(accepted.contains) ?? false }
    }
}
