import HeadwaterHLS
import HeadwaterMedia

/// Saving a window and restoring it after a restart (``WindowRecord``).
///
/// What comes back: every rendition's playlist (the same bytes), its files, what was removed but is
/// still fetchable (C7), the numbering and how the source's numbers map to it, the uploads, the
/// multivariant playlist and the status counters. What does not: an upload in progress, a stall in
/// progress (detection starts again), the render caches.
///
/// A restored rendition *resumes*: if the source's next segment arrives and continues what was
/// listed, it is listed right after the last one as if nothing happened; if segments were lost while
/// Headwater was down (the encoder's uploads failed), they are skipped and numbering continues
/// after one `EXT-X-DISCONTINUITY` (``LiveWindow/list(_:from:now:)``); a source that restarted
/// meanwhile is an encoder restart as always.
extension LiveWindow {
    /// This window as a record to save, with file paths inside `directory` made relative to it.
    public func record(directory: String, savedAt: Int64) -> WindowRecord {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        func stored(_ file: SegmentFile) -> WindowRecord.File {
            let path = file.path.hasPrefix(prefix) ? String(file.path.dropFirst(prefix.count)) : file.path
            return WindowRecord.File(
                path: path, length: file.length, entityTag: file.entityTag, contentType: file.contentType,
                lastModified: file.lastModified, keyFrame: file.keyFrame.map(Self.record))
        }
        var renditionRecords: [WindowRecord.Rendition] = []
        for name in renditions.keys.sorted() {
            let rendition = renditions[name]!
            let segments = zip(rendition.entries, rendition.window.segments).map { entry, segment in
                WindowRecord.Segment(
                    msn: entry.msn, dsn: entry.dsn, uri: segment.uri, name: entry.name,
                    duration: entry.duration.microseconds, date: entry.date.description,
                    discontinuity: segment.tags.discontinuity, file: entry.file.map(stored),
                    aux: entry.aux.mapValues(stored), guessed: entry.guessed, filler: entry.filler)
            }
            let retained = rendition.retained.map { removed in
                WindowRecord.Retained(
                    name: removed.name, file: removed.file.map(stored), aux: removed.aux.mapValues(stored),
                    deadline: removed.deadline)
            }
            let following = WindowRecord.Following(
                offset: rendition.offset, discontinuityOffset: rendition.discontinuityOffset,
                nextSourceSequence: rendition.nextEncoderSequence,
                sourcePlaylist: rendition.encoder.map { PlaylistSerializer.string($0) },
                sourceReceivedAt: rendition.encoderReceivedAt,
                consumed: rendition.consumed.sorted { $0.key < $1.key }.map {
                    .init(number: $0.key, path: $0.value.path, entityTag: $0.value.entityTag)
                },
                history: rendition.history.map { .init(number: $0.upload, path: $0.path, entityTag: nil) },
                stale: rendition.stale.sorted { $0.key < $1.key }.map { .init(number: $0.value, path: $0.key, entityTag: nil) })
            renditionRecords.append(
                WindowRecord.Rendition(
                    name: name, playlistPath: rendition.playlistPath, playlist: PlaylistSerializer.string(rendition.window),
                    segments: segments, retained: retained, published: rendition.published,
                    codecs: rendition.media?.codecs, resolution: rendition.media?.resolution,
                    frameRate: rendition.media?.frameRate, slateIndex: rendition.slateIndex,
                    listingFillers: rendition.fillerSince != nil, following: following))
        }
        let uploadRecords = uploads.sorted { $0.key < $1.key }.map { path, upload in
            WindowRecord.Upload(
                path: path, file: stored(upload.file), completedAt: upload.completedAt, sequence: upload.sequence,
                codecs: upload.media?.codecs, resolution: upload.media?.resolution, frameRate: upload.media?.frameRate)
        }
        let multivariantRecord = WindowRecord.Multivariant(
            sourcePath: pushedMultivariant?.path, source: pushedMultivariant.map { PlaylistSerializer.string($0.playlist) },
            published: multivariant.playlist.map { PlaylistSerializer.string($0) }, version: multivariant.version,
            advertised: multivariant.advertised,
            advertisedIFrames: multivariant.advertisedIFrames.mapValues { [$0.peak, $0.average] })
        return WindowRecord(
            channel: configuration.channel, targetDuration: configuration.targetDuration,
            runTag: configuration.runTag, savedAt: savedAt, renditions: renditionRecords,
            highestMediaSequence: numbering.highest, highestDiscontinuitySequence: numbering.highestDiscontinuity,
            uploads: uploadRecords, nextUploadSequence: nextUploadSequence, multivariant: multivariantRecord,
            ingested: ingested, stalls: stallHistory)
    }

