import HeadwaterHLS
import HeadwaterSCTE35
import HeadwaterStitching
import HeadwaterTesting

/// A live channel for the stitching property tests, advancing one segment at a time from one seed:
/// every rendition publishes the same segmentation (MSN, EXTINF, dates, discontinuities), the window
/// slides, and the channel keeps its break log the way the origin must (a break is recorded no
/// later than the version that lists its first segment, ended no later than the version that lists
/// the first segment after it). Along the way: random EXTINFs ≤ TD, source discontinuities with
/// date jumps, breaks of random planned lengths that end on time, early, or back to back with the
/// next, breaks announced ahead of their first segment, the source's own ad signals (SCTE-35
/// DATERANGE, CUE-OUT/IN) that the stitcher must replace, pass-through program date ranges,
/// encryption with key rotation, fMP4 with init sections, and ad configuration reloads.
struct ChannelSimulator {
    struct Options: Hashable {
        var targetDuration = 6
        var renditions = ["video", "audio"]
        var fragmentedMP4 = false
        var encrypted = false
        var datesOnEverySegment = false
        /// Target durations kept beyond the 3×TD minimum.
        var extraWindow = 1
        /// Content EXTINFs are drawn from this fraction of TD up to TD.
        var shortestSegment = 0.25
        /// Creative EXTINFs are drawn from this fraction of TD up to `longestCreativeSegment` × TD.
        var shortestCreativeSegment = 0.25
        var longestCreativeSegment = 1.0

        static func random(using random: inout SeededRandom) -> Options {
            var options = Options()
            options.targetDuration = random.pick([2, 4, 6, 6, 10])
            options.renditions = random.chance(0.7) ? ["video", "audio"] : ["audio", "hd", "sd"]
            options.fragmentedMP4 = random.chance(0.4)
            options.encrypted = random.chance(0.3)
            options.datesOnEverySegment = random.chance(0.3)
            options.extraWindow = random.int(0...3)
            options.shortestSegment = random.pick([0.25, 0.6, 0.9])
            options.shortestCreativeSegment = random.pick([0.25, 0.6])
            options.longestCreativeSegment = random.pick([0.5, 0.9, 1.0])
            return options
        }
    }

    /// What happened, for the coverage assertions of the property test.
    struct Events {
        var breaks = 0
        var endedOnTime = 0
        var earlyReturns = 0
        var backToBack = 0
        var announcedAhead = 0
        var reloadsMidBreak = 0
        var sourceDiscontinuities = 0
        var sourceDiscontinuitiesInBreaks = 0
    }

    let options: Options
    private(set) var random: SeededRandom
    /// The current window of each rendition: the shared playlist.
    private(set) var contents: [String: MediaPlaylist] = [:]
    /// The same, reaching further back (segments still retained after leaving the window): what the
    /// stitcher is given, so that a stitched window keeps 3×TD when pods are shorter than content.
    private(set) var retained: [String: MediaPlaylist] = [:]
    private(set) var log = BreakLog()
    private(set) var ruleSets: [UInt64: AdRuleSet] = [:]
    private(set) var version: UInt64 = 1
    private(set) var events = Events()

    private var nextMSN: UInt64
    private var nextDate: ProgramDateTime
    private var breakNumber = 0
    private var segmentsUntilBreak: Int
    private var keyNumber = 0
    private var mapNumber = 0
    private var pendingDiscontinuity = false
    /// The open break's plan: early return after this many slots, if any.
    private var earlyAfter: UInt64?
    private var pendingStart: (id: String, planned: HLSDuration)?

    init(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let options = Options.random(using: &random)
        self.init(options: options, random: random)
    }

    init(options: Options, random: SeededRandom) {
        self.options = options
        self.random = random
        nextMSN = UInt64(self.random.int(0...50_000))
        nextDate = ProgramDateTime(millisecondsSinceEpoch: 1_767_225_600_000 + Int64(self.random.int(0...86_400)) * 1000)
        segmentsUntilBreak = self.random.int(2...8)
        let sequence = self.random.chance(0.5) ? UInt64(self.random.int(0...20)) : nil
        for name in options.renditions {
            var playlist = MediaPlaylist(targetDuration: options.targetDuration, mediaSequence: nextMSN)
            playlist.version = options.fragmentedMP4 ? 6 : 3
            playlist.discontinuitySequence = sequence
            contents[name] = playlist
        }
        retained = contents
        ruleSets[version] = RuleSetGenerator.make(version: version, options: options, random: &self.random)
        while contents[options.renditions[0]]!.duration < minimumWindow { step() }
    }

    var minimumWindow: HLSDuration { .seconds(Int64((3 + options.extraWindow) * options.targetDuration)) }

