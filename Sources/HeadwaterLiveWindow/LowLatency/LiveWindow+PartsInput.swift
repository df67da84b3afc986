import HeadwaterHLS

/// Reading an encoder's low-latency playlists (HLS-RULES F2, F3): what it says about parts is checked
/// before anything changes, so a playlist that contradicts itself or an earlier one is refused whole
/// and the published window stays as it was.
extension LiveWindow {
    /// The parts each segment of `playlist` lists, by encoder media sequence number; the open
    /// segment (after the last URI) is the one after the last listed.
    static func encoderParents(_ playlist: MediaPlaylist) -> [UInt64: RenditionParts.EncoderParent] {
        func convert(_ parts: [PartialSegment]) -> [RenditionParts.EncoderPart] {
            var previousEnd: UInt64?
            return parts.map { part in
                var range = part.byteRange
                if let given = range {
                    // Without an offset a range continues the previous part of the same parent (F3).
                    let offset = given.offset ?? previousEnd ?? 0
                    range = ByteRange(length: given.length, offset: offset)
                    let (end, overflow) = offset.addingReportingOverflow(given.length)
                    previousEnd = overflow ? .max : end
                } else {
                    previousEnd = nil
                }
                return .init(
                    uri: part.uri, duration: part.duration, range: range, independent: part.isIndependent,
                    gap: part.isGap)
            }
        }
        let sequence = playlist.effectiveMediaSequence
        var parents: [UInt64: RenditionParts.EncoderParent] = [:]
        for (index, segment) in playlist.segments.enumerated() where !segment.tags.parts.isEmpty {
            parents[sequence &+ UInt64(index)] = .init(parts: convert(segment.tags.parts), complete: true)
        }
        if !playlist.trailingTags.parts.isEmpty {
            parents[sequence &+ UInt64(playlist.segments.count)] = .init(
                parts: convert(playlist.trailingTags.parts), complete: false)
        }
        return parents
    }

    /// Refuses (422) an encoder playlist whose parts Headwater could not publish as they are:
    /// - parts without PART-INF (F2), or a PART-TARGET other than the one this run started with;
    /// - a part longer than PART-TARGET, or (not independent, not a gap, not last) shorter than 85 %
    ///   of it (F3);
    /// - the parts of a complete segment that do not add up to its EXTINF within 1 ms (F3);
    /// - parts of a segment that contradict what an earlier playlist of the same encoder run listed
    ///   for it (other URIs, durations or ranges; an open segment may only gain parts).
    func checkParts(_ playlist: MediaPlaylist, rendition name: String, path: String, now: Int64) throws(IngestRefusal) {
        let parents = Self.encoderParents(playlist)
        guard !parents.isEmpty else { return }
        func refuse(_ message: String) -> IngestRefusal { IngestRefusal("\(path): \(message)", reason: .malformedPlaylist) }
        guard let partTarget = playlist.partInformation?.partTarget, partTarget > .zero else {
            throw refuse("EXT-X-PART without EXT-X-PART-INF PART-TARGET (F2)")
        }
        var continuing = false
        if let rendition = renditions[name] {
            if case .restart = verdict(rendition, playlist, now: now) {} else { continuing = true }
            if continuing, let known = rendition.parts.partTarget, known != partTarget {
                throw refuse("PART-TARGET changed from \(known) to \(partTarget) s without an encoder restart")
            }
        }
        let target = partTarget.microseconds
        let minimum = (target * 17 + 19) / 20  // 85 %, rounded up, as the validator checks it
        let sequence = playlist.effectiveMediaSequence
        for key in parents.keys.sorted() {
            let parent = parents[key]!
            for (index, part) in parent.parts.enumerated() {
                if part.duration > partTarget {
                    throw refuse("part \(part.uri) lasts \(part.duration) s, longer than PART-TARGET \(partTarget) s (F3)")
                }
                let isLast = index == parent.parts.count - 1
                let nextIsGap = !isLast && parent.parts[index + 1].gap
                if part.duration.microseconds < minimum, !part.independent, !part.gap, !nextIsGap, !isLast {
                    throw refuse(
                        "part \(part.uri) lasts \(part.duration) s, under 85 % of PART-TARGET \(partTarget) s; only independent, gap or final parts may be shorter (F3)")
                }
            }
            if parent.complete {
                let segment = playlist.segments[Int(key - sequence)]
                let total = parent.parts.reduce(Int64(0)) { $0 &+ $1.duration.microseconds }
                if abs(total &- segment.duration.microseconds) > 1_000 {
                    throw refuse(
                        "the parts of \(segment.uri) add up to \(HLSDuration(microseconds: total)) s but its EXTINF is \(segment.duration) s (F3)")
                }
            }
            if continuing, let known = renditions[name]!.parts.encoder[key], !Self.consistent(known, parent) {
                throw refuse(
                    "the parts listed for segment \(key) (\(parent.parts.first?.uri ?? "")…) contradict those an earlier playlist listed for it")
            }
        }
    }

