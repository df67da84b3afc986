import Foundation
public import HeadwaterHLS
public import HeadwaterLiveWindow
public import HeadwaterMedia

/// A VOD HLS package (multivariant + media playlists + MPEG-TS segments) loaded for looping as a
/// live channel. Loading checks what the live channel depends on — every rendition has the same
/// segment count and EXTINFs, every segment probes — and measures what the multivariant playlist
/// advertises (BANDWIDTH, AVERAGE-BANDWIDTH, CODECS, RESOLUTION, FRAME-RATE: HLS-RULES E2–E4)
/// from the media itself.
public struct LoopPackage: Sendable {
    public typealias Segment = PackagedSegment

    public struct Rendition: Sendable {
        /// The name used in URLs: the directory of its media playlist (`v0`, `audio-alt`).
        public var name: String
        public var segments: [Segment]
        public var codecs: [String]
        public var resolution: String?
        public var frameRate: String?
        public var peakBitRate: Int
        public var averageBitRate: Int
        /// Each segment's low-latency parts (``cuttingParts(every:)``); empty without parts.
        public var parts: [[MediaPart]] = []
    }

    /// Renditions in multivariant order: variants, then alternative renditions with their own URI.
    public var renditions: [Rendition]
    /// The package's multivariant playlist as written (groups, names, languages).
    public var source: MultivariantPlaylist
    /// Which rendition each source variant / EXT-X-MEDIA URI refers to.
    var variantRenditions: [String]
    var mediaRenditions: [String?]
    public var targetDuration: Int
    public var durations: [HLSDuration]
    /// EXT-X-PART-INF's PART-TARGET when the segments are cut into parts, else `nil`.
    public var partTarget: HLSDuration?

    /// Why a package cannot be looped, with the file (and line) at fault.
    public struct LoadError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    public static func load(multivariantPath: String) throws(LoadError) -> LoopPackage {
        let directory = (multivariantPath as NSString).deletingLastPathComponent
        let parser = PlaylistParser()
        let master: MultivariantPlaylist
        do {
            master = try parser.parseMultivariant(try read(multivariantPath))
        } catch let error as PlaylistParseError {
            throw LoadError(description: "\(multivariantPath):\(error.line): \(error.code): \(error.message)")
        } catch let error as LoadError {
            throw error
        } catch {
            throw LoadError(description: "\(multivariantPath): \(error)")
        }
        guard !master.variants.isEmpty else { throw LoadError(description: "\(multivariantPath): no EXT-X-STREAM-INF variants") }

        var renditions: [Rendition] = []
        var byURI: [String: String] = [:]
        func rendition(for uri: String) throws(LoadError) -> String {
            if let name = byURI[uri] { return name }
            let name = Self.renditionName(for: uri)
            guard !renditions.contains(where: { $0.name == name }) else {
                throw LoadError(description: "\(multivariantPath): two media playlists map to rendition name \"\(name)\"")
            }
            renditions.append(try loadRendition(name: name, path: directory + "/" + uri))
            byURI[uri] = name
            return name
        }
        var variantRenditions: [String] = []
        for variant in master.variants { variantRenditions.append(try rendition(for: variant.uri)) }
        var mediaRenditions: [String?] = []
        for media in master.renditions {
            if let uri = media.uri { mediaRenditions.append(try rendition(for: uri)) } else { mediaRenditions.append(nil) }
        }

        let reference = renditions[0]
        for other in renditions.dropFirst() {
            guard other.segments.map(\.duration) == reference.segments.map(\.duration) else {
                throw LoadError(description: "\(multivariantPath): rendition \"\(other.name)\" has different segment durations than \"\(reference.name)\"; a live channel needs aligned renditions (C14)")
            }
        }
        let durations = reference.segments.map(\.duration)
        let targetDuration = Int(durations.map(\.roundedSeconds).max() ?? 1)
        return LoopPackage(
            renditions: renditions, source: master, variantRenditions: variantRenditions,
            mediaRenditions: mediaRenditions, targetDuration: max(1, targetDuration), durations: durations)
    }

    /// The multivariant playlist of the live channel: the package's groups and variants with
    /// measured attributes, media URIs pointing at `{rendition}.m3u8`, and with `iFrames` an
    /// I-frame variant for each video rendition, measured from its key frames.
    public func multivariant(iFrames: Bool = true) -> MultivariantPlaylist {
        var playlist = MultivariantPlaylist()
        playlist.version = 3
        playlist.independentSegments = true
        var audioPeakByGroup: [String: Int] = [:]
        var audioAverageByGroup: [String: Int] = [:]
        var audioCodecsByGroup: [String: [String]] = [:]
        for (index, var media) in source.renditions.enumerated() {
            if let name = mediaRenditions[index], let rendition = renditions.first(where: { $0.name == name }) {
                media.uri = "\(name).m3u8"
                if media.type == "AUDIO" {
                    audioPeakByGroup[media.groupID] = max(audioPeakByGroup[media.groupID] ?? 0, rendition.peakBitRate)
                    audioAverageByGroup[media.groupID] = max(audioAverageByGroup[media.groupID] ?? 0, rendition.averageBitRate)
                    audioCodecsByGroup[media.groupID, default: []].append(contentsOf: rendition.codecs)
                }
            }
            playlist.renditions.append(media)
        }
        for (index, variant) in source.variants.enumerated() {
            guard let rendition = renditions.first(where: { $0.name == variantRenditions[index] }) else { continue }
            let group = variant.audioGroup
            // E6: every playable combination fits in BANDWIDTH, so an alternate audio rendition adds its peak.
            let peak = rendition.peakBitRate + (group.flatMap { audioPeakByGroup[$0] } ?? 0)
            let average = rendition.averageBitRate + (group.flatMap { audioAverageByGroup[$0] } ?? 0)
            var codecs = rendition.codecs
            for codec in group.flatMap({ audioCodecsByGroup[$0] }) ?? [] where !codecs.contains(codec) { codecs.append(codec) }
            var attributes: AttributeList = [
                Attribute("BANDWIDTH", .integer(peak)), Attribute("AVERAGE-BANDWIDTH", .integer(average)),
                Attribute("CODECS", .quoted(codecs.joined(separator: ","))),
            ]
            if let resolution = rendition.resolution { attributes["RESOLUTION"] = .token(resolution) }
            if let frameRate = rendition.frameRate { attributes["FRAME-RATE"] = .token(frameRate) }
            for name in ["AUDIO", "VIDEO", "SUBTITLES", "CLOSED-CAPTIONS"] {
                if let value = variant.attributes[name] { attributes[name] = value }
            }
            playlist.variants.append(VariantStream(attributes: attributes, uri: "\(rendition.name).m3u8"))
        }
        if iFrames {
            for rendition in renditions {
                guard Self.hasIFrames(rendition) else { continue }
                let keyFrames = rendition.segments.compactMap { segment in
                    segment.file.keyFrame.map { (location: $0, duration: segment.duration) }
                }
                let uri = IFramePlaylist.uri(forRendition: rendition.name)
                if let variant = IFramePlaylist.variant(uri: uri, keyFrames: keyFrames, targetDuration: targetDuration) {
                    playlist.iFrameVariants.append(variant)
                }
            }
        }
        return playlist
    }

