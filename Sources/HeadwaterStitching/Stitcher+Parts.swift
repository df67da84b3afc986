import HeadwaterHLS

/// Low-latency stitching (HLS-RULES F1–F6, F17, F21, C10, C11): a low-latency player keeps its part
/// cadence, its preload hint and its blocking reloads through ad breaks.
///
/// - PART-INF and SERVER-CONTROL come from the content. PART-TARGET is the content's, or the longest
///   part of the creatives of the breaks stitched in the window when longer (F3: every part ≤ it),
///   rounded up to the millisecond; PART-HOLD-BACK is at least 3× it (F1). The creatives are
///   measured over all their renditions, so every rendition has the same SERVER-CONTROL (C14).
///   `CAN-SKIP-UNTIL` is carried (the server answers `_HLS_skip=YES` with a delta of this playlist,
///   F14); `CAN-SKIP-DATERANGES` is not: a stitched playlist's date ranges are its breaks', and a
///   `v2` delta that left them out would need to know when each one appeared (F15).
/// - Complete segments of the last three target durations (of the stitched timeline, measured to its
///   live edge) list their parts: content segments the content's (byte ranges made absolute), ad and
///   slate segments all their creative's (C11: older parts are dropped).
/// - The open segment (content media sequence number `last + 1`): content passes its published parts
///   through (with DISCONTINUITY and date before the first part on a return or a not-stitched slot,
///   F3); a stitched slot lists its creative's parts *at the pace of the content*: those whose running
///   total is within the content's published part durations (invariant 5: never ahead of the live
///   edge), after DISCONTINUITY, KEY/MAP and the date the whole segment will have (F3). Those tags
///   are written from the moment the segment is open, before its first part is: a player that loads
///   the hinted first part numbers it with the discontinuity it belongs to (hls.js, given an ad's
///   DISCONTINUITY only with its first part, put the ad elsewhere on its timeline and stalled).
/// - One `EXT-X-PRELOAD-HINT` for the next part this viewer gets (F4, F17): the creative's next part,
///   the next slot's first part once the open slot's parts are all listed, or the content's hint when
///   the next part is content. A `TYPE=MAP` hint joins it when that part needs another initialization
///   section (F17).
///
/// ## Boundaries (what the stitcher cannot know)
/// - A stitched slot whose creative's parts are all listed while the content's segment is still open
///   (a shorter ad) waits for the content: no new part until the content segment completes, which
///   can exceed one PART-TARGET (C10) — the alternative, listing the next slot early, would run
///   ahead of the live edge. The hint then names the next slot's first part, assuming the break
///   goes on: the log cannot yet know of a return at `last + 2`. If the break returns there, the
///   hinted part is withdrawn (F5 allows it "if segmentation changes", e.g. an early return).
/// - Likewise the content's hint for `last + 2` is withdrawn if a break is then announced there.
/// - The log decides what the open segment is. So the owner of the log must record a break's start,
///   and its end, before the content publishes the first *part* of that segment
///   (``BreakLog/startBreak(id:at:plannedDuration:ruleSetVersion:outCue:content:)`` and
///   ``BreakLog/endBreak(id:at:inCue:content:)`` accept the open segment `last + 1` for this);
///   otherwise the open segment's parts change kind when the log catches up.
/// - A slate slot's segment is normally chosen by the length of the content segment it replaces,
///   which is unknown while that segment is open. In a low-latency window it is chosen by the
///   target duration instead (``slate(_:replacing:in:)``), so its parts can be listed from the start
///   and never change.
/// - A creative segment without parts (not cut) lists none while open, and is hinted by nothing.
extension Stitcher {
    /// The slate for a slot whose content segment lasts `duration`: the nearest to it, or in a
    /// low-latency window the nearest to the target duration (known before the content segment is
    /// complete, so that the same slate is listed part by part and then whole).
    static func slate(_ layout: PodLayout, replacing duration: HLSDuration, in content: MediaPlaylist) -> PodLayout.Item {
        layout.slateItem(replacing: content.partInformation == nil ? duration : .seconds(Int64(content.targetDuration)))
    }

    /// `parts` with every byte range given its offset (F3: an offset-less range continues the previous
    /// part of the same URI in the parent; the first part of the parent's own URI starts where the
    /// parent does), since a stitched neighbour never continues it. A range that cannot be resolved
    /// (a first part of another URI without offset) is left as written.
    static func absoluteParts(_ parts: [PartialSegment], parent: String?, parentOffset: UInt64?) -> [PartialSegment] {
        guard parts.contains(where: { $0.byteRange != nil && $0.byteRange?.offset == nil }) else { return parts }
        var result = parts
        var previous: (uri: String, end: UInt64)? = parent.flatMap { uri in parentOffset.map { (uri, $0) } }
        for index in result.indices {
            let part = result[index]
            guard let range = part.byteRange else {
                previous = nil
                continue
            }
            let uri = part.uri
            var start = range.offset
            if start == nil, let previous, previous.uri == uri { start = previous.end }
            guard let start else {
                previous = nil
                continue
            }
            if range.offset == nil {
                result[index].attributes["BYTERANGE"] = .quoted(ByteRange(length: range.length, offset: start).description)
            }
            previous = (uri, start.saturatingAdd(range.length))
        }
        return result
    }

