public import HeadwaterHLS
import HeadwaterMedia

/// Publishing: playlists rendered once per version, the multivariant playlist, and which stored
/// files may go.
extension LiveWindow {
    /// The multivariant playlist last published, and the bandwidth advertised per rendition.
    struct MultivariantState: Sendable {
        var playlist: MultivariantPlaylist?
        var version: UInt64 = 0
        /// BANDWIDTH of each generated variant: only ever raised, so the playlist changes rarely
        /// and always covers the peak measured so far (E2).
        var advertised: [String: Int] = [:]
        /// BANDWIDTH and AVERAGE-BANDWIDTH of each I-frame variant: BANDWIDTH only rises; the average
        /// follows the measurement only when it moves by more than a tenth, so the multivariant
        /// playlist does not change with every segment.
        var advertisedIFrames: [String: (peak: Int, average: Int)] = [:]
    }

    /// Everything the channel offers now, as values: the runtime renders each playlist whose
    /// version changed since it last rendered it (``WindowVersion/Playlist/version``).
    public mutating func snapshot(now: Int64) -> WindowVersion {
        var playlists: [String: WindowVersion.Playlist] = [:]
        var iFramePlaylists: [String: WindowVersion.Playlist] = [:]
        var segments: [String: [String: SegmentFile]] = [:]
        for name in liveRenditions {
            guard let last = renditions[name]!.lastMSN else { continue }
            let parts = renditions[name]!.parts.version
            if renditions[name]!.listed?.lastMSN != last || renditions[name]!.listedParts != parts {
                let model = mediaPlaylist(rendition: name)!
                renditions[name]!.listed = (last, model)
                renditions[name]!.listedParts = parts
                renditions[name]!.publications += 1
                renditions[name]!.listedIFrames = iFramePlaylist(of: model, rendition: renditions[name]!)
            }
            // A playlist with parts changes between segments: published under a count of its
            // versions (and a tag of its own, so no ETag repeats one published by last MSN).
            let lowLatency = renditions[name]!.parts.partTarget != nil
            playlists[name] = WindowVersion.Playlist(
                model: renditions[name]!.listed!.model,
                tag: "\(configuration.channel)-\(name)-\(configuration.runTag)\(lowLatency ? "-ll" : "")",
                version: lowLatency ? renditions[name]!.publications : last)
            if let iFrames = renditions[name]!.listedIFrames {
                iFramePlaylists[name] = WindowVersion.Playlist(
                    model: iFrames, tag: "\(configuration.channel)-\(name)-iframes-\(configuration.runTag)", version: last)
            }
            segments[name] = renditions[name]!.fetchable
        }
        addRenditionReports(to: &playlists)
        if !playlists.isEmpty { updateMultivariant() }
        let multivariant: WindowVersion.Multivariant? =
            playlists.isEmpty
            ? nil
            : self.multivariant.playlist.map {
                WindowVersion.Multivariant(
                    model: $0, tag: "\(configuration.channel)-master-\(configuration.runTag)",
                    version: self.multivariant.version)
            }
        var version = WindowVersion(
            channel: configuration.channel,
            state: playlists.isEmpty ? .starting : degradation.map { .degraded(reason: $0) } ?? .live,
            multivariant: multivariant, media: playlists, segments: segments,
            targetDuration: configuration.targetDuration, status: status(), publishedAt: now / 1_000_000)
        version.iFrames = iFramePlaylists
        return version
    }

    /// Every low-latency playlist reports every other live rendition's edge (F6, App. B.1). The
    /// reports change with the other renditions' parts: a playlist whose reports changed is a new
    /// version (kept as listed, so an unchanged one keeps its version).
    private mutating func addRenditionReports(to playlists: inout [String: WindowVersion.Playlist]) {
        guard playlists.count > 1, playlists.keys.contains(where: { renditions[$0]!.parts.partTarget != nil }) else {
            return
        }
        var edges: [(name: String, lastMSN: UInt64, lastPart: Int?)] = []
        for name in playlists.keys.sorted() {
            if let edge = LowLatencyPolicy.reportedEdge(of: playlists[name]!.model) {
                edges.append((name, edge.lastMSN, edge.lastPart))
            }
        }
        for name in playlists.keys.sorted() where renditions[name]!.parts.partTarget != nil {
            let reports = LowLatencyPolicy.renditionReports(for: name, edges: edges)
            guard reports != playlists[name]!.model.renditionReports else { continue }
            renditions[name]!.listed!.model.renditionReports = reports
            renditions[name]!.publications += 1
            playlists[name]!.model = renditions[name]!.listed!.model
            playlists[name]!.version = renditions[name]!.publications
        }
    }

