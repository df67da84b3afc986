import HeadwaterHLS
import HeadwaterStitching
import HeadwaterTesting

/// A low-latency live channel for the stitched-parts property tests, advancing one *part* at a time:
/// each rendition publishes the same segmentation, every segment cut into a random number of
/// independent parts (byte ranges of the segment's file, some written without offset), the open
/// segment's parts as they are produced, and a preload hint for the next part, as
/// `LoopChannel+Parts.swift` writes them. Breaks start and end on the segment being produced, before
/// its first part, as the stitcher's low-latency contract asks (``Stitcher`` "Boundaries"), some
/// announced early, some ending early or back to back; creatives are cut into parts at a part target
/// of their own (sometimes longer than the content's).
struct PartsChannel {
    let targetDuration: Int
    let partTarget: HLSDuration
    let renditions = ["video", "audio"]
    private(set) var random: SeededRandom
    private(set) var log = BreakLog()
    let ruleSet: AdRuleSet
    /// Complete segments, by rendition (the window slides).
    private(set) var contents: [String: MediaPlaylist] = [:]
    /// The open segment: its MSN, date, duration, part durations and how many are published.
    private(set) var openMSN: UInt64
    private(set) var openDate: ProgramDateTime
    private var openDuration = HLSDuration.zero
    private var openParts: [HLSDuration] = []
    private var openDiscontinuity = false
    private(set) var published = 0
    /// Log changes, by the MSN they are at, with a counter (for hints withdrawn at a boundary, F5).
    private(set) var boundaries: [(msn: UInt64, change: Int)] = []
    private(set) var changes = 0
    private var segmentsUntilBreak: Int
    private var earlyAfter: UInt64?
    private var breakNumber = 0
    private(set) var events = (breaks: 0, early: 0, backToBack: 0)

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
        targetDuration = random.pick([2, 4, 6])
        partTarget = .milliseconds(Int64(random.pick([200, 334, 500, 1000])))
        let creativePartTarget = random.chance(0.3)
            ? HLSDuration(microseconds: partTarget.microseconds * 6 / 5) : partTarget
        ruleSet = Self.makeRuleSet(
            targetDuration: targetDuration, partTarget: creativePartTarget, renditions: renditions, random: &random)
        openMSN = UInt64(random.int(0...50_000))
        openDate = ProgramDateTime(millisecondsSinceEpoch: 1_767_225_600_000 + Int64(random.int(0...86_400)) * 1000)
        segmentsUntilBreak = random.int(1...4)
        for name in renditions {
            var playlist = MediaPlaylist(targetDuration: targetDuration, mediaSequence: openMSN)
            playlist.version = 6
            playlist.partInformation = PartInformation(partTarget: partTarget)
            playlist.serverControl = ServerControl(attributes: [
                Attribute("CAN-BLOCK-RELOAD", .token("YES")),
                Attribute("PART-HOLD-BACK", .decimal(HLSDuration(microseconds: partTarget.microseconds * 3))),
            ])
            contents[name] = playlist
        }
        openSegment()
        while contents[renditions[0]]!.duration < minimumWindow { step() }
    }

    /// Six target durations: pods shorter than the content they replace (down to about 0.6 of it here)
    /// still leave the stitched window over 3 × TD (C5).
    var minimumWindow: HLSDuration { .seconds(Int64(6 * targetDuration)) }

    /// The wall clock: the end of the newest published part.
    var now: ProgramDateTime { openDate.adding(openParts.prefix(published).reduce(.zero, +)) }

    /// The content as published now: complete segments, the open segment's parts, the hint.
    func content(_ rendition: String) -> MediaPlaylist {
        var playlist = contents[rendition]!
        if published > 0 {
            playlist.trailingTags.parts = parts(of: openMSN, rendition: rendition, durations: openParts, count: published)
        }
        // From the moment the segment opens, as the loop channel writes them: its first part is hinted.
        if openDiscontinuity {
            playlist.trailingTags.discontinuity = true
            playlist.trailingTags.programDateTime = openDate
        }
        // The next part: of the open segment, or the first of the next (its length: a part target).
        let hinted = published < openParts.count ? openMSN : openMSN + 1
        let offset = published < openParts.count ? Self.bytes(openParts.prefix(published).reduce(.zero, +)) : 0
        let length = Self.bytes(published < openParts.count ? openParts[published] : partTarget)
        playlist.preloadHints = [
            PreloadHint(attributes: [
                Attribute("TYPE", .token("PART")), Attribute("URI", .quoted("\(rendition)/\(hinted).m4s")),
                Attribute("BYTERANGE-START", .integer(offset)), Attribute("BYTERANGE-LENGTH", .integer(length)),
            ])
        ]
        return playlist
    }

    /// Publishes the next part; completes the open segment (and opens the next) after its last.
    mutating func step() {
        published += 1
        guard published == openParts.count else { return }
        for name in renditions {
            var segment = MediaSegment(uri: "\(name)/\(openMSN).m4s", duration: openDuration)
            segment.tags.parts = parts(of: openMSN, rendition: name, durations: openParts, count: openParts.count)
            var playlist = contents[name]!
            if playlist.segments.isEmpty || openDiscontinuity { segment.tags.programDateTime = openDate }
            if playlist.segments.isEmpty { segment.tags.map = MediaInitializationSection(uri: "\(name)/init.mp4") }
            segment.tags.discontinuity = openDiscontinuity && !playlist.segments.isEmpty
            // Parts older than three target durations go (C11), as the loop channel drops them.
            playlist.segments.append(segment)
            var age = HLSDuration.zero
            for index in playlist.segments.indices.reversed() {
                if age > .seconds(Int64(3 * targetDuration)) { playlist.segments[index].tags.parts = [] }
                age += playlist.segments[index].duration
            }
            contents[name] = playlist
        }
        openMSN += 1
        openDate = openDate.adding(openDuration)
        slide()
        openSegment()
    }

    /// Draws the next segment and updates the log before any of its parts is published.
    private mutating func openSegment() {
        let td = Int64(targetDuration) * 1000
        openDuration = .milliseconds(Int64(random.int(Int(td * 9 / 10)...Int(td))))
        let minimum = Int((openDuration.microseconds + partTarget.microseconds - 1) / partTarget.microseconds)
        let count = minimum + random.int(0...1)
        // Whole milliseconds, rounded up (each ≤ the part target, a whole number of ms); the last takes the rest.
        let each = (openDuration.microseconds / Int64(count) + 999) / 1000 * 1000
        openParts = (0..<count).map { index in
            index == count - 1 ? HLSDuration(microseconds: openDuration.microseconds - each * Int64(count - 1))
                : HLSDuration(microseconds: each)
        }
        published = 0
        openDiscontinuity = random.chance(0.05)
        if openDiscontinuity { openDate = openDate.adding(.milliseconds(Int64(random.int(0...3000)))) }
        updateBreaks()
    }

    /// The content as the log sees it before the open segment's first part: with its trailing tags.
    private var announcing: MediaPlaylist {
        var playlist = contents[renditions[0]]!
        if openDiscontinuity {
            playlist.trailingTags.discontinuity = true
            playlist.trailingTags.programDateTime = openDate
        }
        return playlist
    }

    private mutating func updateBreaks() {
        let msn = openMSN
        if let open = log.openBreak, open.startMediaSequence < msn {
            let slots = msn - open.startMediaSequence
            let early = earlyAfter.map { slots >= $0 } ?? false
            if openDate.duration(since: open.startDate) >= open.plannedDuration || early {
                try! log.endBreak(id: open.id, at: msn, content: announcing)
                record(msn)
                if early { events.early += 1 }
                if random.chance(0.25) {
                    events.backToBack += 1
                    startBreak()
                } else {
                    segmentsUntilBreak = random.int(1...5)
                }
            }
            return
        }
        guard log.openBreak == nil else { return }
        if segmentsUntilBreak == 0 { startBreak() } else { segmentsUntilBreak -= 1 }
    }

    private mutating func startBreak() {
        breakNumber += 1
        let td = Int64(targetDuration)
        try! log.startBreak(
            id: "brk-\(breakNumber)", at: openMSN, plannedDuration: .milliseconds(Int64(random.int(Int(td * 500)...Int(td * 5000)))),
            ruleSetVersion: 1, content: announcing)
        // Every channel's second break returns early after one slot (so every shard sees one); the
        // others now and then.
        earlyAfter = breakNumber == 2 ? 1 : random.chance(0.3) ? UInt64(random.int(1...3)) : nil
        events.breaks += 1
        record(openMSN)
    }

    private mutating func record(_ msn: UInt64) {
        changes += 1
        boundaries.append((msn, changes))
    }

    private mutating func slide() {
        for name in renditions {
            let playlist = contents[name]!
            var removable = 0
            var remaining = playlist.duration
            while removable < playlist.segments.count - 1, remaining - playlist.segments[removable].duration >= minimumWindow {
                remaining -= playlist.segments[removable].duration
                removable += 1
            }
            if removable > 0 { contents[name] = playlist.removingSegmentsFromHead(removable) }
        }
        let first = contents[renditions[0]]!.effectiveMediaSequence
        log.removeBreaks(endingBefore: first)
        boundaries.removeAll { $0.msn + 4 < first }
    }

    /// The first `count` parts of segment `msn`: byte ranges of its file, every other one (but the
    /// first) without offset now and then, so the stitcher must make them absolute.
    private func parts(of msn: UInt64, rendition: String, durations: [HLSDuration], count: Int) -> [PartialSegment] {
        var offset: UInt64 = 0
        return durations.prefix(count).enumerated().map { index, duration in
            let length = Self.bytes(duration)
            let withOffset = index == 0 || (msn + UInt64(index)) % 3 != 0
            defer { offset += length }
            return PartialSegment(
                uri: "\(rendition)/\(msn).m4s", duration: duration, independent: true,
                byteRange: ByteRange(length: length, offset: withOffset ? offset : nil))
        }
    }

    /// 100 bytes per millisecond.
    static func bytes(_ duration: HLSDuration) -> UInt64 { UInt64(duration.microseconds / 10) }

    /// Creatives and a slate (with a segment as long as the target duration, so a low-latency slate
    /// slot fills it) cut into parts; some segments are ranges of one file.
    static func makeRuleSet(targetDuration: Int, partTarget: HLSDuration, renditions: [String], random: inout SeededRandom)
        -> AdRuleSet
    {
        let td = Int64(targetDuration) * 1000
        func creative(_ id: String, durations: [HLSDuration]) -> Creative {
            let packed = random.chance(0.5)
            var result: [String: CreativeRendition] = [:]
            for name in renditions {
                var fileOffset: UInt64 = 0
                let segments = durations.enumerated().map { index, duration in
                    let uri = packed ? "/ads/\(id)/\(name)/all.mp4" : "/ads/\(id)/\(name)/\(index).m4s"
                    let start: UInt64 = packed ? fileOffset : 0
                    var parts: [CreativePart] = []
                    var left = duration
                    var at = start
                    while left > .zero {
                        let length = min(left, partTarget)
                        parts.append(
                            CreativePart(offset: at, length: bytes(length), duration: length, independent: parts.isEmpty || index % 2 == 0))
                        at += bytes(length)
                        left -= length
                    }
                    fileOffset = at
                    return CreativeSegment(
                        uri: uri, duration: duration,
                        byteRange: packed ? ByteRange(length: at - start, offset: start) : nil, parts: parts)
                }
                result[name] = CreativeRendition(map: MediaInitializationSection(uri: "/ads/\(id)/\(name)/init.mp4"), segments: segments)
            }
            return Creative(id: id, renditions: result)
        }
        func drawn() -> [HLSDuration] {
            (0..<random.int(1...4)).map { _ in .milliseconds(Int64(random.int(Int(td / 2)...Int(td)))) }
        }
        let creatives = (0..<3).map { creative("ad\($0)", durations: drawn()) }
        let slate = creative("slate", durations: [.milliseconds(td / 2), .milliseconds(td)])
        let pods = (0..<2).map { number in
            Pod(id: "pod\(number)", ads: (0..<random.int(1...3)).map { Pod.Ad(id: "pod\(number)-ad\($0)", creativeID: random.pick(creatives).id) })
        }
        return AdRuleSet(
            version: 1, creatives: creatives, slate: slate, pods: pods, rules: [AdRule(id: "everyone", podIDs: pods.map(\.id))])
    }
}
