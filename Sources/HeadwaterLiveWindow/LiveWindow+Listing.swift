import HeadwaterHLS

/// Following the encoder: which of its segments get listed, under which numbers, with which tags.
extension LiveWindow {
    /// A segment of the encoder's playlist, ready to list (or known to be unavailable).
    struct Candidate {
        /// The encoder's segment with MAP and KEY rewritten for serving (no discontinuity or date yet).
        var segment: MediaSegment
        var file: SegmentFile?
        /// The sub-range of `file`, offset explicit, for an EXT-X-BYTERANGE segment.
        var byteRange: ByteRange?
        /// The upload's sequence number.
        var upload: UInt64?
        var aux: [String: SegmentFile] = [:]
        var map: MediaInitializationSection?
        var keys: [Key] = []
        var media: MediaInfo?
        var completedAt: Int64 = 0
        var encoderDate: ProgramDateTime?
        /// The encoder's discontinuity sequence number of the segment.
        var encoderDiscontinuity: UInt64 = 0
        /// Why it cannot be listed (yet); `permanent` when waiting cannot help.
        var missing: (reason: String, permanent: Bool)?
    }

    /// Longest run of EXT-X-GAP fillers kept to stay aligned; beyond it a rendition renumbers.
    var maxFillerRun: Int { max(3, 2 * configuration.windowSeconds / configuration.targetDuration) }

    /// Lists what became listable in rendition `name` and slides its window.
    mutating func advance(_ name: String, now: Int64) {
        guard var rendition = renditions[name], let playlist = rendition.encoder else { return }
        let before = rendition.entries.count
        list(&rendition, from: playlist, now: now)
        if rendition.entries.count != before {
            slide(&rendition, previousCount: before, now: now)
            if !rendition.published {
                let duration = rendition.entries.reduce(Int64(0)) { $0 + $1.duration.microseconds }
                rendition.published = duration >= Int64(configuration.targetDuration) * 3_000_000
            }
            outcome.changed = true
        }
        if rendition.parts.partTarget != nil || !rendition.parts.listed.isEmpty {
            updateOpenParts(&rendition, now: now)
        }
        renditions[name] = rendition
    }

