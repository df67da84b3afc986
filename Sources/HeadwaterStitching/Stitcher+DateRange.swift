import HeadwaterHLS

extension Stitcher {
    /// Adds the break and ad `EXT-X-DATERANGE`s that cover the listed segments: on the segment where
    /// each starts, or on the head when it started before the window. A range stays while it covers
    /// a listed segment or ends after the head's date (C12: never removed while a date in it maps to
    /// the playlist), computed with the same millisecond arithmetic a client uses. An ad's range
    /// carries `X-AD-ID`, `X-CREATIVE-ID` and the creative's `X-TRACKING-…` URLs
    /// (``trackingAttributes(_:sessionID:breakID:adID:)``).
    static func decorate(
        _ output: inout MediaPlaylist, contentFirst: UInt64, log: BreakLog, plans: inout BreakPlans,
        options: StitchOptions
    ) throws(StitchingError)
    {
        guard let headDate = output.segments.first?.tags.programDateTime, !log.breaks.isEmpty else { return }
        let first = output.effectiveMediaSequence
        let last = first + UInt64(output.segments.count) - 1
        var added: [[DateRange]] = Array(repeating: [], count: output.segments.count)

        func place(_ range: DateRange, startingAt msn: UInt64) {
            added[msn >= first ? Int(msn - first) : 0].append(range)
        }

        // From the first break that reaches into the content given: an earlier break can still cover
        // the head when its pod ran ahead of the content (its dates go past the next segment's).
        var index = firstBreakReaching(contentFirst, log)
        let longestSlot = HLSDuration.seconds(Int64(output.targetDuration) + 1)
        while index < log.breaks.count, log.breaks[index].startMediaSequence <= last {
            defer { index += 1 }
            let adBreak = log.breaks[index]
            if let end = adBreak.end, let slots = adBreak.slotCount, end.mediaSequence <= first, end.date <= headDate {
                // No listed slot: only a pod running ahead could still reach the head's date.
                let (bound, overflow) = longestSlot.microseconds.multipliedReportingOverflow(by: Int64(clamping: slots))
                if !overflow, adBreak.startDate.adding(HLSDuration(microseconds: bound)) <= headDate { continue }
            }
            let breakCovers = adBreak.end.map { $0.mediaSequence > first || $0.date > headDate } ?? true
            if breakCovers { place(breakDateRange(adBreak, options: options), startingAt: adBreak.startMediaSequence) }

            let plan = try plans.plan(index)
            guard let layout = plan.layout else { continue }
            let slotCount = adBreak.slotCount
            for (number, placed) in layout.ads.enumerated() {
                if let slotCount, placed.firstSlot >= slotCount { break }  // cut before it began
                let start = adBreak.startMediaSequence + placed.firstSlot
                guard start <= last else { break }
                let shown = slotCount.map { min(placed.segmentCount, $0 - placed.firstSlot) } ?? placed.segmentCount
                let lastShown = start + shown - 1
                // Final once every slot it will ever have is known: all listed, or the break ended.
                let final = adBreak.end != nil || lastShown <= last
                let offset = layout.offset(ofSlot: placed.firstSlot)
                let startDate = adBreak.startDate.adding(offset)
                let duration = final ? layout.offset(ofSlot: placed.firstSlot + shown) - offset : nil
                // Written while it covers a listed segment or its end (as a client computes it) is
                // after the head's date.
                guard lastShown >= first || duration.map({ startDate.adding($0) > headDate }) ?? true else { continue }
                var attributes = [
                    Attribute("X-AD-ID", .quoted(placed.ad.id)),
                    Attribute("X-CREATIVE-ID", .quoted(placed.ad.creativeID)),
                ]
                if let creative = plan.ruleSet?.creatives[placed.ad.creativeID], !creative.tracking.isEmpty {
                    attributes += trackingAttributes(
                        creative, sessionID: plans.sessionID, breakID: adBreak.id, adID: placed.ad.id)
                }
                let range = DateRange(
                    id: "\(adBreak.id)/ad/\(number + 1)",
                    class: options.adClass,
                    startDate: startDate,
                    duration: duration,
                    plannedDuration: placed.duration,
                    clientAttributes: attributes)
                place(range, startingAt: start)
            }
        }
        for position in added.indices where !added[position].isEmpty {
            output.segments[position].tags.dateRanges = added[position] + output.segments[position].tags.dateRanges
        }
    }

    /// The index of the first break a window starting at content segment `contentFirst` consults: the
    /// last that started at or before it, unless it ended before it — and the one before a break
    /// starting right there, back to back, whose pod can still run past the head's date.
    static func firstBreakReaching(_ contentFirst: UInt64, _ log: BreakLog) -> Int {
        var index = log.lastBreakIndex(startingAtOrBefore: contentFirst) ?? 0
        if index > 0, log.breaks[index].startMediaSequence == contentFirst { index -= 1 }
        if index < log.breaks.count, let end = log.breaks[index].end, end.mediaSequence < contentFirst { index += 1 }
        return index
    }

    /// One `X-TRACKING-…` attribute per event the creative has URLs for, in ``TrackingEvent`` order:
    /// the URLs with their macros expanded, separated by single spaces. Functions of the session, the
    /// break and the pinned creative only, so the ad's range keeps them on every reload (invariant 6).
    static func trackingAttributes(_ creative: Creative, sessionID: String, breakID: String, adID: String)
        -> [Attribute]
    {
        TrackingEvent.allCases.compactMap { event in
            guard let urls = creative.tracking[event], !urls.isEmpty else { return nil }
            let expanded = urls.map {
                TrackingEvent.expand($0, sessionID: sessionID, breakID: breakID, adID: adID, creativeID: creative.id)
            }
            return Attribute(event.attributeName, .quoted(expanded.joined(separator: " ")))
        }
    }

    /// Whether a range may still cover `date`: its end is unknown, or after it (as a client computes it).
    static func mayCover(_ range: DateRange, _ date: ProgramDateTime) -> Bool {
        guard let start = range.startDate else { return true }
        if let end = range.endDate { return end > date }
        if let duration = range.duration { return start.adding(duration) > date }
        return true
    }

    /// The break's date range: its values depend on the break log only (invariant 6), the same for
    /// every viewer, stitched or not.
    static func breakDateRange(_ adBreak: AdBreak, options: StitchOptions) -> DateRange {
        DateRange(
            id: adBreak.id,
            class: options.breakClass,
            startDate: adBreak.startDate,
            endDate: adBreak.end?.date,
            duration: adBreak.actualDuration,
            plannedDuration: adBreak.plannedDuration,
            scte35Out: adBreak.scte35Out,
            scte35In: adBreak.end?.scte35In)
    }
}
