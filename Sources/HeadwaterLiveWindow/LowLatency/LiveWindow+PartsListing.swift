import HeadwaterHLS

/// Listing an encoder's parts (HLS-RULES F3, F4, F5, F17): a part is listed only once its file is
/// complete (the same rule as for segments, B14), under a name of Headwater's that the preload
/// hint announces before the part exists; one the encoder listed but never uploaded is given up
/// after three part targets and listed as GAP=YES, so the parts after it can be listed.
extension LiveWindow {
    /// The stored file of an encoder part, when its upload is complete (and covers its range) and
    /// is not one an earlier encoder run listed under the same name; a listed one is remembered, so
    /// that after a restart the name is not taken for the new run's part (``restart(_:_:reason:now:)``).
    mutating func partFile(_ part: RenditionParts.EncoderPart, _ rendition: inout RenditionWindow) -> SegmentFile? {
        guard !part.gap, let path = IngestPath.resolve(part.uri, relativeTo: rendition.playlistPath),
            let upload = uploads[path], rendition.stale[path] != upload.sequence
        else { return nil }
        if let range = part.range, Self.shortfall(upload.file, range) != nil { return nil }
        if !rendition.history.contains(where: { $0.path == path && $0.upload == upload.sequence }) {
            rendition.remember(path: path, upload: upload.sequence)
        }
        return upload.file
    }

    /// Headwater's name of part `index` of segment `msn` (`{run}-{msn}-p{index}.{ext}`): known before
    /// the part exists, so a hint and the part it announces name the same URI (F4).
    func partName(msn: UInt64, index: Int, uri: String) -> String {
        "\(configuration.runTag)-\(msn)-p\(index).\(Self.servedExtension(of: uri))"
    }

    /// An encoder part as listed: served name, file (`nil`: GAP=YES) and tag.
    func listedPart(
        _ part: RenditionParts.EncoderPart, msn: UInt64, index: Int, file: SegmentFile?, _ rendition: RenditionWindow
    ) -> RenditionParts.Listed {
        let name = partName(msn: msn, index: index, uri: part.uri)
        var tag = PartialSegment(
            uri: "\(rendition.name)/\(name)", duration: part.duration, independent: part.independent, byteRange: part.range)
        if file == nil { tag.attributes["GAP"] = .token("YES") }
        return .init(name: name, file: file, tag: tag)
    }

    /// The parts of segment `msn`, just listed from encoder segment `encoderSequence`: the encoder's
    /// final list, each part with its file or, when that never arrived, as GAP=YES. None when the
    /// segment is a gap or the final list is not known (its sum would not match the EXTINF, F3).
    mutating func completeParts(
        _ rendition: inout RenditionWindow, msn: UInt64, encoderSequence: UInt64, listed file: SegmentFile?
    ) {
        guard rendition.parts.partTarget != nil, file != nil,
            let parent = rendition.parts.encoder[encoderSequence], parent.complete
        else { return }
        var parts: [RenditionParts.Listed] = []
        for (index, part) in parent.parts.enumerated() {
            let stored = partFile(part, &rendition)
            if stored == nil, !part.gap, rendition.parts.gaveUp[msn]?.contains(index) != true {
                report(
                    .missingPart, rendition.name,
                    "part \(index) (\(part.uri)) of MSN \(msn) was not uploaded by the time its segment was; listed as GAP=YES")
            }
            parts.append(listedPart(part, msn: msn, index: index, file: stored, rendition))
        }
        rendition.parts.listed[msn] = parts
        rendition.parts.version += 1
        if rendition.parts.waiting?.msn == msn { rendition.parts.waiting = nil }
    }

    /// Whether the open segment (`lastMSN + 1`) can list parts: it continues the tail under the next
    /// number and without a discontinuity (one would have to precede its first part, F3, with a date
    /// only its completion fixes), in the current numbering, with no stall filler or restore pending.
    func opensCleanly(_ rendition: RenditionWindow) -> Bool {
        guard let tail = rendition.entries.last, let next = rendition.nextEncoderSequence,
            let playlist = rendition.encoder, rendition.epoch == numbering.current, rendition.resumingSince == nil,
            rendition.fillerSince == nil, next &+ rendition.offset == tail.msn &+ 1,
            next >= playlist.effectiveMediaSequence
        else { return false }
        let index = next - playlist.effectiveMediaSequence
        let count = UInt64(playlist.segments.count)
        let encoderDiscontinuity: UInt64
        if index < count {
            encoderDiscontinuity = playlist.discontinuitySequenceNumbers()[Int(index)]
        } else if index == count {
            let last = playlist.discontinuitySequenceNumbers().last ?? playlist.effectiveDiscontinuitySequence
            encoderDiscontinuity = last &+ (playlist.trailingTags.discontinuity ? 1 : 0)
        } else {
            return false
        }
        return encoderDiscontinuity &+ rendition.discontinuityOffset == tail.dsn
    }

