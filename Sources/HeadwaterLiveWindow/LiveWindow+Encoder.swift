import HeadwaterHLS

/// Reading the encoder's playlists: restarts, and what each listed segment needs to be served.
extension LiveWindow {
    /// What the encoder's playlist says applies to each segment (computed in one pass; the
    /// per-index helpers of ``MediaPlaylist`` would make a long playlist quadratic).
    struct EncoderContext {
        var maps: [MediaInitializationSection?]
        var keys: [[Key]]
        var dates: [ProgramDateTime?]
        var discontinuities: [UInt64]
        /// Each segment's EXT-X-BYTERANGE with its offset made explicit (`nil`: whole resource,
        /// or a range whose offset the playlist does not give).
        var ranges: [(offset: UInt64, length: UInt64)?]

        init(_ playlist: MediaPlaylist) {
            var map: MediaInitializationSection?
            var byFormat: [String: Key] = [:]
            var order: [String] = []
            maps = []
            keys = []
            maps.reserveCapacity(playlist.segments.count)
            keys.reserveCapacity(playlist.segments.count)
            for segment in playlist.segments {
                if let new = segment.tags.map { map = new }
                for key in segment.tags.keys {
                    if byFormat[key.keyFormat] == nil { order.append(key.keyFormat) }
                    byFormat[key.keyFormat] = key
                }
                maps.append(map)
                keys.append(order.compactMap { byFormat[$0] }.filter { $0.method != "NONE" })
            }
            dates = playlist.programDateTimes()
            discontinuities = playlist.discontinuitySequenceNumbers()
            ranges = playlist.resolvedByteRanges()
        }
    }

    enum Verdict: Equatable {
        case continuing
        /// An older copy of a playlist already followed (requests overtaking each other): ignored.
        case stale
        case restart(String)
    }

    /// Takes the encoder's new playlist of a rendition and lists what it can.
    mutating func receive(_ playlist: MediaPlaylist, rendition name: String, path: String, now: Int64) {
        if configuration.clockNumbering, numbering.highest == nil, numbering.current == 0 {
            // The channel's first playlist: its first segment is numbered from the wall clock.
            let base = UInt64(max(0, now / LiveWindow.clockNumberingUnit))
            numbering.epochs[0] = .init(
                start: base, offset: base &- playlist.effectiveMediaSequence,
                discontinuityOffset: base &- playlist.effectiveDiscontinuitySequence, openedAt: now)
            for key in renditions.keys {
                renditions[key]!.offset = numbering.epochs[0].offset
                renditions[key]!.discontinuityOffset = numbering.epochs[0].discontinuityOffset
            }
        }
        var rendition =
            renditions[name]
            ?? RenditionWindow(
                name: name, playlistPath: path, targetDuration: configuration.targetDuration, epoch: numbering.current,
                numbering: numbering.epochs[numbering.current])
        var restarted = false
        switch verdict(rendition, playlist, now: now) {
        case .stale:
            return
        case .restart(let reason):
            restart(&rendition, playlist, reason: reason, now: now)
            rendition.previousEncoder = nil
            restarted = true
        case .continuing:
            rendition.previousEncoder = rendition.encoder
        }
        takeParts(playlist, into: &rendition, restarted: restarted)
        let sequence = playlist.effectiveMediaSequence
        rendition.consumed = rendition.consumed.filter { $0.key >= sequence }
        rendition.encoder = playlist
        rendition.encoderReceivedAt = now
        renditions[name] = rendition
        advance(name, now: now)
    }

    /// Whether `playlist` continues what `rendition` followed, is an old copy, or comes from a
    /// restarted encoder: its media sequence went back (and it is not a copy sent moments before the
    /// one already followed), an MSN already consumed now names another
    /// file (or the same name with other bytes: ffmpeg restarts at `x_00.ts`), or it jumped further
    /// ahead than gap fillers may cover.
    func verdict(_ rendition: RenditionWindow, _ playlist: MediaPlaylist, now: Int64) -> Verdict {
        guard let next = rendition.nextEncoderSequence, let previous = rendition.encoder else { return .continuing }
        let sequence = playlist.effectiveMediaSequence
        var matches = 0
        let ranges = playlist.resolvedByteRanges()
        for (index, segment) in playlist.segments.enumerated() {
            let encoderSequence = sequence &+ UInt64(index)
            guard encoderSequence < next, let identity = rendition.consumed[encoderSequence] else { continue }
            let path = IngestPath.resolve(segment.uri, relativeTo: rendition.playlistPath) ?? segment.uri
            let current = RenditionWindow.Identity(path: path, range: ranges[index], file: uploads[path]?.file)
            if current.path != identity.path
                || (identity.entityTag != nil && current.entityTag != nil && current.entityTag != identity.entityTag)
            {
                return .restart("encoder MSN \(encoderSequence) is now \(segment.uri), a different segment")
            }
            matches += 1
        }
        let end = sequence &+ UInt64(playlist.segments.count)
        if sequence < previous.effectiveMediaSequence || end < next {
            // An old copy overtaken by a newer one arrives right after it; after a silence of 1½
            // TD it is a restarted encoder, even one whose first segments are byte for byte the
            // same as last time (a test pattern, a file looped from its start).
            let recent = now - rendition.encoderReceivedAt < Int64(configuration.targetDuration) * 1_500_000
            if matches > 0, recent { return .stale }
            return .restart("encoder media sequence went back from \(previous.effectiveMediaSequence) to \(sequence)")
        }
        if sequence > next, sequence - next > UInt64(maxFillerRun) {
            return .restart("encoder media sequence jumped from \(next) to \(sequence)")
        }
        return .continuing
    }