    /// Whether `rendition` has an I-frame playlist: every segment has a key frame.
    public static func hasIFrames(_ rendition: Rendition) -> Bool {
        rendition.segments.allSatisfy { $0.file.keyFrame != nil }
    }

    // MARK: Loading

    private static func loadRendition(name: String, path: String) throws(LoadError) -> Rendition {
        let directory = (path as NSString).deletingLastPathComponent
        let playlist: MediaPlaylist
        let sourceMap: SourceMap
        do {
            let parsed = try PlaylistParser().parseWithSourceMap(try read(path))
            guard case .media(let media) = parsed.playlist else {
                throw LoadError(description: "\(path): expected a media playlist")
            }
            playlist = media
            sourceMap = parsed.sourceMap
        } catch let error as PlaylistParseError {
            throw LoadError(description: "\(path):\(error.line): \(error.code): \(error.message)")
        } catch let error as LoadError {
            throw error
        } catch {
            throw LoadError(description: "\(path): \(error)")
        }
        guard playlist.endList, !playlist.segments.isEmpty else {
            throw LoadError(description: "\(path): a loop package must be VOD (EXT-X-ENDLIST) with at least one segment")
        }
        var segments: [Segment] = []
        var codecs: [String] = []
        var resolution: String?
        var frameRate: String?
        var meter = BitrateMeter(targetDuration: playlist.targetDuration)
        for (index, segment) in playlist.segments.enumerated() {
            let line = sourceMap.segments.indices.contains(index) ? sourceMap.segments[index].uri : 1
            guard segment.duration.roundedSeconds <= Int64(playlist.targetDuration) else {
                throw LoadError(description: "\(path):\(line): EXTINF \(segment.duration) rounds above EXT-X-TARGETDURATION \(playlist.targetDuration) (B1)")
            }
            guard !segment.uri.contains("/"), !segment.uri.contains(".."), segment.byteRange == nil else {
                throw LoadError(description: "\(path):\(line): loop packages list plain file names next to the playlist, got \"\(segment.uri)\"")
            }
            let file = directory + "/" + segment.uri
            let bytes: [UInt8]
            do { bytes = try read(file) } catch { throw LoadError(description: "\(path):\(line): \(error.description)") }
            let probe: SegmentProbe
            do {
                probe = try TransportStreamProbe.probe(bytes)
            } catch {
                throw LoadError(description: "\(file): not a usable MPEG-TS segment: \(error)")
            }
            if codecs.isEmpty { codecs = probe.codecs }
            if resolution == nil, let video = probe.video { resolution = video.resolution }
            if frameRate == nil, let rate = probe.video?.frameRate { frameRate = rate.hlsAttributeValue }
            meter.add(byteCount: bytes.count, durationMicroseconds: segment.duration.microseconds)
            let modified = (try? FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date)
                .flatMap { $0 }.map { Int64($0.timeIntervalSince1970) } ?? 0
            var hash = FNV1a64()
            hash.update(bytes)
            segments.append(Segment(
                file: SegmentFile(
                    path: file, length: Int64(bytes.count),
                    entityTag: "\"\(hash.hexDigest)\"",
                    contentType: "video/mp2t", lastModified: modified,
                    keyFrame: KeyFrameLocation(transportStream: bytes, probe: probe)),
                duration: segment.duration))
        }
        return Rendition(
            name: name, segments: segments, codecs: codecs, resolution: resolution, frameRate: frameRate,
            peakBitRate: meter.peakBitRate ?? meter.averageBitRate ?? 0, averageBitRate: meter.averageBitRate ?? 0)
    }

    /// `v0/index.m3u8` → `v0`; `low.m3u8` → `low`.
    static func renditionName(for uri: String) -> String { Naming.renditionName(forPlaylistURI: uri) }

    private static func read(_ path: String) throws(LoadError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LoadError(description: "\(path): cannot read file")
        }
        return [UInt8](data)
    }
}

extension SlateLibrary {
    /// The slate of a loaded VOD package (`server.slate`).
    public init(package: LoopPackage) {
        self.init(
            renditions: package.renditions.map {
                Rendition(name: $0.name, segments: $0.segments, resolution: $0.resolution)
            })
    }
}