    /// The I-frame playlist of `media`, the listed playlist of `rendition`: `nil` unless some listed
    /// segment is a stored, whole MPEG-TS file with a key frame and none is encrypted. A byte-range
    /// segment's key frame is not known (its file's is), so it is listed as a gap, like a remote one.
    func iFramePlaylist(of media: MediaPlaylist, rendition: RenditionWindow) -> MediaPlaylist? {
        let fetchable = rendition.fetchable
        func keyFrame(_ segment: MediaSegment) -> KeyFrameLocation? {
            guard segment.byteRange == nil, let slash = segment.uri.lastIndex(of: "/") else { return nil }
            return fetchable[String(segment.uri[segment.uri.index(after: slash)...])]?.keyFrame
        }
        guard IFramePlaylist.isOffered(for: media), media.segments.contains(where: { keyFrame($0) != nil }) else {
            return nil
        }
        return IFramePlaylist.make(from: media) { _, segment in keyFrame(segment) }
    }

    /// The I-frame variants of the live renditions that have I-frame playlists, measured from the
    /// key frames of their windows; BANDWIDTH only rises, like the variants'.
    mutating func iFrameVariants() -> [IFrameVariantStream] {
        var variants: [IFrameVariantStream] = []
        for name in liveRenditions where renditions[name]!.listedIFrames != nil {
            let rendition = renditions[name]!
            let keyFrames = rendition.entries.compactMap { entry in
                entry.file?.keyFrame.map { (location: $0, duration: entry.duration) }
            }
            let uri = IFramePlaylist.uri(forRendition: name)
            let advertised = multivariant.advertisedIFrames[name]
            guard
                var variant = IFramePlaylist.variant(
                    uri: uri, keyFrames: keyFrames, targetDuration: configuration.targetDuration,
                    atLeast: advertised?.peak ?? 0)
            else { continue }
            var average = variant.attributes.integer("AVERAGE-BANDWIDTH").map { Int($0) } ?? 0
            if let advertised, abs(average - advertised.average) * 10 <= advertised.average {
                average = advertised.average
                variant.attributes["AVERAGE-BANDWIDTH"] = .integer(average)
            }
            let peak = max(Int(variant.bandwidth), average)
            variant.attributes["BANDWIDTH"] = .integer(peak)
            multivariant.advertisedIFrames[name] = (peak, average)
            variants.append(variant)
        }
        return variants
    }

    /// What the status page shows: every rendition's window (also those not served yet).
    func status() -> ChannelStatus {
        var status = ChannelStatus(
            source: "push", targetDuration: configuration.targetDuration, windowSeconds: configuration.windowSeconds,
            stalls: stallHistory, ingest: ingested)
        for name in renditions.keys.sorted() {
            guard let playlist = mediaPlaylist(rendition: name) else { continue }
            let rendition = renditions[name]!
            let slate = Set(rendition.entries.filter { $0.filler && $0.file != nil }.map(\.msn))
            status.renditions.append(
                .init(name: name, playlist: playlist, slate: slate, lastSegmentAt: rendition.lastSourceSegmentAt))
        }
        return status
    }

    /// Why the channel is degraded (a stall in progress), or `nil`.
    var degradation: String? {
        if let stall {
            let fill = stallHistory.last(where: { $0.rendition == nil })?.fill ?? "none"
            return "source stalled at \(ProgramDateTime(millisecondsSinceEpoch: stall.startedAt / 1000)); filling with \(fill)"
        }
        let behind = renditions.values.filter { $0.stalledSince != nil }.map(\.name).sorted()
        return behind.isEmpty ? nil : "rendition \(behind.joined(separator: ", ")) stalled; listed as EXT-X-GAP"
    }

    /// The multivariant playlist as it would be published now, or `nil` while a pushed one still
    /// refers to renditions that are not live.
    public mutating func currentMultivariant() -> MultivariantPlaylist? {
        pushedMultivariant != nil ? rewrittenMultivariant() : generatedMultivariant()
    }

    private mutating func updateMultivariant() {
        guard let desired = currentMultivariant() else {
            multivariant.playlist = nil
            return
        }
        guard desired != multivariant.playlist else { return }
        multivariant.version += 1
        multivariant.playlist = desired
    }

    /// The encoder's multivariant playlist with every media URI pointing at `{rendition}.m3u8`, and
    /// Headwater's I-frame variants in place of the encoder's (whose playlists it does not relay).
    private mutating func rewrittenMultivariant() -> MultivariantPlaylist? {
        guard let (path, source) = pushedMultivariant else { return nil }
        var playlist = source
        playlist.iFrameVariants = iFrameVariants()
        for index in playlist.variants.indices {
            guard let name = liveRendition(for: playlist.variants[index].uri, from: path) else { return nil }
            playlist.variants[index].uri = "\(name).m3u8"
        }
        for index in playlist.renditions.indices {
            guard let uri = playlist.renditions[index].uri else { continue }
            guard let name = liveRendition(for: uri, from: path) else { return nil }
            playlist.renditions[index].uri = "\(name).m3u8"
        }
        let required = PlaylistValidator.requiredVersion(playlist).version
        playlist.version = required > 1 ? required : nil
        return playlist
    }

