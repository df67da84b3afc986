public import HeadwaterHLS

/// Renders a viewer's stitched media playlist: a pure function of (one rendition's content window,
/// the channel's break log, the session, the pinned ad rule sets, options). No I/O, no clock, no
/// randomness: the same inputs give the same bytes on any node.
///
/// ## How a break is stitched (slot alignment)
/// The stitched playlist keeps the content's media sequence numbers one for one. Inside a break,
/// content segment `start + k` (slot `k`) is replaced by the `k`-th segment of the viewer's
/// ``PodLayout`` — the pod's ads in order, then slate — and keeps its media sequence number. So:
/// - numbering never depends on the viewer (DESIGN invariants 1, 2);
/// - a stitched segment is listed exactly when the content segment it replaces is: ads are paced by
///   the content and never run ahead of the live edge (invariant 5);
/// - every slot and the first segment after the break carry `EXT-X-DISCONTINUITY`, so the number of
///   discontinuities a break adds depends on its length alone (``BreakLog``) and alternate
///   renditions number identically (invariant 3);
/// - a break that ends early (CUE-IN before the pod is over) cuts the pod at that slot; a pod longer
///   than the break is cut the same way; a shorter one is filled with slate;
/// - each stitched segment has the EXTINF of the segment it carries and its own
///   `EXT-X-PROGRAM-DATE-TIME`. Ad slots run on the pod's clock (the break's start date plus the
///   pod's EXTINFs before it), so ads and their date ranges have exact dates that never depend on
///   the content. Slate slots carry the slate segment nearest in length to the content segment they
///   replace, dated like it, so a long fill keeps the content's pace; the first segment after the
///   break has the content's date again. Where a pod's ads are shorter than the content they
///   replace, the viewer gains that much on the live edge and the date steps forward; where they are
///   longer, the viewer falls behind and the date steps back at the next slate slot or return (B7
///   allows less than a second). Condition creatives to the channel's segment length —
///   ``AdRuleSet/validate(renditions:targetDuration:maximumSegmentDuration:)`` checks it.
///
/// ## Viewers who join during a break
/// A break is stitched for a session only if it started at or after the session's start date
/// (``ViewerSession/startDate``). A session that joins mid-break (or finds an earlier break still in
/// the window) sees the channel's own content in those slots — still with a DISCONTINUITY on each,
/// so numbering stays viewer-independent — and the break's DATERANGE, but no pod. The rule depends on
/// two fixed dates, so it gives the same answer on every reload.
///
/// ## Decorations
/// One `EXT-X-DATERANGE` per break (``StitchOptions/breakClass``: `START-DATE`, `PLANNED-DURATION`,
/// `SCTE35-OUT`; `END-DATE`, `DURATION` and `SCTE35-IN` once the break has ended) and one per ad shown
/// (``StitchOptions/adClass``: `X-AD-ID`, `X-CREATIVE-ID`, `PLANNED-DURATION`; `DURATION` once the ad
/// is complete or cut). Attribute values are functions of the break log and the pod only, so a
/// range keeps its values on every reload and later reloads only add attributes (invariant 6). A
/// range is written while it covers a listed segment, on its first segment or on the head.
/// `EXT-X-KEY:METHOD=NONE` precedes clear ads in encrypted content and the content's key is
/// re-signalled after; EXT-X-MAP follows the creative.
///
/// The source's own ad signals (SCTE-35 date ranges, CUE tags) are replaced by these; its other
/// date ranges and tags pass through as the content carries them (so one that ends inside a stitched
/// break, where the viewer's dates are the pod's, may leave a little early). `EXT-X-BITRATE` is not
/// carried, nor are rendition reports (the runtime adds them with the session's token).
///
/// ## Low latency
/// Low-latency content (EXT-X-PART-INF) gives a low-latency stitched playlist: parts, PART-INF,
/// SERVER-CONTROL and a preload hint, through breaks too (F21). See `Stitcher+Parts.swift`.
///
/// ## Window
/// The stitched playlist ends at the content's last segment. It starts at the content's first, or —
/// with ``StitchOptions/minimumDuration`` — at the newest segment that keeps the stitched EXTINFs
/// above that duration, so that a window full of short ads still lasts 3×TD (C5) when the content
/// given reaches back further than the shared playlist.
///
/// ## Cost
/// O(W + A + log B): W segments of content given, A segments of the pods of the breaks that
/// intersect it, B breaks retained in the log. Nothing depends on how long the channel or the
/// session has run: the log's running discontinuity offsets replace any walk through history.
public enum Stitcher {
    public static func render(
        content: MediaPlaylist,
        rendition: String,
        breaks log: BreakLog,
        session: ViewerSession,
        ruleSets: [UInt64: AdRuleSet],
        options: StitchOptions = StitchOptions()
    ) throws(StitchingError) -> MediaPlaylist {
        var plans = BreakPlans(log: log, session: session, ruleSets: ruleSets, rendition: rendition)
        return try render(content: content, breaks: log, plans: &plans, options: options)
    }