    /// PART-INF, SERVER-CONTROL, the parts of the last three target durations, the open segment and
    /// the preload hint of a low-latency stitched playlist (see above). O(window).
    ///
    /// - Parameters:
    ///   - contentContext: the KEY and MAP in effect at the content's last segment.
    ///   - inEffect: those in effect at the stitched playlist's last segment.
    static func addLowLatency(
        to output: inout MediaPlaylist, content: MediaPlaylist, window: ContentWindow, contentContext: ContentContext?,
        inEffect: ContentContext?, log: BreakLog, plans: inout BreakPlans, options: StitchOptions
    ) throws(StitchingError) {
        let targetDuration = HLSDuration.seconds(Int64(content.targetDuration))
        let openMSN = window.end
        var longestPart = content.partInformation?.partTarget ?? .zero

        // The content's open segment: its published parts, its date, the KEY/MAP it starts with.
        let contentParts = absoluteParts(content.trailingTags.parts, parent: nil, parentOffset: nil)
        var published = HLSDuration.zero
        for part in contentParts { published += part.duration }
        let lastDate = window.dates.last.flatMap { $0 }
        let openDate = content.trailingTags.programDateTime ?? lastDate.map { $0.adding(content.segments.last!.duration) }
        var openContext = contentContext ?? ContentContext(keys: [], map: nil)
        if !content.trailingTags.keys.isEmpty || content.trailingTags.map != nil {
            openContext = ContentContext(keys: content.trailingTags.keys, map: content.trailingTags.map)
                .continuing(openContext)
        }
        let contentHints = content.preloadHints

        var trailing = SegmentTags()
        trailing.dateRanges = output.trailingTags.dateRanges
        var hints: [PreloadHint] = []
        var needed = openContext
        let cursor = log.lastBreakIndex(startingAtOrBefore: openMSN)
        switch log.position(of: openMSN, lastBreak: cursor) {
        case .content(_, let returnFrom):
            hints = contentHints
            trailing.parts = contentParts
            trailing.discontinuity = content.trailingTags.discontinuity || returnFrom != nil
            trailing.programDateTime = content.trailingTags.programDateTime ?? (returnFrom != nil ? openDate : nil)
            if returnFrom != nil, options.cueMarkers { trailing.adMarkers = [.cueIn(value: nil)] }

        case .slot(let breakIndex, let slot):
            let adBreak = log.breaks[breakIndex]
            let plan = try plans.plan(breakIndex)
            if let layout = plan.layout {
                longestPart = max(longestPart, layout.longestPart)
                let item = layout.adItem(atSlot: slot) ?? slate(layout, replacing: targetDuration, in: content)
                guard item.segment.duration.roundedSeconds <= Int64(content.targetDuration) else {
                    throw .exceedsTargetDuration(
                        uri: item.segment.uri, duration: item.segment.duration, targetDuration: content.targetDuration)
                }
                let isAd = slot < layout.adSlotCount
                let date = isAd ? adBreak.startDate.adding(layout.offset(ofSlot: slot)) : openDate
                // At the pace of the content (invariant 5): the parts that fit in what it published.
                var listed = 0
                var total = HLSDuration.zero
                for part in item.segment.parts {
                    guard total + part.duration <= published else { break }
                    total += part.duration
                    listed += 1
                }
                trailing.parts = item.segment.parts[..<listed].map { $0.partialSegment(uri: item.segment.uri) }
                trailing.discontinuity = true
                trailing.programDateTime = date
                if options.cueMarkers {
                    trailing.adMarkers = cueMarkers(
                        log: log, breakIndex: breakIndex, slot: slot, msn: openMSN,
                        elapsed: isAd
                            ? layout.offset(ofSlot: slot)
                            : max(.zero, (date ?? adBreak.startDate).duration(since: adBreak.startDate)))
                }
                needed = openContext.forCreative(map: item.map)
                // The next part: the creative's, or the first of the next slot's creative.
                if listed < item.segment.parts.count {
                    hints = [hint(item.segment.parts[listed], uri: item.segment.uri)]
                } else if adBreak.end.map({ $0.mediaSequence > openMSN + 1 }) ?? true {
                    let next = layout.adItem(atSlot: slot + 1) ?? slate(layout, replacing: targetDuration, in: content)
                    if let first = next.segment.parts.first {
                        hints = [hint(first, uri: next.segment.uri)]
                        if let map = next.map, map != item.map ?? needed.map { hints.append(mapHint(map)) }
                    }
                } else {
                    hints = contentHints
                }
            } else {
                // Not stitched for this viewer: the content, with a DISCONTINUITY on every slot.
                hints = contentHints
                trailing.parts = contentParts
                trailing.discontinuity = true
                trailing.programDateTime = openDate
                if options.cueMarkers {
                    trailing.adMarkers = cueMarkers(
                        log: log, breakIndex: breakIndex, slot: slot, msn: openMSN,
                        elapsed: max(.zero, (openDate ?? adBreak.startDate).duration(since: adBreak.startDate)))
                }
            }
        }
        if !output.endList {
            try apply(needed, after: inEffect, to: &trailing, msn: openMSN)
            output.trailingTags = trailing
        }
        output.preloadHints = output.endList ? [] : hints

        // Parts of the complete segments of the last three target durations (C11), measured on the
        // stitched timeline to its live edge; and the longest creative part of the breaks listed.
        var toLiveEdge = HLSDuration.zero
        for part in trailing.parts { toLiveEdge += part.duration }
        let horizon = HLSDuration(microseconds: 3 * targetDuration.microseconds)
        var index = output.segments.count
        var cursorBreak = log.lastBreakIndex(startingAtOrBefore: openMSN)
        while index > 0 {
            index -= 1
            toLiveEdge += output.segments[index].duration
            if toLiveEdge > horizon, !output.segments[index].tags.parts.isEmpty { output.segments[index].tags.parts = [] }
            let msn = output.effectiveMediaSequence + UInt64(index)
            while let current = cursorBreak, log.breaks[current].startMediaSequence > msn {
                cursorBreak = current > 0 ? current - 1 : nil
            }
            if let current = cursorBreak, log.breaks[current].contains(msn), let layout = try plans.plan(current).layout {
                longestPart = max(longestPart, layout.longestPart)
            }
        }

        // PART-TARGET ≥ every part (F3), rounded up to the millisecond; PART-HOLD-BACK ≥ 3× it (F1).
        let partTarget = HLSDuration(microseconds: (longestPart.microseconds + 999) / 1000 * 1000)
        output.partInformation = PartInformation(partTarget: partTarget)
        var control = content.serverControl?.attributes ?? AttributeList()
        control.attributes.removeAll { $0.name == "CAN-SKIP-DATERANGES" }
        let holdBack = HLSDuration(microseconds: 3 * partTarget.microseconds)
        if (control.decimal("PART-HOLD-BACK") ?? .zero) < holdBack { control["PART-HOLD-BACK"] = .decimal(holdBack) }
        output.serverControl = ServerControl(attributes: control)
        output.renditionReports = []
    }