    private func liveRendition(for uri: String, from path: String) -> String? {
        guard let resolved = IngestPath.resolve(uri, relativeTo: path) else { return nil }
        let name = IngestPath.renditionName(forPlaylist: resolved)
        guard let rendition = renditions[name], rendition.playlistPath == resolved, rendition.published else {
            return nil
        }
        return name
    }

    /// One variant per live rendition, with BANDWIDTH from the peak segment bit rate of its window
    /// (E2) and CODECS, RESOLUTION and FRAME-RATE from probing its segments (E3, E4).
    private mutating func generatedMultivariant() -> MultivariantPlaylist? {
        let live = liveRenditions
        guard !live.isEmpty else { return nil }
        var playlist = MultivariantPlaylist()
        for name in live {
            let rendition = renditions[name]!
            var meter = BitrateMeter(targetDuration: configuration.targetDuration)
            for entry in rendition.entries {
                guard let file = entry.file else { continue }
                meter.add(byteCount: Int(clamping: file.length), durationMicroseconds: entry.duration.microseconds)
            }
            let measured = meter.peakBitRate ?? meter.averageBitRate ?? 0
            let bandwidth = max(multivariant.advertised[name] ?? 1, measured)
            multivariant.advertised[name] = bandwidth
            var attributes: AttributeList = [Attribute("BANDWIDTH", .integer(bandwidth))]
            if let media = rendition.media {
                if !media.codecs.isEmpty { attributes["CODECS"] = .quoted(media.codecs.joined(separator: ",")) }
                if let resolution = media.resolution { attributes["RESOLUTION"] = .token(resolution) }
                if let frameRate = media.frameRate { attributes["FRAME-RATE"] = .token(frameRate) }
            }
            playlist.variants.append(VariantStream(attributes: attributes, uri: "\(name).m3u8"))
        }
        playlist.iFrameVariants = iFrameVariants()
        let required = PlaylistValidator.requiredVersion(playlist).version
        playlist.version = required > 1 ? required : nil
        return playlist
    }

    // MARK: Expiry

    /// Removed segments past their C7 deadline stop being fetchable.
    mutating func expireRetained(now: Int64) {
        for name in renditions.keys.sorted() where renditions[name]!.retained.contains(where: { $0.deadline <= now }) {
            var rendition = renditions[name]!
            for removed in rendition.retained where removed.deadline <= now {
                if let file = removed.file { candidates.append(file.path) }
                candidates.append(contentsOf: removed.aux.values.map(\.path))
            }
            rendition.retained.removeAll { $0.deadline <= now }
            renditions[name] = rendition
            outcome.changed = true
        }
    }

    /// Forgets uploads that no encoder playlist refers to and that are older than the window plus a
    /// few target durations: an encoder that never lists what it uploads must not fill the disk.
    mutating func collectUploads(now: Int64) {
        let horizon = (Int64(configuration.windowSeconds) + 4 * Int64(configuration.targetDuration)) * 1_000_000
        guard uploads.values.contains(where: { now - $0.completedAt > horizon }) else { return }
        var referenced = Set<String>()
        for rendition in renditions.values {
            guard let playlist = rendition.encoder else { continue }
            func add(_ uri: String?) {
                if let uri, let path = IngestPath.resolve(uri, relativeTo: rendition.playlistPath) {
                    referenced.insert(path)
                }
            }
            for segment in playlist.segments {
                add(segment.uri)
                add(segment.tags.map?.uri)
                for key in segment.tags.keys { add(key.uri) }
                for part in segment.tags.parts { add(part.uri) }
            }
            for part in playlist.trailingTags.parts { add(part.uri) }
            for hint in playlist.preloadHints { add(hint.uri) }
        }
        for (path, upload) in uploads where now - upload.completedAt > horizon && !referenced.contains(path) {
            uploads[path] = nil
            candidates.append(upload.file.path)
        }
    }

    /// Of `paths`, those no upload, listed segment or still-fetchable segment refers to.
    func unreferenced(_ paths: [String]) -> [String] {
        guard !paths.isEmpty else { return [] }
        // Slate files belong to Public/: referenced forever.
        var referenced = Set(uploads.values.map(\.file.path)).union(configuration.stall.slate?.paths ?? [])
        for rendition in renditions.values {
            for file in rendition.fetchable.values { referenced.insert(file.path) }
        }
        var seen = Set<String>()
        return paths.filter { !referenced.contains($0) && seen.insert($0).inserted }
    }
}