    /// The window `record` describes, under `configuration` (this run's: its run tag names the files
    /// it stores from now on), at `now`.
    ///
    /// - Parameters:
    ///   - directory: the channel's store directory, against which relative paths resolve.
    ///   - isIntact: whether a stored file is all there (the caller looks: this target does no I/O).
    ///     A listed segment whose file (or init section, or key) is not is removed from the head of
    ///     the window, or listed as `EXT-X-GAP` behind the head: removing it there would renumber
    ///     every segment after it (C1).
    /// - Throws: when the record is for another channel or target duration (B2: a channel's target
    ///   duration never changes), or its playlists do not parse or contradict its segment list.
    public static func restored(
        from record: WindowRecord, configuration: Configuration, directory: String, now: Int64,
        isIntact: (SegmentFile) -> Bool
    ) throws(WindowRecord.RestoreError) -> (window: LiveWindow, summary: WindowRecord.RestoreSummary) {
        guard record.channel == configuration.channel else {
            throw .init("the saved window is channel \(record.channel)'s, not \(configuration.channel)'s")
        }
        guard record.targetDuration == configuration.targetDuration else {
            throw .init(
                "the saved window has EXT-X-TARGETDURATION \(record.targetDuration), the channel now \(configuration.targetDuration); a target duration never changes (B2)")
        }
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        var summary = WindowRecord.RestoreSummary()
        func file(_ stored: WindowRecord.File) -> SegmentFile {
            SegmentFile(
                path: stored.path.hasPrefix("/") ? stored.path : prefix + stored.path, length: stored.length,
                entityTag: stored.entityTag, contentType: stored.contentType, lastModified: stored.lastModified,
                keyFrame: stored.keyFrame.flatMap(Self.keyFrame))
        }
        var window = LiveWindow(configuration: configuration)
        window.ingested = record.ingested
        window.stallHistory = record.stalls
        for stored in record.uploads {
            let upload = Upload(
                file: file(stored.file), completedAt: stored.completedAt, sequence: stored.sequence,
                media: MediaInfo(codecs: stored.codecs, resolution: stored.resolution, frameRate: stored.frameRate))
            guard isIntact(upload.file) else { continue }
            window.uploads[stored.path] = upload
            summary.files.insert(upload.file.path)
        }
        var nextUpload = max(record.nextUploadSequence, (window.uploads.values.map(\.sequence).max() ?? 0) + 1)
        var highest = record.highestMediaSequence
        var firstMSN: UInt64?
        for stored in record.renditions {
            var rendition = try restoredRendition(stored, file: file, now: now, isIntact: isIntact, summary: &summary)
            if let last = rendition.lastMSN { highest = max(highest ?? last, last) }
            if let first = rendition.entries.first?.msn { firstMSN = min(firstMSN ?? first, first) }
            nextUpload = max(nextUpload, (rendition.history.map(\.upload).max() ?? 0) + 1)
            rendition.epoch = 0
            window.renditions[stored.name] = rendition
        }
        window.nextUploadSequence = nextUpload
        // One epoch for everything restored: a source restart or a loss opens the next one, whose
        // numbers start above `highest`.
        let reference = window.renditions.values.first { $0.nextEncoderSequence != nil }
        window.numbering.epochs = [
            .init(
                start: firstMSN ?? 0, offset: reference?.offset ?? 0,
                discontinuityOffset: reference?.discontinuityOffset ?? 0, openedAt: .min)
        ]
        window.numbering.highest = highest
        window.numbering.highestDiscontinuity = max(
            record.highestDiscontinuitySequence, window.renditions.values.compactMap { $0.entries.last?.dsn }.max() ?? 0)
        let parser = PlaylistParser()
        if let path = record.multivariant.sourcePath, let text = record.multivariant.source {
            guard let playlist = try? parser.parseMultivariant(Array(text.utf8)) else {
                throw .init("the saved source multivariant playlist does not parse")
            }
            window.pushedMultivariant = (path, playlist)
        }
        if let text = record.multivariant.published {
            guard let playlist = try? parser.parseMultivariant(Array(text.utf8)) else {
                throw .init("the saved multivariant playlist does not parse")
            }
            window.multivariant.playlist = playlist
        }
        window.multivariant.version = record.multivariant.version
        window.multivariant.advertised = record.multivariant.advertised
        window.multivariant.advertisedIFrames = record.multivariant.advertisedIFrames.compactMapValues { pair in
            pair.count == 2 ? (peak: pair[0], average: pair[1]) : nil
        }
        return (window, summary)
    }