    /// Whether two lists of one segment's parts can both be true: equal when both are final, else
    /// the open one begins the other.
    static func consistent(_ a: RenditionParts.EncoderParent, _ b: RenditionParts.EncoderParent) -> Bool {
        if a.complete, b.complete { return a.parts == b.parts }
        if a.complete { return a.parts.starts(with: b.parts) }
        if b.complete { return b.parts.starts(with: a.parts) }
        return a.parts.starts(with: b.parts) || b.parts.starts(with: a.parts)
    }

    /// Takes what a (checked, followed) encoder playlist says about parts: its PART-TARGET, the parts
    /// of its segments and its hint; reports, once each, what its SERVER-CONTROL gets wrong by F1.
    mutating func takeParts(_ playlist: MediaPlaylist, into rendition: inout RenditionWindow, restarted: Bool) {
        if restarted { dropParts(of: &rendition, keepingListed: true) }
        guard let partTarget = playlist.partInformation?.partTarget, partTarget > .zero else {
            if rendition.parts.partTarget != nil {
                dropParts(of: &rendition, keepingListed: true)
                rendition.parts.partTarget = nil
                rendition.parts.version += 1
            }
            return
        }
        if rendition.parts.partTarget != partTarget {
            rendition.parts.partTarget = partTarget
            rendition.parts.version += 1
        }
        let deviations = LowLatencyPolicy.deviations(
            of: playlist.serverControl, partTarget: partTarget, targetDuration: playlist.targetDuration)
        for deviation in deviations where rendition.parts.reported.insert(deviation).inserted {
            report(
                .serverControlDeviation, rendition.name,
                "the encoder's EXT-X-SERVER-CONTROL: \(deviation); Headwater serves its own (F1)")
        }
        let sequence = playlist.effectiveMediaSequence
        for (key, parent) in Self.encoderParents(playlist) {
            if let known = rendition.parts.encoder[key], known.complete, !parent.complete { continue }
            rendition.parts.encoder[key] = parent
        }
        let oldest = min(sequence, rendition.nextEncoderSequence ?? sequence)
        rendition.parts.encoder = rendition.parts.encoder.filter { $0.key >= oldest }
        let open = sequence &+ UInt64(playlist.segments.count)
        rendition.parts.encoderHint = playlist.preloadHints.first { $0.type == "PART" }.map {
            (sequence: open, index: playlist.trailingTags.parts.count, hint: $0)
        }
    }

    /// Forgets what the encoder said about parts, and the open segment's listed parts (their
    /// numbering may not hold any more); `keepingListed` keeps those of listed segments, whose
    /// files stay fetchable while the segment is in the window.
    mutating func dropParts(of rendition: inout RenditionWindow, keepingListed: Bool) {
        let last = rendition.lastMSN
        for (msn, parts) in rendition.parts.listed where !keepingListed || last.map({ msn > $0 }) ?? true {
            candidates.append(contentsOf: parts.compactMap(\.file?.path))
            rendition.parts.listed[msn] = nil
            rendition.parts.version += 1
        }
        rendition.parts.reset()
    }
}