    private mutating func list(_ rendition: inout RenditionWindow, from playlist: MediaPlaylist, now: Int64) {
        let sequence = playlist.effectiveMediaSequence
        let context = EncoderContext(playlist)
        var index: Int
        if let next = rendition.nextEncoderSequence {
            index = next >= sequence ? Int(clamping: next - sequence) : 0
        } else {
            // A new rendition starts at its first segment that can be listed now.
            guard let first = playlist.segments.indices.first(where: { isAvailable(playlist, $0, context, rendition) })
            else { return }
            index = first
        }
        let threshold = HLSDuration(microseconds: Int64(configuration.targetDuration) * 1_500_000)
        while index < playlist.segments.count {
            let encoderSequence = sequence &+ UInt64(index)
            if rendition.resumingSince != nil {
                switch resumeAfterRestore(&rendition, playlist, at: index, context) {
                case .list: break
                case .wait: return
                case .skip(let first):
                    index = first
                    continue
                }
            }
            if rendition.fillerSince != nil {
                resume(&rendition, encoderSequence: encoderSequence, encoderDiscontinuity: context.discontinuities[index], now: now)
            }
            var msn = encoderSequence &+ rendition.offset
            if rendition.epoch < numbering.current, msn >= numbering.epochs[rendition.epoch + 1].start {
                // Another rendition restarted; these numbers belong to its new run. Wait for this
                // one's restart, unless it clearly is not coming (a separately encoded rendition).
                guard availableMedia(playlist, from: index, context, rendition) >= threshold else { break }
                rendition.epoch = numbering.current
                let start = numbering.epochs[rendition.epoch].start
                report(.misaligned, rendition.name, "kept numbering through another rendition's restart (MSN \(start))")
            }
            if let last = rendition.lastMSN, msn <= last {
                rendition.nextEncoderSequence = encoderSequence &+ 1
                index += 1
                continue
            }
            var candidate = self.candidate(playlist, index, context, rendition)
            if let missing = candidate.missing {
                guard missing.permanent || availableMedia(playlist, from: index + 1, context, rendition) >= threshold
                else {
                    if rendition.reportedBlocked != encoderSequence {
                        rendition.reportedBlocked = encoderSequence
                        report(
                            .segmentDelayed, rendition.name,
                            "waiting for \(playlist.segments[index].uri): \(missing.reason)")
                    }
                    break
                }
                report(
                    .missingSegment, rendition.name,
                    "\(playlist.segments[index].uri) listed as EXT-X-GAP: \(missing.reason)")
                candidate.segment.tags.gap = true
                candidate.file = nil
            }
            if opensTimeline(rendition, candidate), candidate.segment.duration.roundedSeconds > Int64(configuration.targetDuration) {
                switch longFirstSegment(rendition, playlist, at: index, context) {
                case .wait: return
                case .list: break
                case .skip:
                    report(
                        .segmentOverTargetDurationSkipped, rendition.name,
                        "\(playlist.segments[index].uri): EXTINF \(candidate.segment.duration) rounds above EXT-X-TARGETDURATION \(configuration.targetDuration) and starts a new timeline; not listed, numbering continues with the next segment")
                    skipFirstSegment(of: &rendition)
                    rendition.nextEncoderSequence = encoderSequence &+ 1
                    index += 1
                    continue
                }
            }
            if let last = rendition.lastMSN, msn - last - 1 > UInt64(maxFillerRun) {
                rendition.offset = (last &+ 1) &- encoderSequence
                report(
                    .misaligned, rendition.name,
                    "MSN \(msn) is \(msn - last - 1) past MSN \(last); renumbered from \(last + 1)")
                msn = last &+ 1
            }
            fill(&rendition, before: msn, now: now)
            append(&rendition, candidate, msn: msn, now: now)
            completeParts(&rendition, msn: msn, encoderSequence: encoderSequence, listed: candidate.file)
            let path = IngestPath.resolve(playlist.segments[index].uri, relativeTo: rendition.playlistPath)
            rendition.consumed[encoderSequence] = .init(
                path: path ?? playlist.segments[index].uri, range: context.ranges[index], file: candidate.file)
            if let path { rendition.remember(path: path, upload: candidate.upload) }
            rendition.nextEncoderSequence = encoderSequence &+ 1
            index += 1
        }
    }

    /// Appends a listed segment: its served name, and the MAP / KEY tags when they differ from
    /// those in effect at the tail.
    private mutating func append(_ rendition: inout RenditionWindow, _ candidate: Candidate, msn: UInt64, now: Int64) {
        var segment = candidate.segment
        let ext = Self.servedExtension(of: candidate.segment.uri)
        // Sub-ranges of one upload share its file and name, listed with explicit offsets, so the
        // head segment carries its offset however the window slides (B8).
        let name =
            if let upload = candidate.upload, candidate.byteRange != nil {
                "\(configuration.runTag)-b\(upload).\(ext)"
            } else {
                "\(configuration.runTag)-\(msn).\(ext)"
            }
        segment.uri = isRemote(candidate) ? candidate.segment.uri : "\(rendition.name)/\(name)"
        segment.byteRange = candidate.byteRange
        if candidate.map != rendition.tailMap, let map = candidate.map {
            segment.tags.map = map
            rendition.tailMap = map
        }
        if candidate.keys != rendition.tailKeys {
            segment.tags.keys = candidate.keys.isEmpty ? [Key.none] : candidate.keys
            rendition.tailKeys = candidate.keys
        }
        if let media = candidate.media { rendition.media = media }
        sourceDelivered(&rendition, now: now)
        push(
            &rendition, segment, name: name, msn: msn, file: candidate.file, aux: candidate.aux,
            dsn: candidate.encoderDiscontinuity &+ rendition.discontinuityOffset, encoderDate: candidate.encoderDate,
            clock: candidate.file == nil ? now : candidate.completedAt)
    }