    private static func restoredRendition(
        _ stored: WindowRecord.Rendition, file: (WindowRecord.File) -> SegmentFile, now: Int64,
        isIntact: (SegmentFile) -> Bool, summary: inout WindowRecord.RestoreSummary
    ) throws(WindowRecord.RestoreError) -> RenditionWindow {
        let name = stored.name
        guard IngestPath.isValidRenditionName(name) else { throw .init("saved rendition name \"\(name)\" is not valid") }
        guard var playlist = try? PlaylistParser().parseMedia(Array(stored.playlist.utf8)) else {
            throw .init("the saved playlist of rendition \(name) does not parse")
        }
        guard playlist.segments.count == stored.segments.count else {
            throw .init(
                "rendition \(name): the saved playlist lists \(playlist.segments.count) segments, its segment list \(stored.segments.count)")
        }
        let dsns = playlist.discontinuitySequenceNumbers()
        var entries: [RenditionWindow.Entry] = []
        for (index, segment) in stored.segments.enumerated() {
            let listed = playlist.segments[index]
            guard segment.uri == listed.uri, segment.msn == playlist.mediaSequenceNumber(at: index), segment.dsn == dsns[index],
                segment.duration == listed.duration.microseconds, segment.discontinuity == listed.tags.discontinuity,
                let date = ProgramDateTime(iso8601: segment.date)
            else {
                throw .init("rendition \(name): saved segment \(index) (MSN \(segment.msn)) does not match the saved playlist")
            }
            entries.append(
                .init(
                    msn: segment.msn, name: segment.name, file: segment.file.map(file), aux: segment.aux.mapValues(file),
                    date: date, duration: listed.duration, dsn: segment.dsn, guessed: segment.guessed, filler: segment.filler))
        }
        // Segments whose files did not survive: out from the head, EXT-X-GAP behind it.
        func intact(_ entry: RenditionWindow.Entry) -> Bool {
            entry.file.map(isIntact) ?? true && entry.aux.values.allSatisfy(isIntact)
        }
        let head = entries.prefix { !intact($0) }.count
        if head > 0 {
            summary.dropped += entries.prefix(head).map { "\(name)/\($0.name)" }
            playlist = playlist.removingSegmentsFromHead(head)
            entries.removeFirst(head)
        }
        for index in entries.indices where !intact(entries[index]) {
            summary.gapped.append("\(name)/\(entries[index].name)")
            entries[index].file = nil
            entries[index].aux = [:]
            playlist.segments[index].tags.gap = true
        }
        for entry in entries {
            if let file = entry.file { summary.files.insert(file.path) }
            summary.files.formUnion(entry.aux.values.map(\.path))
        }
        summary.listed[name] = entries.count

        var rendition = RenditionWindow(
            name: name, playlistPath: stored.playlistPath, targetDuration: playlist.targetDuration, epoch: 0,
            numbering: .init(start: 0, offset: 0, discontinuityOffset: 0, openedAt: .min))
        rendition.window = playlist
        rendition.entries = entries
        for removed in stored.retained {
            let retained = RenditionWindow.Retained(
                name: removed.name, file: removed.file.map(file), aux: removed.aux.mapValues(file),
                deadline: removed.deadline)
            guard retained.deadline > now, retained.file.map(isIntact) ?? true, retained.aux.values.allSatisfy(isIntact)
            else {
                summary.expired += 1
                continue
            }
            if let file = retained.file { summary.files.insert(file.path) }
            summary.files.formUnion(retained.aux.values.map(\.path))
            rendition.retained.append(retained)
        }
        rendition.published = stored.published
        if let codecs = stored.codecs {
            rendition.media = MediaInfo(codecs: codecs, resolution: stored.resolution, frameRate: stored.frameRate)
        }
        rendition.slateIndex = stored.slateIndex
        rendition.tailMap = playlist.segments.last { $0.tags.map != nil }?.tags.map
        rendition.tailKeys =
            playlist.segments.last { !$0.tags.keys.isEmpty }?.tags.keys.filter { $0.method != "NONE" } ?? []
        // The stall clock starts again at the restart: the source gets 1½ target durations to come back.
        rendition.lastSourceSegmentAt = entries.isEmpty ? nil : now
        rendition.fillerSince = stored.listingFillers ? now : nil
        if let following = stored.following {
            rendition.offset = following.offset
            rendition.discontinuityOffset = following.discontinuityOffset
            rendition.nextEncoderSequence = following.nextSourceSequence
            rendition.encoder = following.sourcePlaylist.flatMap { try? PlaylistParser().parseMedia(Array($0.utf8)) }
            rendition.encoderReceivedAt = following.sourceReceivedAt
            rendition.consumed = Dictionary(
                following.consumed.map { ($0.number, RenditionWindow.Identity(path: $0.path, entityTag: $0.entityTag)) },
                uniquingKeysWith: { _, last in last })
            rendition.history = following.history.map { ($0.path, $0.number) }
            rendition.stale = Dictionary(following.stale.map { ($0.path, $0.number) }, uniquingKeysWith: { _, last in last })
            if !entries.isEmpty { rendition.resumingSince = now }
        }
        return rendition
    }

