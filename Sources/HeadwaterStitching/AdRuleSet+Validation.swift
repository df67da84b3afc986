public import HeadwaterHLS

/// One problem in an ad rule set, located by a key path (`creatives["a"].renditions["audio"].segments[3]`)
/// that the configuration layer maps to its file, key and line.
public struct RuleSetIssue: Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var message: String

    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}

extension AdRuleSet {
    /// Checks that this rule set can be stitched into a channel with these content renditions and this
    /// target duration, and returns every problem (empty = valid). Run it when a configuration is
    /// loaded and refuse the whole configuration on any issue: the stitcher assumes it passed.
    ///
    /// - Every creative (and the slate) has every rendition, with segments, and the same segmentation
    ///   in every rendition (same number of segments, same EXTINFs): a player switching variants, and
    ///   alternate audio, stay aligned with video (invariant 3).
    /// - Every EXTINF is positive and rounds to ≤ `targetDuration` (B1; the stitched playlist keeps
    ///   the content's EXT-X-TARGETDURATION, invariant 4).
    /// - `maximumSegmentDuration`, when given (e.g. the content's nominal segment length): no EXTINF
    ///   above it, so that pods never run ahead of the content they replace.
    /// - Byte ranges carry explicit offsets; ids and URIs are non-empty and fit in a quoted-string.
    /// - Pods name existing creatives and have unique ids; rules name existing pods.
    /// - Tracking URLs are `http(s)://` URLs that fit in a quoted-string, separated by spaces (no
    ///   spaces, quotes, control or non-ASCII characters), with known macros only.
    /// - Frequency caps allow at least one show per period of whole seconds, at most
    ///   ``FrequencyCap/longestPeriod``, and every cap period divides the longest one (so that the
    ///   periods nest, see ``SessionDecisions``).
    /// - Hour ranges are `00`–`23` to `01`–`24`, not empty; targeting keys are letters, digits, `-`,
    ///   `_` and `.`, header keys lower-case, and every condition accepts at least one value.
    public func validate(
        renditions: [String],
        targetDuration: Int,
        maximumSegmentDuration: HLSDuration? = nil
    ) -> [RuleSetIssue] {
        var issues: [RuleSetIssue] = []
        let limits = Limits(renditions: renditions.sorted(), targetDuration: targetDuration, maximum: maximumSegmentDuration)
        for id in creatives.keys.sorted() {
            let creative = creatives[id]!
            let path = "creatives[\(id.debugDescription)]"
            if creative.id != id { issues.append(RuleSetIssue(path: path, "is keyed by a different id than its own")) }
            Self.check(creative, path: path, limits: limits, into: &issues)
            for event in TrackingEvent.allCases {
                for (index, url) in (creative.tracking[event] ?? []).enumerated() {
                    if let problem = TrackingEvent.problem(with: url) {
                        issues.append(RuleSetIssue(path: "\(path).tracking.\(event.rawValue)[\(index)]", problem))
                    }
                }
            }
        }
        Self.check(slate, path: "slate", limits: limits, into: &issues)

        func issue(_ path: String, _ message: String) { issues.append(RuleSetIssue(path: path, message)) }
        let badID = "must be a non-empty id without quotes or control characters"
        var podIDs: Set<String> = []
        let longestCap = pods.compactMap(\.cap?.period).filter(Self.isValidCapPeriod).max()
        for (index, pod) in pods.enumerated() {
            let path = "pods[\(index)]"
            if !Self.isQuotable(pod.id) { issue(path + ".id", badID) }
            if !podIDs.insert(pod.id).inserted { issue(path + ".id", "duplicate pod id \(pod.id.debugDescription)") }
            if pod.weight < 1 { issue(path + ".weight", "must be at least 1") }
            if let cap = pod.cap { Self.check(cap, longest: longestCap, path: path + ".cap", into: &issues) }
            for (number, ad) in pod.ads.enumerated() {
                let adPath = "\(path).ads[\(number)]"
                if !Self.isQuotable(ad.id) { issue(adPath + ".id", badID) }
                if !Self.isQuotable(ad.creativeID) || creatives[ad.creativeID] == nil {
                    issue(adPath + ".creative", "unknown creative \(ad.creativeID.debugDescription)")
                }
            }
        }
        var ruleIDs: Set<String> = []
        for (index, rule) in rules.enumerated() {
            let path = "rules[\(index)]"
            if !ruleIDs.insert(rule.id).inserted { issue(path + ".id", "duplicate rule id \(rule.id.debugDescription)") }
            for (number, podID) in rule.podIDs.enumerated() where !podIDs.contains(podID) {
                issue("\(path).pods[\(number)]", "unknown pod \(podID.debugDescription)")
            }
            for key in rule.conditions.keys.sorted() {
                let conditionPath = "\(path).conditions[\(key.debugDescription)]"
                if let problem = Self.problem(withTargetingKey: key) { issue(conditionPath, problem) }
                if rule.conditions[key]!.isEmpty { issue(conditionPath, "must accept at least one value") }
            }
            for (number, range) in rule.hours.enumerated() {
                if !(0...23).contains(range.start) || !(1...24).contains(range.end) || range.start == range.end {
                    issue(
                        "\(path).hours[\(number)]",
                        "\(range) is not an hour range: HH-HH with a start 00-23 and a different end 01-24 (UTC; 22-06 wraps past midnight, 00-24 is all day)"
                    )
                }
            }
        }
        return issues
    }