    /// Numbering after an encoder restart: the first rendition to see it opens a new epoch whose
    /// numbers start above everything listed (MSN and DSN, so the first new segment carries a
    /// discontinuity); the others join that epoch, so they keep the same numbers. A rendition joins
    /// only a restart seen recently (within a few target durations) whose numbering fits its own;
    /// otherwise it saw another restart, and opens an epoch of its own.
    mutating func restart(_ rendition: inout RenditionWindow, _ playlist: MediaPlaylist, reason: String, now: Int64) {
        let sequence = playlist.effectiveMediaSequence
        let newest = numbering.epochs[numbering.current]
        // A playlist that starts with the segments the epoch left out (``ChannelNumbering/Epoch/skipped``)
        // reaches the epoch's first number with the one after them.
        let reach = sequence &+ newest.offset &+ newest.skipped
        let recent = newest.openedAt >= now &- Int64(configuration.targetDuration) * 4_000_000
        rendition.resumingSince = nil  // a restarted source is numbered as such, restored or not
        if rendition.epoch < numbering.current, recent, reach >= newest.start,
            reach > (rendition.lastMSN ?? 0), reach - newest.start <= UInt64(maxFillerRun)
        {
            rendition.epoch = numbering.current
        } else {
            let start = max(numbering.highest ?? 0, rendition.lastMSN ?? 0) &+ 1
            let discontinuity = max(numbering.highestDiscontinuity, rendition.entries.last?.dsn ?? 0) &+ 1
            let first = playlist.discontinuitySequenceNumbers().first ?? playlist.effectiveDiscontinuitySequence
            numbering.epochs.append(
                .init(
                    start: start, offset: start &- sequence, discontinuityOffset: discontinuity &- first, openedAt: now)
            )
            rendition.epoch = numbering.current
            report(
                .encoderRestart, rendition.name, "\(reason); numbering continues at MSN \(start) after a discontinuity")
        }
        rendition.offset = numbering.epochs[rendition.epoch].offset
        rendition.discontinuityOffset = numbering.epochs[rendition.epoch].discontinuityOffset
        rendition.nextEncoderSequence = sequence
        rendition.consumed = [:]
        rendition.stale = Dictionary(
            rendition.history.map { ($0.path, $0.upload) }, uniquingKeysWith: { _, last in last })
        rendition.history = []
        rendition.reportedBlocked = nil
        rendition.fillerSince = nil  // the restart's epoch already numbers above any stall filler
    }

