import HeadwaterHLS
import HeadwaterStitching
import Testing

/// Conditions on headers, channel and hours; frequency caps in the chooser; tracking URLs in the ad
/// date ranges; and the validation of each.
@Suite("Ad rule features")
struct AdRuleFeatureTests {
    /// 2026-03-01T00:00:00Z.
    static let midnight = ProgramDateTime(millisecondsSinceEpoch: 1_772_323_200_000)

    static func at(hour: Int64, minute: Int64 = 0, millisecond: Int64 = 0) -> ProgramDateTime {
        ProgramDateTime(millisecondsSinceEpoch: midnight.millisecondsSinceEpoch + (hour * 60 + minute) * 60_000 + millisecond)
    }

    static func choose(
        _ ruleSet: AdRuleSet, targeting: [String: String] = [:], session: String = "s", breakID: String = "b",
        at date: ProgramDateTime = at(hour: 12), shown: ShownPods = ShownPods()
    ) -> PodDecision {
        PodChooser.choose(
            sessionID: session, targeting: targeting, breakID: breakID, startDate: date, plannedDuration: .seconds(60),
            ruleSet: ruleSet, shown: shown)
    }

    /// The golden rule set with these rules (its pods: `pod-tv`, `pod-phone`).
    static func ruleSet(_ rules: [AdRule]) -> AdRuleSet {
        var ruleSet = GoldenChannel.ruleSet
        ruleSet.rules = rules
        return ruleSet
    }

    // MARK: Conditions

    @Test("header conditions are targeting keys header.<name>; headerNames lists the names the rules use")
    func headers() {
        let ruleSet = Self.ruleSet([
            AdRule(id: "apple", conditions: ["header.user-agent": ["*AppleTV*", "Roku/DVP-9.10"]], podIDs: ["pod-tv"]),
            AdRule(id: "lang", conditions: ["header.accept-language": ["fr"], "device": ["phone"]], podIDs: ["pod-tv"]),
            AdRule(id: "everyone", podIDs: ["pod-phone"]),
        ])
        #expect(ruleSet.headerNames == ["user-agent", "accept-language"])
        #expect(Self.ruleSet([AdRule(id: "x", conditions: ["device": ["tv"]], podIDs: [])]).headerNames.isEmpty)
        let appleTV = ["header.user-agent": "AppleCoreMedia/1.0 (AppleTV; tvOS 17)"]
        #expect(Self.choose(ruleSet, targeting: appleTV).ruleID == "apple")
        #expect(Self.choose(ruleSet, targeting: ["header.user-agent": "Roku/DVP-9.10"]).ruleID == "apple")
        #expect(Self.choose(ruleSet, targeting: ["header.user-agent": "Roku/DVP-9.1"]).ruleID == "everyone")
        // Patterns are case-sensitive, like exact values.
        #expect(Self.choose(ruleSet, targeting: ["header.user-agent": "appletv"]).ruleID == "everyone")
        // Every condition of a rule must hold.
        #expect(Self.choose(ruleSet, targeting: ["header.accept-language": "fr"]).ruleID == "everyone")
        #expect(Self.choose(ruleSet, targeting: ["header.accept-language": "fr", "device": "phone"]).ruleID == "lang")
    }

    @Test("'*' patterns", arguments: [
        ("*", "", true), ("*", "abc", true), ("a*", "abc", true), ("*c", "abc", true), ("a*c", "ac", true),
        ("*b*", "abc", true), ("a*b*c", "aXbYbZc", true), ("a*c", "abd", false), ("*x*", "abc", false),
        ("ab", "abc", false), ("a**c", "abbc", true), ("*ab", "aab", true),
    ])
    func patterns(pattern: String, value: String, matches: Bool) {
        let rule = AdRule(id: "r", conditions: ["k": [pattern]], podIDs: [])
        #expect(rule.matches(["k": value]) == matches, "\(pattern) ~ \(value)")
    }

    @Test("channel is a targeting key like any other: the session layer sets it")
    func channel() {
        let ruleSet = Self.ruleSet([
            AdRule(id: "news", conditions: ["channel": ["news", "sports"]], podIDs: ["pod-tv"]),
            AdRule(id: "everyone", podIDs: ["pod-phone"]),
        ])
        #expect(Self.choose(ruleSet, targeting: ["channel": "sports"]).podID == "pod-tv")
        #expect(Self.choose(ruleSet, targeting: ["channel": "demo"]).podID == "pod-phone")
    }