    static func record(_ location: KeyFrameLocation) -> WindowRecord.KeyFrame {
        let video = location.video
        return WindowRecord.KeyFrame(
            initializationStart: location.initialization.lowerBound, initializationEnd: location.initialization.upperBound,
            frameStart: location.frame.lowerBound, frameEnd: location.frame.upperBound,
            format: video.format == .hevc ? "hevc" : "h264", codec: video.codec, profile: video.profile,
            level: video.level, width: video.width, height: video.height,
            frameRateNumerator: video.frameRate?.numerator, frameRateDenominator: video.frameRate?.denominator,
            frameRateSource: video.frameRate.map { $0.source == .vuiTiming ? "vui" : "timestamps" })
    }

    /// The key frame a record describes, or `nil` when it is not a valid one (the I-frame playlist
    /// then leaves the segment out, as for a segment without a key frame).
    static func keyFrame(_ stored: WindowRecord.KeyFrame) -> KeyFrameLocation? {
        guard stored.initializationStart >= 0, stored.initializationStart <= stored.initializationEnd,
            stored.frameStart >= 0, stored.frameStart <= stored.frameEnd, stored.format == "h264" || stored.format == "hevc"
        else { return nil }
        let frameRate = stored.frameRateNumerator.flatMap { numerator in
            stored.frameRateDenominator.flatMap { denominator in
                FrameRate(
                    numerator: numerator, denominator: denominator,
                    source: stored.frameRateSource == "vui" ? .vuiTiming : .timestamps)
            }
        }
        let video = VideoInfo(
            format: stored.format == "hevc" ? .hevc : .h264, codec: stored.codec, profile: stored.profile,
            level: stored.level, width: stored.width, height: stored.height, frameRate: frameRate)
        return KeyFrameLocation(
            initialization: stored.initializationStart..<stored.initializationEnd,
            frame: stored.frameStart..<stored.frameEnd, video: video)
    }
}

extension MediaInfo {
    /// Media described by a record; `nil` without codecs (nothing was probed).
    init?(codecs: [String]?, resolution: String?, frameRate: String?) {
        guard let codecs else { return nil }
        self.codecs = codecs
        self.resolution = resolution
        self.frameRate = frameRate
    }
}

extension LiveWindow {
    /// What a restored rendition does with the source's segment `index` (the first it has not
    /// consumed): list it and go on, wait for it, or go on after a discontinuity at segment `first`.
    enum Resumption: Equatable {
        /// The source continues what was listed: no discontinuity.
        case continues
        case wait(String)
        /// Segments before `first` were lost while Headwater was down.
        case lost(first: Int)
        /// The segment is the source's next but longer than the target duration: ffmpeg with
        /// `-ignore_io_errors` keeps the media of an upload that failed while Headwater was down
        /// and sends it with the next segment, under one EXTINF. Not listed (B1, as a long first
        /// segment of any timeline: ``longFirstSegment(_:_:at:_:)``); numbering goes on at `first`.
        case tooLong(first: Int)
    }