    /// Lists the open segment's parts whose files are complete, gives up on one the encoder listed
    /// three part targets ago that never arrived (GAP=YES, reported once), and hints the next part:
    /// the first one not listed, as the encoder listed or hinted it (F4, F17). Also forgets the parts
    /// of segments that left the window.
    mutating func updateOpenParts(_ rendition: inout RenditionWindow, now: Int64) {
        let before = rendition.parts.version
        defer { if rendition.parts.version != before { outcome.changed = true } }
        if let first = rendition.entries.first?.msn {
            for (msn, parts) in rendition.parts.listed where msn < first {
                candidates.append(contentsOf: parts.compactMap(\.file?.path))
                rendition.parts.listed[msn] = nil
            }
            rendition.parts.gaveUp = rendition.parts.gaveUp.filter { $0.key >= first }
        }
        guard let partTarget = rendition.parts.partTarget, opensCleanly(rendition),
            let last = rendition.lastMSN, let next = rendition.nextEncoderSequence
        else {
            if let last = rendition.lastMSN, rendition.parts.listed[last &+ 1] != nil || rendition.parts.hint != nil {
                if let open = rendition.parts.listed.removeValue(forKey: last &+ 1) {
                    candidates.append(contentsOf: open.compactMap(\.file?.path))
                }
                rendition.parts.hint = nil
                rendition.parts.version += 1
            }
            rendition.parts.waiting = nil
            return
        }
        let open = last &+ 1
        let known = rendition.parts.encoder[next]?.parts ?? []
        var listed = rendition.parts.listed[open] ?? []
        if listed.count > known.count { listed = [] }
        var index = listed.count
        while index < known.count {
            let part = known[index]
            if let file = partFile(part, &rendition) {
                listed.append(listedPart(part, msn: open, index: index, file: file, rendition))
            } else if part.gap {
                listed.append(listedPart(part, msn: open, index: index, file: nil, rendition))
            } else {
                // Listed by the encoder, not uploaded (yet): hinted while it may still come.
                if rendition.parts.waiting.map({ $0.msn != open || $0.index != index }) ?? true {
                    rendition.parts.waiting = (msn: open, index: index, since: now)
                }
                guard now - rendition.parts.waiting!.since >= 3 * partTarget.microseconds else { break }
                report(
                    .missingPart, rendition.name,
                    "part \(index) (\(part.uri)) of MSN \(open) not uploaded \(HLSDuration(microseconds: 3 * partTarget.microseconds)) s after the encoder listed it; hint dropped, listed as GAP=YES")
                listed.append(listedPart(part, msn: open, index: index, file: nil, rendition))
                rendition.parts.gaveUp[open, default: []].insert(index)
            }
            index += 1
        }
        if index == known.count { rendition.parts.waiting = nil }
        if listed.map(\.tag) != (rendition.parts.listed[open] ?? []).map(\.tag) {
            rendition.parts.listed[open] = listed.isEmpty ? nil : listed
            rendition.parts.version += 1
        }
        let hint = nextHint(rendition, open: open, encoderSequence: next, index: index, known: known)
        if hint != rendition.parts.hint {
            rendition.parts.hint = hint
            rendition.parts.version += 1
        }
    }

    /// The hint for part `index` of the open segment: the encoder's part not uploaded yet, or the
    /// part the encoder hinted; none when the encoder's list of the segment is final (the next part
    /// belongs to a segment whose numbering is not settled until this one is listed).
    private func nextHint(
        _ rendition: RenditionWindow, open: UInt64, encoderSequence: UInt64, index: Int,
        known: [RenditionParts.EncoderPart]
    ) -> PreloadHint? {
        if index < known.count {
            let part = known[index]
            return Self.partHint(
                uri: "\(rendition.name)/\(partName(msn: open, index: index, uri: part.uri))",
                start: part.range?.offset, length: part.range?.length)
        }
        guard rendition.parts.encoder[encoderSequence]?.complete != true, let hinted = rendition.parts.encoderHint,
            hinted.sequence == encoderSequence, hinted.index == index
        else { return nil }
        return Self.partHint(
            uri: "\(rendition.name)/\(partName(msn: open, index: index, uri: hinted.hint.uri))",
            start: hinted.hint.attributes.integer("BYTERANGE-START"),
            length: hinted.hint.attributes.integer("BYTERANGE-LENGTH"))
    }

    /// `EXT-X-PRELOAD-HINT:TYPE=PART` for `uri`, with the byte range when the part is one.
    static func partHint(uri: String, start: UInt64?, length: UInt64?) -> PreloadHint {
        var attributes: AttributeList = [Attribute("TYPE", .token("PART")), Attribute("URI", .quoted(uri))]
        if let start, start > 0 { attributes["BYTERANGE-START"] = .integer(start) }
        if let length { attributes["BYTERANGE-LENGTH"] = .integer(length) }
        return PreloadHint(attributes: attributes)
    }

    /// `playlist` (the listed window of `rendition`) as published with parts: PART-INF with the
    /// encoder's PART-TARGET, Headwater's SERVER-CONTROL, the parts of the segments of the last three
    /// target durations and of the open segment, and the hint. Unchanged for an encoder without parts.
    func addParts(to playlist: inout MediaPlaylist, _ rendition: RenditionWindow) {
        guard let partTarget = rendition.parts.partTarget, !playlist.endList, let last = rendition.lastMSN else { return }
        playlist.partInformation = PartInformation(partTarget: partTarget)
        playlist.serverControl = LowLatencyPolicy.serverControl(
            partTarget: partTarget, targetDuration: configuration.targetDuration, skipsDateRanges: false)
        let open = rendition.parts.listed[last &+ 1] ?? []
        var age = open.reduce(Int64(0)) { $0 + $1.tag.duration.microseconds }
        for index in playlist.segments.indices.reversed() {
            age += playlist.segments[index].duration.microseconds
            guard LowLatencyPolicy.listsParts(age: age, targetDuration: configuration.targetDuration) else { break }
            if let parts = rendition.parts.listed[playlist.mediaSequenceNumber(at: index)] {
                playlist.segments[index].tags.parts = parts.map(\.tag)
            }
        }
        playlist.trailingTags.parts = open.map(\.tag)
        playlist.preloadHints = rendition.parts.hint.map { [$0] } ?? []
    }
}