    /// The wall clock: just after the newest segment was published.
    var now: ProgramDateTime { nextDate.adding(.milliseconds(200)) }

    var isInBreak: Bool { log.openBreak != nil }

    /// Publishes the next segment in every rendition (updating the break log first), then slides.
    mutating func step() {
        let msn = nextMSN
        let td = Int64(options.targetDuration)
        let low = Int64(Double(td * 1_000_000) * options.shortestSegment)
        var duration = HLSDuration(microseconds: Int64(random.int(Int(low)...Int(td * 1_000_000))))
        if random.chance(0.5) { duration = HLSDuration(microseconds: duration.microseconds / 1000 * 1000) }

        // A source discontinuity: an encoder reconnect, with a date jump forward.
        var discontinuity = pendingDiscontinuity
        pendingDiscontinuity = false
        if random.chance(0.05) { discontinuity = true }
        if discontinuity {
            nextDate = nextDate.adding(.milliseconds(Int64(random.int(0...4000))))
            events.sourceDiscontinuities += 1
            if isInBreak { events.sourceDiscontinuitiesInBreaks += 1 }
        }

        // A break announced ahead: recorded before its first segment is listed.
        if pendingStart == nil, !isInBreak, segmentsUntilBreak == 0, random.chance(0.2) {
            let planned = plannedDuration()
            let id = nextBreakID()
            try! log.startBreak(
                id: id, at: msn, plannedDuration: planned, ruleSetVersion: version,
                outCue: sourceCue(planned: planned), content: contents[options.renditions[0]]!)
            pendingStart = (id, planned)
            earlyAfter = random.chance(0.3) ? UInt64(random.int(1...6)) : nil
            events.breaks += 1
            events.announcedAhead += 1
        }

        // Append the segment to every rendition.
        keyRotation()
        let date = nextDate
        for name in options.renditions {
            var playlist = contents[name]!
            var segment = MediaSegment(uri: "\(name)/\(msn).\(options.fragmentedMP4 ? "m4s" : "ts")", duration: duration)
            segment.tags.discontinuity = discontinuity && !playlist.segments.isEmpty
            if playlist.segments.isEmpty || discontinuity || options.datesOnEverySegment {
                segment.tags.programDateTime = date
            }
            if options.fragmentedMP4, playlist.segments.isEmpty || discontinuity {
                segment.tags.map = MediaInitializationSection(uri: "\(name)/init-\(mapNumber).mp4")
            }
            if options.encrypted, playlist.segments.isEmpty || keyChanged {
                segment.tags.keys = [
                    Key(method: "AES-128", uri: "keys/\(keyNumber).key", iv: Array(repeating: UInt8(keyNumber & 0xFF), count: 16))
                ]
            }
            playlist.segments.append(segment)
            contents[name] = playlist
            retained[name]!.segments.append(segment)
        }
        nextMSN += 1
        nextDate = date.adding(duration)
        keyChanged = false

        updateBreaks(at: msn)
        decorateSource(at: msn)
        if random.chance(0.04) { reloadConfiguration() }
        slide()
    }

    private var keyChanged = false

    private mutating func keyRotation() {
        if options.encrypted, random.chance(0.05) {
            keyNumber += 1
            keyChanged = true
        }
        if options.fragmentedMP4, random.chance(0.03) {
            mapNumber += 1
            pendingDiscontinuity = true
        }
    }

    /// Ends and starts breaks at segment `msn`, which every rendition now lists.
    private mutating func updateBreaks(at msn: UInt64) {
        let reference = contents[options.renditions[0]]!
        if let pending = pendingStart, log.openBreak?.id == pending.id, log.openBreak?.startMediaSequence == msn {
            pendingStart = nil  // its first segment is now listed
            return
        }
        if let open = log.openBreak, open.startMediaSequence < msn {
            let slots = msn - open.startMediaSequence
            let elapsed = dateOf(msn, in: reference).duration(since: open.startDate)
            let early = earlyAfter.map { slots >= $0 } ?? false
            if elapsed >= open.plannedDuration || early {
                try! log.endBreak(id: open.id, at: msn, inCue: open.outCue == nil ? nil : sourceCue(planned: nil), content: reference)
                if early && elapsed < open.plannedDuration { events.earlyReturns += 1 } else { events.endedOnTime += 1 }
                if random.chance(0.3) {
                    events.backToBack += 1
                    startBreak(at: msn)
                } else {
                    segmentsUntilBreak = random.int(1...12)
                }
            }
            return
        }
        if !isInBreak {
            if segmentsUntilBreak == 0 {
                startBreak(at: msn)
            } else {
                segmentsUntilBreak -= 1
            }
        }
    }