    /// A restored rendition's next source segment is listed right after what was listed when it is
    /// the very segment that followed, and here. Otherwise segments were lost while Headwater was
    /// down (the encoder's uploads failed, or its playlist slid past them): a missing one is waited
    /// for as any missing segment is (until 1½ target durations of media after it are here), then
    /// numbering goes on after a discontinuity at the first segment that is here, rather than
    /// listing `EXT-X-GAP` for media that will never come.
    func resumption(
        _ rendition: RenditionWindow, _ playlist: MediaPlaylist, at index: Int, _ context: EncoderContext
    ) -> Resumption {
        let sequence = playlist.effectiveMediaSequence &+ UInt64(index)
        let expected = rendition.nextEncoderSequence ?? sequence
        let here = isAvailable(playlist, index, context, rendition)
        let target = Int64(configuration.targetDuration)
        if here, sequence == expected {
            guard playlist.segments[index].duration.roundedSeconds > target else { return .continues }
            guard index + 1 < playlist.segments.count, isAvailable(playlist, index + 1, context, rendition) else {
                return .wait("\(playlist.segments[index].uri) is longer than the target duration; deciding with the next segment")
            }
            // Both long: the encoder's GOP is longer than the target duration; listed and reported.
            return playlist.segments[index + 1].duration.roundedSeconds > target ? .continues : .tooLong(first: index + 1)
        }
        if here { return .lost(first: index) }
        let threshold = HLSDuration(microseconds: target * 1_500_000)
        guard let first = (index + 1..<playlist.segments.count).first(where: { isAvailable(playlist, $0, context, rendition) }),
            availableMedia(playlist, from: index + 1, context, rendition) >= threshold
        else {
            return .wait("\(candidate(playlist, index, context, rendition).missing?.reason ?? "not here yet") (after a restart)")
        }
        return .lost(first: first)
    }

    /// What the listing does next with a restored rendition's segment `index`.
    enum ResumeStep: Equatable {
        case list
        case wait
        /// Go on at segment `first`, after a discontinuity.
        case skip(to: Int)
    }

    /// Acts on ``resumption(_:_:at:_:)`` for a restored rendition: reports what was lost or left
    /// out, and numbers what follows as after a stall (a new epoch above everything listed, which
    /// the other renditions restored at the same moment join).
    mutating func resumeAfterRestore(
        _ rendition: inout RenditionWindow, _ playlist: MediaPlaylist, at index: Int, _ context: EncoderContext
    ) -> ResumeStep {
        guard let since = rendition.resumingSince else { return .list }
        let sequence = playlist.effectiveMediaSequence
        let first: Int
        switch resumption(rendition, playlist, at: index, context) {
        case .continues:
            rendition.resumingSince = nil
            return .list
        case .wait(let reason):
            let encoderSequence = sequence &+ UInt64(index)
            if rendition.reportedBlocked != encoderSequence {
                rendition.reportedBlocked = encoderSequence
                report(.segmentDelayed, rendition.name, "waiting for \(playlist.segments[index].uri): \(reason)")
            }
            return .wait
        case .lost(let at):
            let lost = (rendition.nextEncoderSequence ?? sequence &+ UInt64(index))..<(sequence &+ UInt64(at))
            report(
                .missingSegment, rendition.name,
                "source MSN \(lost.lowerBound)–\(lost.upperBound &- 1) never arrived while Headwater was down; numbering continues after a discontinuity")
            first = at
        case .tooLong(let at):
            report(
                .segmentOverTargetDurationSkipped, rendition.name,
                "\(playlist.segments[index].uri): EXTINF \(playlist.segments[index].duration) rounds above EXT-X-TARGETDURATION \(configuration.targetDuration) (the encoder kept media it could not upload while Headwater was down); not listed, numbering continues after a discontinuity")
            first = at
        }
        rendition.resumingSince = nil
        rendition.fillerSince = rendition.fillerSince ?? since
        return .skip(to: first)
    }
}