    /// The same playlist as ``render(content:rendition:breaks:session:ruleSets:options:)`` for a
    /// session whose decisions for the window's breaks are `decisions` and whose id is `sessionID`:
    /// the session's part, decided ahead (and possibly shared by many sessions, see
    /// ``WindowDecisions``).
    ///
    /// - Parameter decisions: for the breaks ``windowBreaks(content:breaks:)`` names for this
    ///   content and log.
    public static func render(
        content: MediaPlaylist,
        rendition: String,
        breaks log: BreakLog,
        decisions: WindowDecisions,
        sessionID: String,
        ruleSets: [UInt64: AdRuleSet],
        options: StitchOptions = StitchOptions()
    ) throws(StitchingError) -> MediaPlaylist {
        var plans = BreakPlans(log: log, decisions: decisions, sessionID: sessionID, ruleSets: ruleSets, rendition: rendition)
        return try render(content: content, breaks: log, plans: &plans, options: options)
    }

    private static func render(content: MediaPlaylist, breaks log: BreakLog, plans: inout BreakPlans, options: StitchOptions)
        throws(StitchingError) -> MediaPlaylist
    {
        guard content.skip == nil else { throw .deltaUpdate }
        let window = ContentWindow(content)
        let ranges = content.resolvedByteRanges()
        let contexts = ContentContext.all(content)
        let first = window.first
        let lowLatency = content.partInformation != nil

        var output = MediaPlaylist(targetDuration: content.targetDuration, mediaSequence: first)
        output.independentSegments = content.independentSegments
        output.start = content.start
        output.playlistType = content.playlistType
        output.headerUnknownTags = content.headerUnknownTags
        output.endList = content.endList
        output.trailingTags.dateRanges = content.trailingTags.dateRanges.filter { isPassThrough($0, options) }

        // Pass 1, from the live edge back: where each segment falls, how long it is once stitched,
        // and so the head — the newest segment that keeps the stitched window long enough (C5), or
        // the content's first when it does not reach back that far. The head only moves forward:
        // EXTINFs never change and the tail grows.
        let count = content.segments.count
        var cursor = count == 0 ? nil : log.lastBreakIndex(startingAtOrBefore: first + UInt64(count - 1))
        let minimum = options.minimumDuration ?? .zero
        var positions: [BreakLog.Position] = []
        positions.reserveCapacity(count)
        var total = HLSDuration.zero
        var head = count
        while head > 0, !(minimum > .zero && total >= minimum) {
            head -= 1
            let msn = first + UInt64(head)
            while let index = cursor, log.breaks[index].startMediaSequence > msn {
                cursor = index > 0 ? index - 1 : nil
            }
            let position = log.position(of: msn, lastBreak: cursor)
            positions.append(position)
            guard minimum > .zero else { continue }
            if case .slot(let breakIndex, let slot) = position, let layout = try plans.plan(breakIndex).layout {
                let replaced = content.segments[head].duration
                total += (layout.adItem(atSlot: slot) ?? slate(layout, replacing: replaced, in: content)).segment.duration
            } else {
                total += content.segments[head].duration
            }
        }
        positions.reverse()

        // Pass 2: the listed segments.
        var segments: [MediaSegment] = []
        var dsns: [UInt64] = []
        var required: [ContentContext] = []
        segments.reserveCapacity(content.segments.count - head)
        dsns.reserveCapacity(content.segments.count - head)
        required.reserveCapacity(content.segments.count - head)
        for index in head..<content.segments.count {
            let msn = first + UInt64(index)
            guard let date = window.dates[index] else { throw .contentWithoutDates(msn: msn) }
            switch positions[index - head] {
            case .content(let offset, let returnFrom):
                var segment = passThrough(
                    content.segments[index], range: ranges[index], options: options, lowLatency: lowLatency)
                if returnFrom != nil || index == head {
                    segment.tags.programDateTime = date
                }
                if returnFrom != nil {
                    segment.tags.discontinuity = true
                    if options.cueMarkers { segment.tags.adMarkers = [.cueIn(value: nil)] }
                }
                segments.append(segment)
                dsns.append(window.dsns[index].saturatingAdd(offset))
                required.append(contexts[index])

            case .slot(let breakIndex, let slot):
                let adBreak = log.breaks[breakIndex]
                var segment: MediaSegment
                let elapsed: HLSDuration
                if let layout = try plans.plan(breakIndex).layout {
                    let item: PodLayout.Item
                    if let ad = layout.adItem(atSlot: slot) {
                        // An ad: on the pod's clock.
                        item = ad
                        elapsed = layout.offset(ofSlot: slot)
                        segment = MediaSegment(uri: ad.segment.uri, duration: ad.segment.duration)
                        segment.tags.programDateTime = adBreak.startDate.adding(elapsed)
                    } else {
                        // Slate: as long as the content it replaces, as near as the slate allows,
                        // and dated like it.
                        item = slate(layout, replacing: content.segments[index].duration, in: content)
                        elapsed = max(.zero, date.duration(since: adBreak.startDate))
                        segment = MediaSegment(uri: item.segment.uri, duration: item.segment.duration)
                        segment.tags.programDateTime = date
                    }
                    segment.byteRange = item.segment.byteRange
                    // All of the creative's parts: the slot is complete (F21). Those older than the
                    // last three target durations are dropped below (C11).
                    if lowLatency { segment.tags.parts = item.segment.partialSegments }
                    guard item.segment.duration.roundedSeconds <= Int64(content.targetDuration) else {
                        throw .exceedsTargetDuration(
                            uri: item.segment.uri, duration: item.segment.duration,
                            targetDuration: content.targetDuration)
                    }
                    // The content's own date ranges (program metadata) stay with the slot.
                    let ranges = content.segments[index].tags.dateRanges
                    if !ranges.isEmpty { segment.tags.dateRanges = ranges.filter { isPassThrough($0, options) } }
                    required.append(contexts[index].forCreative(map: item.map))
                } else {
                    // Not stitched for this viewer (the break started before the session did).
                    segment = passThrough(
                        content.segments[index], range: ranges[index], options: options, lowLatency: lowLatency)
                    segment.tags.programDateTime = date
                    elapsed = max(.zero, date.duration(since: adBreak.startDate))
                    required.append(contexts[index])
                }
                segment.tags.discontinuity = true
                if options.cueMarkers {
                    var markers: [AdMarker] = []
                    if slot == 0 {
                        if breakIndex > 0, log.breaks[breakIndex - 1].end?.mediaSequence == msn {
                            markers.append(.cueIn(value: nil))
                        }
                        markers.append(.cueOut(CueOut(duration: adBreak.plannedDuration)))
                    } else {
                        markers.append(
                            .cueOutContinuation(
                                CueOutContinuation(elapsed: elapsed, duration: adBreak.plannedDuration)))
                    }
                    segment.tags.adMarkers = markers
                }
                segments.append(segment)
                dsns.append(adBreak.stitchedDiscontinuitySequence(slot: slot))
            }
        }

        // The DISCONTINUITY tags must reproduce the numbering the log computed, or the log does not
        // describe this content.
        for index in segments.indices.dropFirst()
        where dsns[index] != dsns[index - 1].saturatingAdd(segments[index].tags.discontinuity ? 1 : 0) {
            throw .breakLogMismatch(msn: first + UInt64(head + index))
        }
        output.mediaSequence = first + UInt64(head)
        if !segments.isEmpty {
            let discontinuity: UInt64 = segments[0].tags.discontinuity ? 1 : 0
            guard dsns[0] >= discontinuity else { throw .breakLogMismatch(msn: first + UInt64(head)) }
            output.discontinuitySequence = dsns[0] - discontinuity
            if head > 0 { carryDateRanges(from: content.segments[..<head], to: &segments, options: options) }
        } else {
            output.discontinuitySequence = emptyWindowSequence(
                content: content, log: log, cursor: log.lastBreakIndex(startingAtOrBefore: first))
        }
        try applyContexts(required, to: &segments, first: first + UInt64(head))
        output.segments = segments
        if lowLatency {
            try addLowLatency(
                to: &output, content: content, window: window, contentContext: contexts.last, inEffect: required.last,
                log: log, plans: &plans, options: options)
        }

        try decorate(&output, contentFirst: first, log: log, plans: &plans, options: options)
        // The content's version covers its own features; creatives add fractional EXTINFs (3),
        // byte ranges (4) and initialization sections (6).
        if let version = content.version {
            output.version = max(version, plans.requiredVersion)
            if lowLatency { output.version = max(output.version!, PlaylistValidator.requiredVersion(output).version) }
        } else {
            output.version = PlaylistValidator.requiredVersion(output).version
        }
        return output
    }