    private mutating func startBreak(at msn: UInt64) {
        let planned = plannedDuration()
        try! log.startBreak(
            id: nextBreakID(), at: msn, plannedDuration: planned, ruleSetVersion: version,
            outCue: sourceCue(planned: planned), content: contents[options.renditions[0]]!)
        earlyAfter = random.chance(0.3) ? UInt64(random.int(1...6)) : nil
        events.breaks += 1
    }

    private mutating func plannedDuration() -> HLSDuration {
        let td = Int64(options.targetDuration)
        return .milliseconds(Int64(random.int(Int(td * 500)...Int(td * 8000))))
    }

    private mutating func nextBreakID() -> String {
        breakNumber += 1
        return "brk-\(breakNumber)"
    }

    /// Half the breaks come from a source SCTE-35 cue, the rest have none (scheduled, cue now). An
    /// out cue carries the planned duration; an in cue (`planned == nil`) none.
    private mutating func sourceCue(planned: HLSDuration?) -> [UInt8]? {
        guard planned == nil || random.chance(0.5) else { return nil }
        let section = SpliceInfoSection.spliceInsert(
            eventID: UInt32(breakNumber), outOfNetwork: planned != nil, ptsTime: UInt64(random.int(0...1_000_000_000)),
            duration: planned.map { Ticks90kHz.ticks(microseconds: $0.microseconds) })
        return try! section.encoded()
    }

    /// The source's own markers on the segment just appended: what a real encoder sends, which the
    /// stitcher must not pass through (CUE tags, SCTE-35 date ranges); plus program date ranges it must.
    private mutating func decorateSource(at msn: UInt64) {
        let open = log.openBreak
        let startsHere = open?.startMediaSequence == msn
        let endsHere = log.breaks.last(where: { $0.end?.mediaSequence == msn }) != nil
        // A program date range covering just this segment, away from breaks: inside a stitched break
        // the viewer's dates are the pod's, and a source range follows the content's (see Stitcher).
        let program = open == nil && !startsHere && !endsHere && pendingStart == nil && segmentsUntilBreak >= 2
            && random.chance(0.05)
        guard startsHere || endsHere || open != nil || program else { return }
        for name in options.renditions {
            var playlist = contents[name]!
            var tags = playlist.segments[playlist.segments.count - 1].tags
            if endsHere { tags.adMarkers.append(.cueIn(value: nil)) }
            if startsHere, let open {
                tags.adMarkers.append(.cueOut(CueOut(duration: open.plannedDuration)))
                tags.dateRanges.append(
                    DateRange(
                        id: "source-\(open.id)", startDate: open.startDate, duration: open.plannedDuration,
                        plannedDuration: open.plannedDuration,
                        scte35Out: open.outCue ?? [0xFC, 0x30, 0x11]))
            } else if open != nil {
                tags.adMarkers.append(.cueOutContinuation(CueOutContinuation(value: "1.000/30")))
            }
            if program {
                let start = playlist.programDateTimes().last!!
                tags.dateRanges.append(
                    DateRange(
                        id: "program-\(msn)", class: "com.example.program", startDate: start,
                        duration: playlist.segments.last!.duration,
                        clientAttributes: [Attribute("X-TITLE", .quoted("Show \(msn)"))]))
            }
            playlist.segments[playlist.segments.count - 1].tags = tags
            contents[name] = playlist
            retained[name]!.segments[retained[name]!.segments.count - 1].tags = tags
        }
    }

    /// A configuration reload: a new rule-set version with new creatives and pods. Breaks already
    /// started keep the version they pinned.
    private mutating func reloadConfiguration() {
        if isInBreak { events.reloadsMidBreak += 1 }
        version += 1
        ruleSets[version] = RuleSetGenerator.make(version: version, options: options, random: &random)
    }

