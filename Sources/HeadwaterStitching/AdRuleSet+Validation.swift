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
        }
        Self.check(slate, path: "slate", limits: limits, into: &issues)

        func issue(_ path: String, _ message: String) { issues.append(RuleSetIssue(path: path, message)) }
        let badID = "must be a non-empty id without quotes or control characters"
        var podIDs: Set<String> = []
        for (index, pod) in pods.enumerated() {
            let path = "pods[\(index)]"
            if !Self.isQuotable(pod.id) { issue(path + ".id", badID) }
            if !podIDs.insert(pod.id).inserted { issue(path + ".id", "duplicate pod id \(pod.id.debugDescription)") }
            if pod.weight < 1 { issue(path + ".weight", "must be at least 1") }
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
        }
        return issues
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