    /// A content segment as it appears in a stitched playlist: its own tags, minus the source's ad
    /// signals and what the stitcher re-derives (KEY, MAP) or drops (BITRATE); its parts when the
    /// playlist is low-latency; byte ranges (its own and its parts') made absolute, since its
    /// neighbour may now be an ad.
    static func passThrough(
        _ source: MediaSegment, range: (offset: UInt64, length: UInt64)?, options: StitchOptions, lowLatency: Bool
    ) -> MediaSegment {
        var tags = SegmentTags()
        tags.discontinuity = source.tags.discontinuity
        tags.programDateTime = source.tags.programDateTime
        tags.gap = source.tags.gap
        let dateRanges = source.tags.dateRanges
        if !dateRanges.isEmpty { tags.dateRanges = dateRanges.filter { isPassThrough($0, options) } }
        let unknown = source.tags.unknownTags
        if !unknown.isEmpty { tags.unknownTags = unknown }
        if lowLatency {
            let parts = source.tags.parts
            if !parts.isEmpty { tags.parts = absoluteParts(parts, parent: source.uri, parentOffset: range?.offset) }
        }
        var segment = source
        segment.tags = tags
        if let range { segment.byteRange = ByteRange(length: range.length, offset: range.offset) }
        return segment
    }

    /// The source date ranges announced on segments before the head that still apply to it: those
    /// that may still cover its date, or that later tags of the same ID extend (C12, D2, D8) — as
    /// ``MediaPlaylist/removingSegmentsFromHead(_:)`` keeps them.
    private static func carryDateRanges(
        from dropped: ArraySlice<MediaSegment>, to segments: inout [MediaSegment], options: StitchOptions
    ) {
        var carried: [DateRange] = []
        for segment in dropped {
            for range in segment.tags.dateRanges where isPassThrough(range, options) {
                if let index = carried.firstIndex(where: { $0.id == range.id }) {
                    for attribute in range.attributes.attributes where !carried[index].attributes.contains(attribute.name) {
                        carried[index].attributes.attributes.append(attribute)
                    }
                } else {
                    carried.append(range)
                }
            }
        }
        guard !carried.isEmpty, let headDate = segments[0].tags.programDateTime else { return }
        var later = Set<String>()
        for segment in segments { later.formUnion(segment.tags.dateRanges.map(\.id)) }
        carried.removeAll { !later.contains($0.id) && !mayCover($0, headDate) }
        guard !carried.isEmpty else { return }
        segments[0].tags.dateRanges = DateRange.carrying(carried, onto: segments[0].tags.dateRanges)
    }