    /// Slides every rendition's head while the rest stays above the minimum window, and forgets
    /// breaks that ended before it.
    private mutating func slide() {
        let reference = contents[options.renditions[0]]!
        var removable = 0
        var remaining = reference.duration
        while removable < reference.segments.count - 1,
            remaining - reference.segments[removable].duration >= minimumWindow
        {
            remaining -= reference.segments[removable].duration
            removable += 1
        }
        if removable > 0 {
            for name in options.renditions { contents[name] = contents[name]!.removingSegmentsFromHead(removable) }
        }
        // Retention: another window's worth behind the shared one.
        let keep = contents[options.renditions[0]]!.segments.count * 4 + 2
        let excess = retained[options.renditions[0]]!.segments.count - keep
        if excess > 0 {
            for name in options.renditions { retained[name] = retained[name]!.removingSegmentsFromHead(excess) }
        }
        // Frequency caps count earlier breaks: keep those that started within the longest cap period
        // of any rule set in use before the oldest break the retained content shows.
        let first = retained[options.renditions[0]]!.effectiveMediaSequence
        var keepFrom = first
        let firstDate = retained[options.renditions[0]]!.programDateTimes().first.flatMap { $0 }
        if let horizon = ruleSets.values.compactMap(\.longestCapPeriod).max(),
            let oldest = log.breaks.last(where: { $0.startMediaSequence <= first })?.startDate ?? firstDate
        {
            let cutoff = oldest.adding(HLSDuration(microseconds: -horizon.microseconds))
            if let kept = log.breaks.first(where: { $0.startDate >= cutoff }) { keepFrom = min(first, kept.startMediaSequence) }
        }
        log.removeBreaks(endingBefore: keepFrom)
        // Rule sets no break pins any more may go.
        let pinned = Set(log.breaks.map(\.ruleSetVersion))
        ruleSets = ruleSets.filter { $0.key == version || pinned.contains($0.key) }
    }

    private func dateOf(_ msn: UInt64, in playlist: MediaPlaylist) -> ProgramDateTime {
        playlist.programDateTimes()[Int(msn - playlist.effectiveMediaSequence)]!
    }
}

/// Random ad configurations: creatives segmented alike in every rendition (EXTINF ≤ TD), a slate,
/// pods, and rules on `device`. URIs carry the version, so a decision taken under the wrong
/// version shows up as a changed URI.
enum RuleSetGenerator {
    static func make(version: UInt64, options: ChannelSimulator.Options, random: inout SeededRandom) -> AdRuleSet {
        let td = Int64(options.targetDuration) * 1_000_000
        func creative(_ id: String, segments: Int) -> Creative {
            let low = Int(Double(td) * options.shortestCreativeSegment)
            let high = max(low, Int(Double(td) * options.longestCreativeSegment))
            let durations = (0..<segments).map { _ in HLSDuration(microseconds: Int64(random.int(low...high)) / 1000 * 1000) }
            var renditions: [String: CreativeRendition] = [:]
            for name in options.renditions {
                let base = "/ads/v\(version)/\(id)/\(name)"
                renditions[name] = CreativeRendition(
                    map: options.fragmentedMP4 ? MediaInitializationSection(uri: "\(base)/init.mp4") : nil,
                    segments: durations.enumerated().map { index, duration in
                        CreativeSegment(uri: "\(base)/\(index).\(options.fragmentedMP4 ? "m4s" : "ts")", duration: duration)
                    })
            }
            var tracking: [TrackingEvent: [String]] = [:]
            if random.chance(0.3) {
                tracking[.impression] = ["https://t.example/i?s={session}&b={break}&ad={ad}&c={creative}"]
                tracking[.complete] = ["https://t.example/c/{session}/{break}", "https://u.example/c"]
            }
            return Creative(id: id, renditions: renditions, tracking: tracking)
        }
        let creatives = (0..<random.int(2...5)).map { creative("ad\($0)", segments: random.int(1...6)) }
        let slate = creative("slate", segments: random.int(1...3))
        // Frequency caps (periods of a few breaks, nested), UTC hours and header conditions, now and then.
        let longestCap = Int64(options.targetDuration * random.pick([4, 8]))
        let capped = random.chance(0.5)
        let pods = (0..<random.int(1...4)).map { number in
            Pod(
                id: "pod\(number)",
                ads: (0..<random.int(1...3)).map { index in
                    let chosen = random.pick(creatives)
                    return Pod.Ad(id: "pod\(number)-ad\(index)", creativeID: chosen.id)
                },
                weight: random.int(1...3),
                cap: capped && random.chance(0.6)
                    ? FrequencyCap(count: random.int(1...2), per: .seconds(longestCap / Int64(random.pick([1, 2])))) : nil)
        }
        var tv = AdRule(id: "tv", conditions: ["device": ["tv"]], podIDs: pods.prefix(2).map(\.id))
        if random.chance(0.3) {
            let start = random.int(0...23)
            tv.hours = [HourRange(start: start, end: (start + random.int(0...22)) % 24 + 1)]
        }
        if random.chance(0.3) { tv.conditions["header.user-agent"] = ["*TV*"] }
        var rules = [tv]
        if random.chance(0.8) { rules.append(AdRule(id: "everyone", podIDs: pods.map(\.id))) }
        return AdRuleSet(version: version, creatives: creatives, slate: slate, pods: pods, rules: rules)
    }
}

extension ChannelSimulator.Options {
    /// Creatives no longer than the shortest content segment: pods can never run ahead of the content.
    var isConditioned: Bool { longestCreativeSegment <= shortestSegment }
}