    /// EXT-X-GAP segments for the MSNs between the tail and `msn`, so numbering stays aligned with
    /// the other renditions (an encoder playlist that slid past segments never uploaded, or a
    /// rendition that restarts behind the others). A gap segment is never fetched (§4.4.4.7).
    mutating func fill(_ rendition: inout RenditionWindow, before msn: UInt64, now: Int64) {
        guard let last = rendition.lastMSN, msn > last &+ 1 else { return }
        let ext = rendition.entries.last.map { Self.servedExtension(of: $0.name) } ?? "ts"
        for filler in (last + 1)..<msn {
            // What another rendition lists there, else what this encoder said, else a guess.
            var duration: HLSDuration?
            var dsn = rendition.entries.last!.dsn
            if let reference = referenceEntry(msn: filler, excluding: rendition.name) {
                duration = reference.duration
                dsn = reference.dsn
            } else if let encoded = rendition.encoderSegment(filler &- rendition.offset) {
                duration = encoded.duration
                if encoded.tags.discontinuity { dsn += 1 }
            }
            let name = "\(configuration.runTag)-\(filler).\(ext)"
            var segment = MediaSegment(
                uri: "\(rendition.name)/\(name)", duration: duration ?? .seconds(Int64(configuration.targetDuration)))
            segment.tags.gap = true
            push(
                &rendition, segment, name: name, msn: filler, file: nil, aux: [:], dsn: dsn, encoderDate: nil,
                clock: now, guessed: duration == nil)
        }
        report(.missingSegment, rendition.name, "MSN \(last + 1)–\(msn - 1) listed as EXT-X-GAP to stay aligned")
    }

    /// The one place a segment enters a window. `dsn` is the discontinuity sequence number it
    /// should have: a discontinuity goes on it when that is above the tail's (a segment can raise
    /// the number by one only; a rendition that missed a discontinuity catches up at the next).
    mutating func push(
        _ rendition: inout RenditionWindow, _ segment: MediaSegment, name: String, msn: UInt64, file: SegmentFile?,
        aux: [String: SegmentFile], dsn target: UInt64, encoderDate: ProgramDateTime?, clock: Int64,
        guessed: Bool = false, filler: Bool = false
    ) {
        var segment = segment
        if let open = rendition.parts.listed.removeValue(forKey: msn) {
            // Parts listed while it was open: the segment's own list replaces them (``completeParts``).
            candidates.append(contentsOf: open.compactMap(\.file?.path))
            rendition.parts.version += 1
        }
        let tail = rendition.entries.last
        let discontinuity = tail.map { target > $0.dsn } ?? false
        let dsn = tail.map { discontinuity ? $0.dsn + 1 : $0.dsn } ?? target
        segment.tags.discontinuity = discontinuity
        let date: ProgramDateTime
        let previousEnd = tail.map { $0.date.adding($0.duration) }
        if let previousEnd, !discontinuity {
            date = previousEnd
            segment.tags.programDateTime = nil
        } else {
            // The first segment and every discontinuity carry a date (B7): on the timeline other
            // renditions already gave this DSN (C14), else the encoder's, else the upload's wall clock.
            var start =
                anchoredDate(msn: msn, dsn: dsn, rendition) ?? encoderDate
                ?? ProgramDateTime(millisecondsSinceEpoch: (clock - segment.duration.microseconds) / 1000)
            if let previousEnd, start < previousEnd { start = previousEnd }  // never ambiguous (B7)
            date = start
            segment.tags.programDateTime = start
            numbering.anchor(dsn, msn: msn, date: start)
        }
        if tail == nil {
            rendition.window.mediaSequence = msn
            rendition.window.discontinuitySequence = dsn > 0 ? dsn : nil
        }
        if segment.duration.roundedSeconds > Int64(configuration.targetDuration) {
            let target = configuration.targetDuration
            report(
                .extinfAboveTargetDuration, rendition.name,
                "EXTINF \(segment.duration) (MSN \(msn)) rounds above EXT-X-TARGETDURATION \(target), which stays")
        }
        rendition.window.segments.append(segment)
        rendition.entries.append(
            .init(
                msn: msn, name: name, file: file, aux: aux, date: date, duration: segment.duration, dsn: dsn,
                guessed: guessed, filler: filler))
        numbering.highest = max(numbering.highest ?? msn, msn)
        numbering.highestDiscontinuity = max(numbering.highestDiscontinuity, dsn)
    }

