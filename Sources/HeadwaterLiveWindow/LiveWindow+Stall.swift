import HeadwaterHLS

/// Target-duration refresh, enforced (RFC 8216 §6.2.2; DESIGN.md "Target-duration refresh"): a
/// live playlist must change every ½–1½ target durations. When the source delivers nothing for
/// that long the channel is degraded, and the window keeps advancing on the wall clock:
///
/// - **Whole channel stalled** (no rendition listed a source segment for 1½ target durations):
///   every rendition gets the same filler at the same MSN — a slate segment after an
///   `EXT-X-DISCONTINUITY` (``StallPolicy/Fill/slate``), or an `EXT-X-GAP` segment of one target
///   duration (``StallPolicy/Fill/gap``) — each time the previous filler's duration has passed.
///   When the source comes back, numbering resumes above the fillers, after a discontinuity.
/// - **One rendition behind** by 3 target durations while others advance: it is padded with
///   `EXT-X-GAP` at the MSNs the others list (slate there would misalign discontinuity numbers
///   across renditions, C14); its source's late segments for those MSNs are dropped when they
///   come. Renditions arrive independently (separate uploads, separate upstream polls), so a lag
///   shorter than that is jitter, not a stall: filling it would throw away a segment about to
///   arrive and send players that ignore EXT-X-GAP (ffmpeg) to a 404.
extension LiveWindow {
    struct StallState: Sendable {
        var startedAt: Int64
        /// When the next filler is due.
        var nextFillAt: Int64
    }

    /// Acts on a source that stalled; called on every clock tick.
    mutating func checkStall(now: Int64) {
        let live = renditions.keys.sorted().filter { renditions[$0]!.published && !renditions[$0]!.entries.isEmpty }
        guard !live.isEmpty else { return }
        // Acted on one tick early, so the playlist is never unchanged for longer than 1½ TD.
        let threshold = Int64(configuration.targetDuration) * 1_500_000 - Self.tickInterval
        let delivered = live.map { renditions[$0]!.lastSourceSegmentAt ?? .min }
        let newest = delivered.max() ?? .min
        if now - newest >= threshold {
            if stall == nil { beginStall(now: now, renditions: live) }
            fillStall(now: now, renditions: live)
            return
        }
        // The channel advances: align any rendition left behind for long with gaps.
        let highest = live.compactMap { renditions[$0]!.lastMSN }.max() ?? 0
        let behind = Int64(configuration.targetDuration) * 3_000_000
        for (name, last) in zip(live, delivered) where now - last >= behind {
            var rendition = renditions[name]!
            guard let tail = rendition.lastMSN, tail < highest else { continue }
            if rendition.stalledSince == nil {
                rendition.stalledSince = now
                outcome.changed = true
                recordStall(.init(rendition: name, startedAt: now, fill: "gap"))
                report(.stall, name, "no new segment for \(Double(now - last) / 1_000_000) s; listing EXT-X-GAP to stay aligned")
            }
            let before = rendition.entries.count
            fill(&rendition, before: highest + 1, now: now)
            slide(&rendition, previousCount: before, now: now)
            renditions[name] = rendition
            outcome.changed = true
        }
    }

    /// A source segment was listed in `rendition`: any stall it was part of is over.
    mutating func sourceDelivered(_ rendition: inout RenditionWindow, now: Int64) {
        rendition.lastSourceSegmentAt = now
        if let since = rendition.stalledSince {
            rendition.stalledSince = nil
            endStall(rendition: rendition.name, now: now, since: since)
        }
        if let stall {
            self.stall = nil
            endStall(rendition: nil, now: now, since: stall.startedAt)
        }
    }

    /// Numbering for the first source segment after stall fillers: a new epoch starting above
    /// every MSN and DSN listed (so that segment carries a discontinuity), which the channel's
    /// other renditions join when their source resumes too.
    mutating func resume(
        _ rendition: inout RenditionWindow, encoderSequence: UInt64, encoderDiscontinuity: UInt64, now: Int64
    ) {
        let since = rendition.fillerSince ?? now
        rendition.fillerSince = nil
        let newest = numbering.epochs[numbering.current]
        let joined = encoderSequence &+ newest.offset &+ newest.skipped
        if rendition.epoch < numbering.current, newest.openedAt >= since, joined > (rendition.lastMSN ?? 0),
            joined >= newest.start, joined - newest.start <= UInt64(maxFillerRun)
        {
            rendition.epoch = numbering.current
        } else {
            let start = max(numbering.highest ?? 0, rendition.lastMSN ?? 0) &+ 1
            let discontinuity = max(numbering.highestDiscontinuity, rendition.entries.last?.dsn ?? 0) &+ 1
            numbering.epochs.append(
                .init(
                    start: start, offset: start &- encoderSequence,
                    discontinuityOffset: discontinuity &- encoderDiscontinuity, openedAt: now))
            rendition.epoch = numbering.current
        }
        rendition.offset = numbering.epochs[rendition.epoch].offset
        rendition.discontinuityOffset = numbering.epochs[rendition.epoch].discontinuityOffset
    }