    @Test("hours are UTC, start inclusive, end exclusive, evaluated on the break's start date; 22-06 wraps")
    func hours() throws {
        let day = try #require(HourRange("06-22"))
        let night = try #require(HourRange("22-06"))
        let always = try #require(HourRange("00-24"))
        #expect(day == HourRange(start: 6, end: 22) && night.description == "22-06" && HourRange("0-24") == always)
        for text in ["6", "06-", "-06", "06-22-23", "a6-22", "006-22", "06:00-22:00", ""] { #expect(HourRange(text) == nil, "\(text)") }
        #expect(!day.contains(Self.at(hour: 5, minute: 59, millisecond: 59_999)))
        #expect(day.contains(Self.at(hour: 6)) && day.contains(Self.at(hour: 21, minute: 59)))
        #expect(!day.contains(Self.at(hour: 22)))
        #expect(night.contains(Self.at(hour: 23)) && night.contains(Self.at(hour: 0)) && night.contains(Self.at(hour: 5, minute: 59)))
        #expect(!night.contains(Self.at(hour: 6)) && !night.contains(Self.at(hour: 12)))
        #expect((0..<24).allSatisfy { always.contains(Self.at(hour: $0, minute: 30)) })
        // The same hour on another day, and before 1970.
        #expect(day.contains(Self.at(hour: 24 * 400 + 7)))
        #expect(day.contains(ProgramDateTime(millisecondsSinceEpoch: -86_400_000 + 7 * 3_600_000)))
        #expect(!day.contains(ProgramDateTime(millisecondsSinceEpoch: -3_600_000)))  // 1969-12-31T23:00Z

        let ruleSet = Self.ruleSet([
            AdRule(id: "prime", conditions: ["device": ["tv"]], hours: [HourRange(start: 18, end: 23)], podIDs: ["pod-tv"]),
            AdRule(id: "night", hours: [HourRange(start: 23, end: 2), HourRange(start: 4, end: 5)], podIDs: []),
            AdRule(id: "everyone", podIDs: ["pod-phone"]),
        ])
        let tv = ["device": "tv"]
        #expect(Self.choose(ruleSet, targeting: tv, at: Self.at(hour: 17, minute: 59)).ruleID == "everyone")
        #expect(Self.choose(ruleSet, targeting: tv, at: Self.at(hour: 18)).ruleID == "prime")
        #expect(Self.choose(ruleSet, targeting: tv, at: Self.at(hour: 23)).ruleID == "night")
        #expect(Self.choose(ruleSet, targeting: tv, at: Self.at(hour: 4, minute: 10)).ruleID == "night")
        #expect(Self.choose(ruleSet, targeting: tv, at: Self.at(hour: 3)).ruleID == "everyone")
    }

    // MARK: Frequency caps

    @Test("periods are aligned on the Unix epoch")
    func periods() {
        let cap = FrequencyCap(count: 1, per: .seconds(600))
        #expect(cap.periodStart(containing: Self.at(hour: 12, minute: 9, millisecond: 59_999)) == Self.at(hour: 12))
        #expect(cap.periodStart(containing: Self.at(hour: 12, minute: 10)) == Self.at(hour: 12, minute: 10))
        let day = FrequencyCap(count: 1, per: .seconds(86_400))
        #expect(day.periodStart(containing: Self.at(hour: 23, minute: 59)) == Self.midnight)
        #expect(
            cap.periodStart(containing: ProgramDateTime(millisecondsSinceEpoch: -1))
                == ProgramDateTime(millisecondsSinceEpoch: -600_000))
    }