    /// The date of `msn` on the timeline of `dsn` that some rendition anchored, when the durations
    /// in between are known.
    private func anchoredDate(msn: UInt64, dsn: UInt64, _ rendition: RenditionWindow) -> ProgramDateTime? {
        guard let anchor = numbering.anchors[dsn] else { return nil }
        let distance = msn >= anchor.msn ? msn - anchor.msn : anchor.msn - msn
        guard distance <= 10_000 else { return nil }
        var date = anchor.date
        if msn >= anchor.msn {
            for step in anchor.msn..<msn {
                guard let duration = knownDuration(msn: step, rendition) else { return nil }
                date = date.adding(duration)
            }
        } else {
            for step in msn..<anchor.msn {
                guard let duration = knownDuration(msn: step, rendition) else { return nil }
                date = date.adding(HLSDuration(microseconds: -duration.microseconds))
            }
        }
        return date
    }

    /// The duration of `msn` as listed by any rendition, or as this rendition's encoder gave it.
    private func knownDuration(msn: UInt64, _ rendition: RenditionWindow) -> HLSDuration? {
        if let entry = rendition.entry(msn: msn), !entry.guessed { return entry.duration }
        if let entry = referenceEntry(msn: msn, excluding: rendition.name) { return entry.duration }
        return rendition.encoderSegment(msn &- rendition.offset)?.duration
    }

    /// Removes segments from the head while the rest still lasts the window (never below 3×TD plus
    /// the longest segment: C5, C16), at most as many as the previous version listed (so MEDIA-SEQUENCE
    /// never moves by more than the previous version held, C3). Removed segments stay fetchable for
    /// their duration plus the playlist's (C7).
    mutating func slide(_ rendition: inout RenditionWindow, previousCount: Int, now: Int64) {
        let durations = rendition.entries.map(\.duration.microseconds)
        let longest = durations.max() ?? 0
        let minimum = max(
            Int64(configuration.windowSeconds) * 1_000_000, Int64(configuration.targetDuration) * 3_000_000 + longest)
        var total = durations.reduce(0, +)
        let playlistDuration = total
        var remove = 0
        while remove < previousCount, remove < durations.count - 1, total - durations[remove] >= minimum {
            total -= durations[remove]
            remove += 1
        }
        guard remove > 0 else { return }
        rendition.window = rendition.window.removingSegmentsFromHead(remove)
        for entry in rendition.entries[..<remove] {
            rendition.retained.append(
                .init(
                    name: entry.name, file: entry.file, aux: entry.aux,
                    deadline: now + entry.duration.microseconds + playlistDuration))
        }
        rendition.entries.removeFirst(remove)
    }

    /// The entry another rendition lists under `msn` (not a guessed gap filler): the duration,
    /// discontinuity sequence number and date to align with.
    func referenceEntry(msn: UInt64, excluding name: String) -> RenditionWindow.Entry? {
        for key in renditions.keys.sorted() where key != name {
            if let entry = renditions[key]!.entry(msn: msn), !entry.guessed { return entry }
        }
        return nil
    }

    /// The extension a segment is served with (that of its upload; `ts` when unknown).
    static func servedExtension(of uri: String) -> String {
        var path = Substring(uri)
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        let ext = IngestPath.fileExtension(name)
        return IngestPath.segmentExtensions.contains(ext) ? ext : "ts"
    }
}
