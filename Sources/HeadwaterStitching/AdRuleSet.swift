public import HeadwaterHLS

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

    /// The request headers the rules look at, lower-case (`user-agent` for a condition on
    /// `header.user-agent`). The session layer copies exactly these from the request that starts a
    /// session into its targeting, as `header.<name>`, so that rules can match on them.
    public var headerNames: Set<String> {
        var names = Set<String>()
        for rule in rules {
            for key in rule.conditions.keys where key.hasPrefix(AdRule.headerPrefix) {
                names.insert(String(key.dropFirst(AdRule.headerPrefix.count)))
            }
        }
        return names
    }

    /// The longest ``FrequencyCap/period`` of the pods, `nil` when no pod is capped.
    ///
    /// A decision under caps counts the session's shows in the earlier breaks of the period of this
    /// length that contains the break (see ``SessionDecisions``). So a channel keeps in its
    /// ``BreakLog`` every break that started within this long before the start of the oldest break
    /// its windows still show — taking the longest over the current rule set and every version its
    /// retained breaks pin — and the rule sets those breaks pin. Render cost grows with the breaks of
    /// one such period, never with the channel's history.
    public var longestCapPeriod: HLSDuration? { pods.compactMap(\.cap?.period).max() }
}

/// An ordered list of ads played back to back in one break.
public struct Pod: Sendable, Hashable, Identifiable {
    public var id: String
    public var ads: [Ad]
    /// Relative weight in the rotation among eligible pods (≥ 1).
    public var weight: Int
    /// Shown to one session at most so many times per period; `nil` for no limit.
    public var cap: FrequencyCap?

    public init(id: String, ads: [Ad], weight: Int = 1, cap: FrequencyCap? = nil) {
        self.id = id
        self.ads = ads
        self.weight = weight
        self.cap = cap
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

/// A per-session frequency cap: a pod is shown to one session at most ``count`` times per period of
/// ``period``. Periods are aligned on the Unix epoch (they start at whole multiples of ``period``
/// since 1970-01-01T00:00:00Z; a 86400 s period is a UTC day), so every node puts a break in the same
/// period without talking to the others, and nothing about a session is stored: the count is
/// recomputed from the break log (``SessionDecisions``).
public struct FrequencyCap: Sendable, Hashable {
    /// Shows allowed per period (≥ 1).
    public var count: Int
    /// Whole seconds, from 1 s to ``longestPeriod``, dividing the longest cap period of its rule set.
    public var period: HLSDuration

    /// Caps look back at most one UTC day: a day of breaks bounds the cost of a decision.
    public static let longestPeriod = HLSDuration.seconds(86_400)

    public init(count: Int, per period: HLSDuration) {
        self.count = count
        self.period = period
    }

    /// The start of the period that contains `date`.
    public func periodStart(containing date: ProgramDateTime) -> ProgramDateTime {
        Self.periodStart(containing: date, period: period)
    }

    static func periodStart(containing date: ProgramDateTime, period: HLSDuration) -> ProgramDateTime {
        let length = max(1, period.microseconds / 1000)
        let milliseconds = date.millisecondsSinceEpoch
        let remainder = milliseconds % length
        let start = milliseconds - (remainder < 0 ? remainder + length : remainder)
        return ProgramDateTime(millisecondsSinceEpoch: start)
    }
}

/// Which pods a viewer may get: every condition must hold (an empty rule matches everyone).
///
/// Conditions are on the session's targeting attributes: query parameters of the request that
/// started the session (`device`, `geo`, `tier`, …), `channel` (set by the session layer), and
/// `header.<lower-case-name>` for request headers (the session layer copies those named by
/// ``AdRuleSet/headerNames``). ``hours`` is evaluated on the break's start date. All of it is a pure
/// function of the session and the break, so every node and every reload decides alike.
public struct AdRule: Sendable, Hashable, Identifiable {
    public var id: String
    /// Targeting key → accepted values (e.g. `device: [tv]`). A viewer without the key does not match.
    /// A value containing `*` is a pattern: `*` stands for any run of characters (`*AppleTV*`);
    /// other values must match exactly (case-sensitive).
    public var conditions: [String: Set<String>]
    /// UTC hours of the break's start date at which the rule applies; empty for any time.
    public var hours: [HourRange]
    /// The pods this rule rotates among, by id.
    public var podIDs: [String]

    /// Targeting keys with this prefix hold request headers.
    public static let headerPrefix = "header."

    public init(id: String, conditions: [String: Set<String>] = [:], hours: [HourRange] = [], podIDs: [String]) {
        self.id = id
        self.conditions = conditions
        self.hours = hours
        self.podIDs = podIDs
    }

    /// Whether `targeting` satisfies every targeting condition (``hours`` aside).
    public func matches(_ targeting: [String: String]) -> Bool {
        conditions.allSatisfy { key, accepted in
            guard let value = targeting[key] else { return false }
            return accepted.contains(value) || accepted.contains { $0.contains("*") && Self.matches(value, pattern: $0) }
        }
    }

    /// Whether `targeting` satisfies every condition for a break that starts at `date`.
    public func matches(_ targeting: [String: String], at date: ProgramDateTime) -> Bool {
        (hours.isEmpty || hours.contains { $0.contains(date) }) && matches(targeting)
    }

    /// `*` matches any run of bytes, everything else itself: the classic linear-backtracking glob.
    static func matches(_ value: String, pattern: String) -> Bool {
        let text = Array(value.utf8)
        let glob = Array(pattern.utf8)
        let star = UInt8(ascii: "*")
        var (t, g) = (0, 0)
        var resume: (glob: Int, text: Int)?
        while t < text.count {
            if g < glob.count, glob[g] == star {
                resume = (g + 1, t)
                g += 1
            } else if g < glob.count, glob[g] == text[t] {
                g += 1
                t += 1
            } else if let point = resume {
                g = point.glob
                t = point.text + 1
                resume = (point.glob, point.text + 1)
            } else {
                return false
            }
        }
        while g < glob.count, glob[g] == star { g += 1 }
        return g == glob.count
    }
}

/// A range of UTC hours, `start` inclusive to `end` exclusive: `06-22` is 06:00:00.000 to
/// 21:59:59.999; `22-06` wraps past midnight (22:00 to 05:59:59.999); `00-24` is the whole day.
public struct HourRange: Sendable, Hashable, CustomStringConvertible {
    /// 0–23.
    public var start: Int
    /// 1–24, different from `start`; below it, the range wraps past midnight.
    public var end: Int

    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    /// Parses `HH-HH` (one or two digits each): `06-22`, `22-06`, `0-24`. Ranges are checked by
    /// ``AdRuleSet/validate(renditions:targetDuration:maximumSegmentDuration:)``.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2,
            parts.allSatisfy({ (1...2).contains($0.utf8.count) && $0.utf8.allSatisfy { (48...57).contains($0) } }),
            let start = Int(parts[0]), let end = Int(parts[1])
        else { return nil }
        self.init(start: start, end: end)
    }

    /// Whether the UTC hour of `date` is in the range.
    public func contains(_ date: ProgramDateTime) -> Bool {
        let day: Int64 = 86_400_000
        let remainder = date.millisecondsSinceEpoch % day
        let hour = Int((remainder < 0 ? remainder + day : remainder) / 3_600_000)
        return start < end ? (start <= hour && hour < end) : (hour >= start || hour < end)
    }

    public var description: String {
        func twoDigits(_ value: Int) -> String { value < 10 && value >= 0 ? "0\(value)" : "\(value)" }
        return "\(twoDigits(start))-\(twoDigits(end))"
    }
}