    /// Whether a source date range passes through: not an ad signal (SCTE-35) and not one of ours.
    static func isPassThrough(_ range: DateRange, _ options: StitchOptions) -> Bool {
        let attributes = range.attributes
        if attributes.contains("SCTE35-OUT") || attributes.contains("SCTE35-IN") || attributes.contains("SCTE35-CMD") {
            return false
        }
        let rangeClass = range.class
        return rangeClass != options.breakClass && rangeClass != options.adClass
    }

    /// DISCONTINUITY-SEQUENCE of a window with no segments: that of its next segment.
    private static func emptyWindowSequence(content: MediaPlaylist, log: BreakLog, cursor: Int?) -> UInt64 {
        switch log.position(of: content.effectiveMediaSequence, lastBreak: cursor) {
        case .content(let offset, _): return content.effectiveDiscontinuitySequence + offset
        case .slot(let index, let slot): return log.breaks[index].stitchedDiscontinuitySequence(slot: slot) - 1
        }
    }

    /// Writes EXT-X-KEY and EXT-X-MAP where the state a segment needs differs from the state in
    /// effect, and both in full on the head (B9, B10).
    private static func applyContexts(_ required: [ContentContext], to segments: inout [MediaSegment], first: UInt64)
        throws(StitchingError)
    {
        var current: ContentContext?
        for index in segments.indices {
            try apply(required[index], after: current, to: &segments[index].tags, msn: first + UInt64(index))
            current = required[index]
        }
    }