    @Test("a capped pod is skipped once the session reached its cap in the period; others fill in, else slate")
    func capsInTheChooser() {
        var ruleSet = Self.ruleSet([AdRule(id: "all", podIDs: ["pod-tv", "pod-phone"])])
        ruleSet.pods[0].cap = FrequencyCap(count: 2, per: .seconds(600))
        ruleSet.pods[0].weight = 1000  // chosen whenever it is eligible
        var shown = ShownPods()
        let tv = PodDecision(ruleSetVersion: 1, ruleID: "all", podID: "pod-tv", ads: [])
        #expect(Self.choose(ruleSet, at: Self.at(hour: 12, minute: 5), shown: shown).podID == "pod-tv")
        shown.record(tv, at: Self.at(hour: 11, minute: 59))  // the previous period: not counted
        shown.record(tv, at: Self.at(hour: 12, minute: 1))
        #expect(Self.choose(ruleSet, at: Self.at(hour: 12, minute: 5), shown: shown).podID == "pod-tv")
        shown.record(tv, at: Self.at(hour: 12, minute: 3))
        let capped = Self.choose(ruleSet, at: Self.at(hour: 12, minute: 5), shown: shown)
        #expect(capped.podID == "pod-phone" && capped.cappedPodIDs == ["pod-tv"])
        // The next period starts afresh.
        #expect(Self.choose(ruleSet, at: Self.at(hour: 12, minute: 10), shown: shown).podID == "pod-tv")
        #expect(shown.count(of: "pod-tv", since: Self.at(hour: 11), upTo: 2) == 2)
        #expect(shown.count(of: "pod-tv", since: Self.at(hour: 11), upTo: 10) == 3)

        // No other pod: slate only, under the matching rule.
        ruleSet.rules = [AdRule(id: "tv-only", podIDs: ["pod-tv"])]
        let slate = Self.choose(ruleSet, at: Self.at(hour: 12, minute: 5), shown: shown)
        #expect(slate == PodDecision(ruleSetVersion: 1, ruleID: "tv-only", podID: nil, ads: [], cappedPodIDs: ["pod-tv"]))
    }