    /// The CUE markers the segment in slot `slot` of `breaks[breakIndex]` carries (as the complete
    /// segment will, so the open one shows them before its first part).
    private static func cueMarkers(log: BreakLog, breakIndex: Int, slot: UInt64, msn: UInt64, elapsed: HLSDuration)
        -> [AdMarker]
    {
        let adBreak = log.breaks[breakIndex]
        guard slot == 0 else {
            return [.cueOutContinuation(CueOutContinuation(elapsed: elapsed, duration: adBreak.plannedDuration))]
        }
        var markers: [AdMarker] = []
        if breakIndex > 0, log.breaks[breakIndex - 1].end?.mediaSequence == msn { markers.append(.cueIn(value: nil)) }
        markers.append(.cueOut(CueOut(duration: adBreak.plannedDuration)))
        return markers
    }

    /// `EXT-X-PRELOAD-HINT:TYPE=PART` of a creative part, with its exact byte range: the URI and range
    /// the part is listed with later (F4).
    private static func hint(_ part: CreativePart, uri: String) -> PreloadHint {
        PreloadHint(attributes: [
            Attribute("TYPE", .token("PART")), Attribute("URI", .quoted(uri)),
            Attribute("BYTERANGE-START", .integer(part.offset)), Attribute("BYTERANGE-LENGTH", .integer(part.length)),
        ])
    }

    /// `EXT-X-PRELOAD-HINT:TYPE=MAP` of a creative's initialization section (F17).
    private static func mapHint(_ map: MediaInitializationSection) -> PreloadHint {
        var attributes: AttributeList = [Attribute("TYPE", .token("MAP")), Attribute("URI", .quoted(map.uri))]
        if let range = map.byteRange, let offset = range.offset {
            attributes["BYTERANGE-START"] = .integer(offset)
            attributes["BYTERANGE-LENGTH"] = .integer(range.length)
        }
        return PreloadHint(attributes: attributes)
    }
}

extension CreativeSegment {
    /// All the segment's parts as `EXT-X-PART`s under its URI.
    var partialSegments: [PartialSegment] { parts.map { $0.partialSegment(uri: uri) } }
}

extension ContentContext {
    /// This context (KEYs and MAP written before one segment) applied over `previous`.
    func continuing(_ previous: ContentContext) -> ContentContext {
        var keys = previous.keys
        for key in self.keys {
            if let existing = keys.firstIndex(where: { $0.keyFormat == key.keyFormat }) {
                keys[existing] = key
            } else {
                keys.append(key)
            }
        }
        return ContentContext(keys: keys, map: map ?? previous.map)
    }
}