    private static func check(_ cap: FrequencyCap, longest: HLSDuration?, path: String, into issues: inout [RuleSetIssue]) {
        if cap.count < 1 {
            issues.append(RuleSetIssue(path: path + ".count", "must be at least 1 (remove the pod from the rules to never show it)"))
        }
        let period = cap.period
        if !isValidCapPeriod(period) {
            issues.append(
                RuleSetIssue(
                    path: path + ".per",
                    "must be a whole number of seconds from 1 to \(FrequencyCap.longestPeriod.microseconds / 1_000_000) (one day), got \(period)"
                ))
        } else if let longest, longest.microseconds % period.microseconds != 0 {
            issues.append(
                RuleSetIssue(
                    path: path + ".per",
                    "\(period.microseconds / 1_000_000) s does not divide the longest cap period \(longest.microseconds / 1_000_000) s; cap periods must nest (e.g. 600, 1800, 3600)"
                ))
        }
    }

    private static func isValidCapPeriod(_ period: HLSDuration) -> Bool {
        period.microseconds > 0 && period.microseconds % 1_000_000 == 0 && period <= FrequencyCap.longestPeriod
    }

    /// Why `key` cannot be a targeting key, `nil` when it can.
    static func problem(withTargetingKey key: String) -> String? {
        let allowed = key.utf8.allSatisfy { c in
            (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 45 || c == 95 || c == 46
        }
        guard !key.isEmpty, allowed else { return "targeting keys are letters, digits, '-', '_' and '.'" }
        if key.hasPrefix(AdRule.headerPrefix) {
            let name = key.dropFirst(AdRule.headerPrefix.count)
            if name.isEmpty { return "names no header (write header.<name>, e.g. header.user-agent)" }
            if name.utf8.contains(where: { $0 >= 65 && $0 <= 90 }) {
                return "header names are matched lower-case: write \(AdRule.headerPrefix)\(name.lowercased())"
            }
        }
        return nil
    }

    private struct Limits {
        var renditions: [String]
        var targetDuration: Int
        var maximum: HLSDuration?
    }

    private static func check(_ creative: Creative, path: String, limits: Limits, into issues: inout [RuleSetIssue]) {
        if !isQuotable(creative.id) {
            issues.append(RuleSetIssue(path: path + ".id", "must be a non-empty id without quotes or control characters"))
        }
        var reference: (name: String, durations: [HLSDuration])?
        for name in limits.renditions {
            let renditionPath = "\(path).renditions[\(name.debugDescription)]"
            guard let media = creative.renditions[name] else {
                issues.append(RuleSetIssue(path: path + ".renditions", "missing rendition \(name.debugDescription)"))
                continue
            }
            if media.segments.isEmpty {
                issues.append(RuleSetIssue(path: renditionPath, "has no segments"))
                continue
            }
            for (index, segment) in media.segments.enumerated() {
                let segmentPath = "\(renditionPath).segments[\(index)]"
                if segment.uri.isEmpty || !isQuotable(segment.uri) {
                    issues.append(RuleSetIssue(path: segmentPath, "has an empty or unwritable URI"))
                }
                if segment.duration <= .zero {
                    issues.append(RuleSetIssue(path: segmentPath, "EXTINF \(segment.duration) must be positive"))
                } else if segment.duration.roundedSeconds > Int64(limits.targetDuration) {
                    issues.append(
                        RuleSetIssue(
                            path: segmentPath,
                            "EXTINF \(segment.duration) rounds to \(segment.duration.roundedSeconds) s, above the channel's target duration \(limits.targetDuration) s"
                        ))
                } else if let maximum = limits.maximum, segment.duration > maximum {
                    issues.append(
                        RuleSetIssue(path: segmentPath, "EXTINF \(segment.duration) is longer than the content's segments (\(maximum))"))
                }
                if let range = segment.byteRange, range.offset == nil {
                    issues.append(RuleSetIssue(path: segmentPath, "byte range \(range) needs an explicit offset"))
                }
            }
            let durations = media.segments.map(\.duration)
            if let reference {
                if durations != reference.durations {
                    issues.append(
                        RuleSetIssue(
                            path: renditionPath,
                            "segmentation differs from rendition \(reference.name.debugDescription) (\(describe(durations)) vs \(describe(reference.durations))); every rendition must have the same segment durations"
                        ))
                }
            } else {
                reference = (name, durations)
            }
        }
    }

    private static func describe(_ durations: [HLSDuration]) -> String {
        let shown = durations.prefix(6).map(\.description).joined(separator: ", ")
        return "\(durations.count) segments: \(shown)\(durations.count > 6 ? ", …" : "")"
    }

    /// Fits in a quoted-string (no `"`, CR, LF, other control characters) and is not empty.
    static func isQuotable(_ text: String) -> Bool {
        !text.isEmpty && !text.utf8.contains { $0 == UInt8(ascii: "\"") || $0 < 0x20 || $0 == 0x7F }
    }
}