    /// Writes the KEY and MAP `needed` where they differ from `current` (in full when nothing is in
    /// effect yet).
    static func apply(_ needed: ContentContext, after current: ContentContext?, to tags: inout SegmentTags, msn: UInt64)
        throws(StitchingError)
    {
        if let current {
            if needed.keys != current.keys, !needed.keys.isEmpty { tags.keys = needed.keys }
            if needed.map != current.map {
                guard let map = needed.map else { throw .initializationSectionCannotBeCleared(msn: msn) }
                tags.map = map
            }
        } else {
            if !needed.keys.isEmpty { tags.keys = needed.keys }
            if let map = needed.map { tags.map = map }
        }
    }
}

/// The KEY and MAP a segment needs in effect.
struct ContentContext: Equatable {
    var keys: [Key]
    var map: MediaInitializationSection?

    /// The content's KEY and MAP in effect at every segment: one pass.
    static func all(_ content: MediaPlaylist) -> [ContentContext] {
        var keys: [Key] = []
        var map: MediaInitializationSection?
        return content.segments.map { segment in
            for key in segment.tags.keys {
                if let existing = keys.firstIndex(where: { $0.keyFormat == key.keyFormat }) {
                    keys[existing] = key
                } else {
                    keys.append(key)
                }
            }
            if let newMap = segment.tags.map { map = newMap }
            return ContentContext(keys: keys, map: map)
        }
    }

    /// What a creative segment replacing this content segment needs: clear (METHOD=NONE) where the
    /// content is encrypted, and the creative's initialization section.
    func forCreative(map creativeMap: MediaInitializationSection?) -> ContentContext {
        let encrypted = keys.contains { $0.method != "NONE" }
        return ContentContext(keys: encrypted ? [.none] : keys, map: creativeMap ?? map)
    }
}

/// The per-break decisions of one render, made once per break that intersects the window (and, for
/// frequency caps, replayed once per cap horizon: ``SessionDecisions``), or given ahead
/// (``WindowDecisions``).
struct BreakPlans {
    struct Plan {
        /// `nil` when the break is not stitched for this session (it started before the session).
        var layout: PodLayout?
        /// The rule set the break pins, when stitched: its creatives' tracking URLs.
        var ruleSet: AdRuleSet?
    }

    let rendition: String
    /// The session id written into tracking URLs.
    let sessionID: String
    private let log: BreakLog
    private let ruleSets: [UInt64: AdRuleSet]
    /// Where decisions come from: made here for a session, or given.
    private var session: SessionDecisions?
    private let given: WindowDecisions?
    private var cache: [Int: Plan] = [:]
    /// The EXT-X-VERSION the creatives of the plans made so far need.
    private(set) var requiredVersion = 1

    init(log: BreakLog, session: ViewerSession, ruleSets: [UInt64: AdRuleSet], rendition: String) {
        self.rendition = rendition
        self.sessionID = session.id
        self.log = log
        self.ruleSets = ruleSets
        self.session = SessionDecisions(log: log, session: session, ruleSets: ruleSets)
        self.given = nil
    }

    init(log: BreakLog, decisions: WindowDecisions, sessionID: String, ruleSets: [UInt64: AdRuleSet], rendition: String) {
        self.rendition = rendition
        self.sessionID = sessionID
        self.log = log
        self.ruleSets = ruleSets
        self.session = nil
        self.given = decisions
    }

    mutating func plan(_ index: Int) throws(StitchingError) -> Plan {
        if let plan = cache[index] { return plan }
        let pod: StitchedPod?
        if let given {
            pod = given.pod(at: index)
        } else {
            pod = try session!.decision(at: index).map(StitchedPod.init)
        }
        let plan: Plan
        if let pod {
            guard let ruleSet = ruleSets[pod.ruleSetVersion] else {
                throw .missingRuleSet(version: pod.ruleSetVersion, breakID: log.breaks[index].id)
            }
            let layout = try PodLayout(
                decision: PodDecision(ruleSetVersion: pod.ruleSetVersion, ruleID: nil, podID: nil, ads: pod.ads),
                ruleSet: ruleSet, rendition: rendition)
            plan = Plan(layout: layout, ruleSet: ruleSet)
            requiredVersion = max(requiredVersion, layout.requiredVersion)
        } else {
            plan = Plan(layout: nil, ruleSet: nil)
        }
        cache[index] = plan
        return plan
    }
}