    @Test("SessionDecisions counts the session's earlier breaks of the period, from its start; uncapped sets cost nothing")
    func sessionDecisions() throws {
        // 6 s segments from 12:00:00Z (GoldenChannel), a 1-slot break every other segment.
        var ruleSet = Self.ruleSet([AdRule(id: "all", podIDs: ["pod-tv", "pod-phone"])])
        ruleSet.pods[0].cap = FrequencyCap(count: 2, per: .seconds(60))
        ruleSet.pods[0].weight = 1000
        var content = MediaPlaylist(targetDuration: 6, mediaSequence: 100)
        var log = BreakLog()
        for msn in UInt64(100)..<140 {
            var segment = MediaSegment(uri: "video/\(msn).ts", duration: .seconds(6))
            if msn == 100 { segment.tags.programDateTime = GoldenChannel.firstDate }
            content.segments.append(segment)
            if msn % 2 == 1 { try log.endBreak(id: "b\(msn - 1)", at: msn, content: content) }
            if msn % 2 == 0 {
                try log.startBreak(id: "b\(msn)", at: msn, plannedDuration: .seconds(6), ruleSetVersion: 1, content: content)
            }
        }
        // Breaks every 12 s: five per minute, at :00 :12 :24 :36 :48 of each minute from 12:00.
        let session = ViewerSession(id: "v", startDate: GoldenChannel.firstDate.adding(.seconds(12)))
        var decisions = SessionDecisions(log: log, session: session, ruleSets: [1: ruleSet])
        var pods: [String] = []
        for index in log.breaks.indices { pods.append(try decisions.decision(at: index)?.podID ?? "-") }
        // Break 0 started before the session; the first minute then has 4 breaks from the session's
        // start: 2 pod-tv, then pod-phone; every later minute: 2 pod-tv, 3 pod-phone.
        #expect(pods[0] == "-")
        #expect(pods[1...4] == ["pod-tv", "pod-tv", "pod-phone", "pod-phone"])
        #expect(pods[5...9] == ["pod-tv", "pod-tv", "pod-phone", "pod-phone", "pod-phone"])
        #expect(try decisions.decision(forBreak: "b110")?.podID == "pod-tv")
        #expect(try decisions.decision(forBreak: "nope") == nil)
        // A second node, whose log kept only the last minute's breaks, agrees on the breaks it has.
        var recent = log
        recent.removeBreaks(endingBefore: 130)
        var other = SessionDecisions(log: recent, session: session, ruleSets: [1: ruleSet])
        for (index, adBreak) in recent.breaks.enumerated() {
            #expect(try other.decision(at: index) == decisions.decision(forBreak: adBreak.id))
        }
        // A rule set version a replayed break pins must be there.
        #expect(throws: StitchingError.missingRuleSet(version: 1, breakID: "b102")) {
            var missing = SessionDecisions(log: log, session: session, ruleSets: [:])
            _ = try missing.decision(at: 1)
        }
    }

    // MARK: Tracking

    @Test("tracking URLs go in the ad's date range, expanded, one attribute per event, stable across reloads")
    func tracking() throws {
        var ruleSet = GoldenChannel.ruleSet
        ruleSet.creatives["ad-a"]!.tracking = [
            .impression: ["https://t.example/i?s={session}&b={break}", "http://t2.example/imp/{ad}/{creative}"],
            .complete: ["https://t.example/c?s={session}&ad={ad}&x={creative}{creative}"],
            .firstQuartile: [],
        ]
        var channel = GoldenChannel()
        channel.starts[104] = ("b1", .seconds(30), nil)
        channel.ends[109] = "b1"
        let session = ViewerSession(id: "tv viewer/1", startDate: GoldenChannel.tvViewer.startDate, targeting: ["device": "tv"])
        var seen: [String: AttributeList] = [:]
        for last in [105, 107, 111] as [UInt64] {
            let (content, log) = try channel.snapshot(through: last, rendition: "video")
            let playlist = try Stitcher.render(
                content: content, rendition: "video", breaks: log, session: session, ruleSets: [1: ruleSet])
            for range in playlist.segments.flatMap(\.tags.dateRanges) {
                if let known = seen[range.id] {
                    for attribute in known.attributes { #expect(range.attributes[attribute.name] == attribute.value, "\(range.id)") }
                }
                seen[range.id] = range.attributes
            }
        }
        let ad = try #require(seen["b1/ad/1"])
        #expect(ad.string("X-AD-ID") == "spring-sale" && ad.string("X-CREATIVE-ID") == "ad-a")
        #expect(ad.string("X-TRACKING-IMPRESSION") == "https://t.example/i?s=tv%20viewer%2F1&b=b1 http://t2.example/imp/spring-sale/ad-a")
        #expect(ad.string("X-TRACKING-COMPLETE") == "https://t.example/c?s=tv%20viewer%2F1&ad=spring-sale&x=ad-aad-a")
        #expect(!ad.contains("X-TRACKING-FIRST-QUARTILE") && !ad.contains("X-TRACKING-MIDPOINT"))
        // In event order, after the ids.
        let names = ad.attributes.map(\.name).filter { $0.hasPrefix("X-") }
        #expect(names == ["X-AD-ID", "X-CREATIVE-ID", "X-TRACKING-IMPRESSION", "X-TRACKING-COMPLETE"])
        // ad-b has none.
        let second = try #require(seen["b1/ad/2"])
        #expect(!second.attributes.contains { $0.name.hasPrefix("X-TRACKING-") })
        #expect(TrackingEvent.allCases.map(\.attributeName) == [
            "X-TRACKING-IMPRESSION", "X-TRACKING-FIRST-QUARTILE", "X-TRACKING-MIDPOINT", "X-TRACKING-THIRD-QUARTILE",
            "X-TRACKING-COMPLETE",
        ])
        #expect(
            TrackingEvent.expand("x{session}{break}{ad}{creative}y", sessionID: "é~a.b_c-d", breakID: "1", adID: "a&b", creativeID: "c=d")
                == "x%C3%A9~a.b_c-d1a%26bc%3Ddy")
    }

    // MARK: Validation

    @Test("validation: caps, hours, conditions, tracking URLs, each at its key path")
    func validation() {
        var ruleSet = GoldenChannel.ruleSet
        ruleSet.pods[0].cap = FrequencyCap(count: 0, per: .seconds(3600))
        ruleSet.pods[1].cap = FrequencyCap(count: 1, per: .seconds(2400))
        ruleSet.pods.append(Pod(id: "p2", ads: [], cap: FrequencyCap(count: 1, per: .milliseconds(1500))))
        ruleSet.pods.append(Pod(id: "p3", ads: [], cap: FrequencyCap(count: 1, per: .seconds(172_800))))
        ruleSet.pods.append(Pod(id: "p4", ads: [], cap: FrequencyCap(count: 1, per: .zero)))
        ruleSet.rules[0].hours = [HourRange(start: 6, end: 6), HourRange(start: 22, end: 6), HourRange(start: 24, end: 3), HourRange(start: 0, end: 25)]
        ruleSet.rules[1].conditions = ["header.User-Agent": ["x"], "geo": [], "bad key": ["x"], "header.": ["x"]]
        ruleSet.creatives["ad-a"]!.tracking = [
            .impression: [
                "https://ok.example/{session}", "https://a.example/x y", "https://a.example/\"q\"", "https://a.example/\u{1}",
                "ftp://a.example/", "https://a.example/{user}", "https://a.example/{session", "https://a.example/}",
                "https://a.example/é", "https://",
            ],
            .midpoint: ["//a.example/mid"],
        ]
        let issues = ruleSet.validate(renditions: ["video", "audio"], targetDuration: 6).map(\.description)
        #expect(issues == [
            #"creatives["ad-a"].tracking.impression[1]: contains a space; percent-encode it (%20)"#,
            #"creatives["ad-a"].tracking.impression[2]: contains a double quote; percent-encode it (%22)"#,
            #"creatives["ad-a"].tracking.impression[3]: contains a control character"#,
            #"creatives["ad-a"].tracking.impression[4]: must be an http:// or https:// URL"#,
            #"creatives["ad-a"].tracking.impression[5]: unknown macro {user} (known: {session}, {break}, {ad}, {creative})"#,
            #"creatives["ad-a"].tracking.impression[6]: has an unmatched brace; macros are written {session}, {break}, {ad}, {creative}"#,
            #"creatives["ad-a"].tracking.impression[7]: has an unmatched brace; macros are written {session}, {break}, {ad}, {creative}"#,
            #"creatives["ad-a"].tracking.impression[8]: contains a non-ASCII character; percent-encode it"#,
            #"creatives["ad-a"].tracking.impression[9]: must be an http:// or https:// URL"#,
            #"creatives["ad-a"].tracking.midpoint[0]: must be an http:// or https:// URL"#,
            "pods[0].cap.count: must be at least 1 (remove the pod from the rules to never show it)",
            "pods[1].cap.per: 2400 s does not divide the longest cap period 3600 s; cap periods must nest (e.g. 600, 1800, 3600)",
            "pods[2].cap.per: must be a whole number of seconds from 1 to 86400 (one day), got 1.500",
            "pods[3].cap.per: must be a whole number of seconds from 1 to 86400 (one day), got 172800.000",
            "pods[4].cap.per: must be a whole number of seconds from 1 to 86400 (one day), got 0.000",
            "rules[0].hours[0]: 06-06 is not an hour range: HH-HH with a start 00-23 and a different end 01-24 (UTC; 22-06 wraps past midnight, 00-24 is all day)",
            "rules[0].hours[2]: 24-03 is not an hour range: HH-HH with a start 00-23 and a different end 01-24 (UTC; 22-06 wraps past midnight, 00-24 is all day)",
            "rules[0].hours[3]: 00-25 is not an hour range: HH-HH with a start 00-23 and a different end 01-24 (UTC; 22-06 wraps past midnight, 00-24 is all day)",
            #"rules[1].conditions["bad key"]: targeting keys are letters, digits, '-', '_' and '.'"#,
            #"rules[1].conditions["geo"]: must accept at least one value"#,
            #"rules[1].conditions["header."]: names no header (write header.<name>, e.g. header.user-agent)"#,
            #"rules[1].conditions["header.User-Agent"]: header names are matched lower-case: write header.user-agent"#,
        ])
        // The longest cap period, and no caps at all.
        #expect(ruleSet.longestCapPeriod == .seconds(172_800))
        #expect(GoldenChannel.ruleSet.longestCapPeriod == nil)
        var nested = GoldenChannel.ruleSet
        nested.pods[0].cap = FrequencyCap(count: 1, per: .seconds(600))
        nested.pods[1].cap = FrequencyCap(count: 3, per: .seconds(3600))
        #expect(nested.validate(renditions: ["video", "audio"], targetDuration: 6) == [])
        #expect(nested.longestCapPeriod == .seconds(3600))
    }
}