    /// The encoder's segment `index`, rewritten for serving, or why it cannot be listed.
    func candidate(
        _ playlist: MediaPlaylist, _ index: Int, _ context: EncoderContext, _ rendition: RenditionWindow
    )
        -> Candidate
    {
        let source = playlist.segments[index]
        var segment = MediaSegment(uri: source.uri, duration: source.duration, title: source.title)
        segment.tags.dateRanges = source.tags.dateRanges.map { range in
            // A restarted encoder reuses its IDs; a range ID must never be reused (D16).
            guard rendition.epoch > 0 else { return range }
            var range = range
            range.attributes["ID"] = .quoted("\(range.id)-r\(rendition.epoch)")
            return range
        }
        segment.tags.adMarkers = source.tags.adMarkers
        segment.tags.gap = source.tags.gap
        var candidate = Candidate(segment: segment)
        candidate.encoderDiscontinuity = context.discontinuities[index]
        candidate.encoderDate = context.dates[index]
        func missing(_ reason: String, permanent: Bool) -> Candidate {
            candidate.missing = (reason, permanent)
            return candidate
        }
        if let map = context.maps[index] {
            // A MAP BYTERANGE without an offset starts at byte 0 (§4.4.4.5); served with it explicit.
            let range = map.byteRange.map { ByteRange(length: $0.length, offset: $0.offset ?? 0) }
            if let remote = remoteURI(map.uri) {
                candidate.map = MediaInitializationSection(uri: remote, byteRange: range)
            } else {
                guard let path = IngestPath.resolve(map.uri, relativeTo: rendition.playlistPath) else {
                    return missing("EXT-X-MAP \(map.uri) cannot be served (absolute URI)", permanent: true)
                }
                guard let upload = uploads[path] else {
                    return missing("EXT-X-MAP \(path) not uploaded yet", permanent: false)
                }
                if let range, let shortfall = Self.shortfall(upload.file, range) {
                    return missing("EXT-X-MAP \(path) \(shortfall)", permanent: false)
                }
                let name = "\(configuration.runTag)-init\(upload.sequence).\(IngestPath.fileExtension(path))"
                candidate.aux[name] = upload.file
                candidate.map = MediaInitializationSection(uri: "\(rendition.name)/\(name)", byteRange: range)
            }
        }
        for key in context.keys[index] {
            guard let uri = key.uri, let path = IngestPath.resolve(uri, relativeTo: rendition.playlistPath) else {
                candidate.keys.append(key)  // a key server's absolute URI (or skd://) is the client's business
                continue
            }
            guard let upload = uploads[path] else { return missing("key \(path) not uploaded yet", permanent: false) }
            let name = "\(configuration.runTag)-key\(upload.sequence).key"
            candidate.aux[name] = upload.file
            var served = key
            served.attributes["URI"] = .quoted("\(rendition.name)/\(name)")
            candidate.keys.append(served)
        }
        if source.tags.gap { return candidate }
        if source.byteRange != nil {
            guard let range = context.ranges[index] else {
                return missing("EXT-X-BYTERANGE without an offset and no previous range of \(source.uri)", permanent: true)
            }
            candidate.byteRange = ByteRange(length: range.length, offset: range.offset)
        }
        // A remote segment is listed under its absolute URI as soon as the playlist lists it.
        if remoteURI(source.uri) != nil { return candidate }
        guard let path = IngestPath.resolve(source.uri, relativeTo: rendition.playlistPath) else {
            return missing("an absolute URI cannot name an uploaded file", permanent: true)
        }
        guard let upload = mediaUpload(path, rendition) else {
            return missing("\(path) not uploaded yet", permanent: false)
        }
        if let range = candidate.byteRange, let shortfall = Self.shortfall(upload.file, range) {
            return missing("\(path) \(shortfall)", permanent: false)
        }
        candidate.file = upload.file
        candidate.upload = upload.sequence
        candidate.completedAt = upload.completedAt
        candidate.media = upload.media
        return candidate
    }

    /// `uri` when it is an absolute `http(s)` URI and the window lists remote segments
    /// (``Configuration/listsRemoteSegments``); `nil` otherwise.
    func remoteURI(_ uri: String) -> String? {
        guard configuration.listsRemoteSegments else { return nil }
        let lowered = uri.prefix(8).lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://") ? uri : nil
    }

    /// Whether `candidate` is listed as a remote segment: under its absolute URI, with no file.
    func isRemote(_ candidate: Candidate) -> Bool {
        candidate.file == nil && !candidate.segment.tags.gap && remoteURI(candidate.segment.uri) != nil
    }

    /// Why `file` cannot serve `range` (an upload of a growing file that does not reach it yet),
    /// or `nil` when it can.
    static func shortfall(_ file: SegmentFile, _ range: ByteRange) -> String? {
        let (end, overflow) = (range.offset ?? 0).addingReportingOverflow(range.length)
        guard overflow || end > UInt64(max(0, file.length)) else { return nil }
        return "holds \(file.length) bytes; EXT-X-BYTERANGE \(range) needs \(overflow ? "more" : "\(end)")"
    }

    /// Whether segment `index` could be listed now (its upload, init section and keys are here).
    func isAvailable(
        _ playlist: MediaPlaylist, _ index: Int, _ context: EncoderContext, _ rendition: RenditionWindow
    )
        -> Bool
    {
        candidate(playlist, index, context, rendition).missing == nil
    }

    /// The upload of a media segment the encoder's newest playlist may refer to: not bytes the
    /// previous run consumed under a reused name, and not completed more than 1.5 target durations
    /// after that playlist arrived (a later upload under that name belongs to a later playlist,
    /// typically of a restarted encoder).
    func mediaUpload(_ path: String, _ rendition: RenditionWindow) -> Upload? {
        guard let upload = uploads[path], rendition.stale[path] != upload.sequence,
            upload.completedAt - rendition.encoderReceivedAt <= Int64(configuration.targetDuration) * 1_500_000
        else { return nil }
        return upload
    }

    /// Media time of the listable segments from `index` on, up to what any decision needs.
    func availableMedia(
        _ playlist: MediaPlaylist, from index: Int, _ context: EncoderContext, _ rendition: RenditionWindow
    )
        -> HLSDuration
    {
        var total = HLSDuration.zero
        let enough = HLSDuration(microseconds: Int64(configuration.targetDuration) * 1_500_000)
        var current = index
        while current < playlist.segments.count, total < enough {
            if isAvailable(playlist, current, context, rendition) { total += playlist.segments[current].duration }
            current += 1
        }
        return total
    }
}