    // MARK: Internals

    private mutating func beginStall(now: Int64, renditions live: [String]) {
        let fill = effectiveFill(live)
        stall = StallState(startedAt: now, nextFillAt: now)
        outcome.changed = true  // the snapshot says degraded
        recordStall(.init(rendition: nil, startedAt: now, fill: fill.rawValue))
        report(
            .stall, "*",
            "no new segment from the source for 1.5 target durations; "
                + (fill == .none ? "the playlist stops advancing" : "filling with \(fill.rawValue)"))
    }

    private mutating func endStall(rendition: String?, now: Int64, since: Int64) {
        if let index = stallHistory.lastIndex(where: { $0.rendition == rendition && $0.endedAt == nil }) {
            stallHistory[index].endedAt = now
        }
        outcome.changed = true
        let seconds = Double((now - since) / 100_000) / 10
        report(.stallEnded, rendition ?? "*", "the source is back after \(seconds) s")
    }

    private mutating func recordStall(_ stall: ChannelStatus.Stall) {
        stallHistory.append(stall)
        if stallHistory.count > ChannelStatus.maxStalls { stallHistory.removeFirst() }
    }

    /// Slate when configured and usable by every live rendition (TS segments rounding to at most the
    /// target duration, no EXT-X-MAP in effect), else gap; `none` stays none.
    private func effectiveFill(_ live: [String]) -> StallPolicy.Fill {
        switch configuration.stall.fill {
        case .none: return .none
        case .gap: return .gap
        case .slate:
            let usable = live.allSatisfy { name in
                guard let slate = slateRendition(for: renditions[name]!) else { return false }
                return renditions[name]!.tailMap == nil
                    && slate.segments.allSatisfy { $0.duration.roundedSeconds <= Int64(configuration.targetDuration) }
            }
            return usable ? .slate : .gap
        }
    }

    private func slateRendition(for rendition: RenditionWindow) -> SlateLibrary.Rendition? {
        let audioOnly = rendition.media.map { $0.resolution == nil && !$0.codecs.contains { $0.hasPrefix("avc") || $0.hasPrefix("hvc") || $0.hasPrefix("hev") } } ?? false
        return configuration.stall.slate?.rendition(
            for: rendition.name, resolution: rendition.media?.resolution, audioOnly: audioOnly)
    }

    /// Lists the fillers that are due: one at the same MSN in every live rendition, each time the
    /// previous one's duration has passed.
    private mutating func fillStall(now: Int64, renditions live: [String]) {
        let fill = effectiveFill(live)
        guard fill != .none, var state = stall else { return }
        var listed = 0
        while now >= state.nextFillAt, listed < 3 {
            let duration = appendFiller(fill, renditions: live, now: now)
            state.nextFillAt += duration.microseconds
            listed += 1
        }
        if state.nextFillAt < now { state.nextFillAt = now }  // never a burst to catch up
        stall = state
    }

    /// One filler in every live rendition at the next common MSN; returns its duration.
    private mutating func appendFiller(_ kind: StallPolicy.Fill, renditions live: [String], now: Int64) -> HLSDuration {
        let highest = live.compactMap { renditions[$0]!.lastMSN }.max() ?? 0
        let msn = highest + 1
        var duration = HLSDuration.seconds(Int64(configuration.targetDuration))
        for name in live {
            var rendition = renditions[name]!
            let before = rendition.entries.count
            fill(&rendition, before: msn, now: now)  // a rendition one segment behind catches up first
            let tail = rendition.entries.last!
            let previousEnd = tail.date.adding(tail.duration)
            let served = "\(configuration.runTag)-\(msn).ts"
            if kind == .slate, let slate = slateRendition(for: rendition) {
                let index = rendition.slateIndex % slate.segments.count
                let source = slate.segments[index]
                rendition.slateIndex = index + 1
                duration = source.duration
                var segment = MediaSegment(uri: "\(rendition.name)/\(served)", duration: source.duration)
                if !rendition.tailKeys.isEmpty {
                    segment.tags.keys = [Key.none]
                    rendition.tailKeys = []
                }
                // Slate after source media, and at each slate loop point: timestamps restart.
                let discontinuity = !tail.filler || index == 0
                push(
                    &rendition, segment, name: served, msn: msn, file: source.file, aux: [:],
                    dsn: tail.dsn + (discontinuity ? 1 : 0), encoderDate: previousEnd, clock: now, filler: true)
            } else {
                var segment = MediaSegment(uri: "\(rendition.name)/\(served)", duration: duration)
                segment.tags.gap = true
                push(
                    &rendition, segment, name: served, msn: msn, file: nil, aux: [:], dsn: tail.dsn,
                    encoderDate: previousEnd, clock: now, filler: true)
            }
            if rendition.fillerSince == nil { rendition.fillerSince = now }
            slide(&rendition, previousCount: before, now: now)
            renditions[name] = rendition
        }
        outcome.changed = true
        return duration
    }
}
