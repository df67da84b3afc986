import Foundation
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterMedia
import HeadwaterStitching

/// An ad creative (or the slate) read from a VOD package on disk: a multivariant playlist whose media
/// playlists (`v0/index.m3u8`, `audio-alt/index.m3u8`, …) list the segments. Each media playlist
/// becomes the creative rendition of the same name as the content rendition it stands in for, by
/// the naming loop channels use (``LoopPackage/renditionName(for:)``), so a creative packaged like
/// the content matches it rendition for rendition.
///
/// Segment URIs in stitched playlists are the package's URL prefix (`/ads/ad1/`) followed by each
/// segment's path inside the package (`v0/seg-00000.ts`). Segments are not probed here: the
/// segmentation checks (same EXTINFs in every rendition, within the target duration) are
/// ``AdRuleSet/validate(renditions:targetDuration:maximumSegmentDuration:)``'s, per channel.
struct CreativePackage: Sendable, Hashable {
    struct Rendition: Sendable, Hashable {
        var media: CreativeRendition
        /// The media playlist's path inside the package (`v0/index.m3u8`), for messages.
        var playlist: String
        /// Per segment, the line of its EXTINF in the media playlist.
        var lines: [Int]
        /// The first key frame of each whole MPEG-TS segment with video, by served URL: what a
        /// stitched I-frame playlist lists for it (``IFramePlaylist``).
        var keyFrames: [String: KeyFrameLocation] = [:]
    }

    /// By rendition name.
    var renditions: [String: Rendition]

    /// Why a package cannot be used: one line, naming the file inside the package (and its line).
    struct LoadError: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    /// Reads the package at `multivariantPath`; its segments are served under `urlPrefix` (ends with `/`).
    ///
    /// - Parameter partTarget: when given (µs), every whole MPEG-TS segment in the package is cut into
    ///   low-latency parts of about that length (``CreativeSegment/parts``), checked against F3 over
    ///   all the package's renditions as the loop channel's are; segments that are byte ranges, fMP4 or
    ///   remote stay whole.
    static func load(multivariantPath: String, urlPrefix: String, partTarget: Int64? = nil) throws(LoadError)
        -> CreativePackage
    {
        let parent = PathNormalization.directory(of: multivariantPath)
        let directory = parent.isEmpty ? "." : parent
        let top: Playlist
        do {
            top = try PlaylistParser().parse(try read(multivariantPath, shown: multivariantPath))
        } catch let error as PlaylistParseError {
            throw LoadError("\(multivariantPath):\(error.line): \(error.code): \(error.message)")
        } catch let error as LoadError {
            throw error
        } catch {
            throw LoadError("\(multivariantPath): \(error)")
        }
        guard case .multivariant(let master) = top, !master.variants.isEmpty else {
            throw LoadError("\(multivariantPath): must be a multivariant playlist (EXT-X-STREAM-INF), one media playlist per rendition")
        }
        var uris: [String] = []
        for uri in master.variants.map(\.uri) + master.renditions.compactMap(\.uri) where !uris.contains(uri) {
            uris.append(uri)
        }
        var renditions: [String: Rendition] = [:]
        for uri in uris {
            guard let relative = PathNormalization.inside(uri) else {
                throw LoadError("\(multivariantPath): media playlist \"\(uri)\" must be a relative path inside the package")
            }
            let name = Naming.renditionName(forPlaylistURI: relative)
            guard renditions[name] == nil else {
                throw LoadError("\(multivariantPath): two media playlists map to rendition name \"\(name)\"")
            }
            renditions[name] = try loadRendition(relative, directory: directory, urlPrefix: urlPrefix, partTarget: partTarget)
        }
        try checkParts(renditions)
        return CreativePackage(renditions: renditions)
    }

    /// F3's floor over the parts of every rendition, against the PART-TARGET they give together.
    private static func checkParts(_ renditions: [String: Rendition]) throws(LoadError) {
        var all: [[MediaPart]] = []
        var shown: [String] = []
        for (_, rendition) in renditions.sorted(by: { $0.key < $1.key }) {
            for (index, segment) in rendition.media.segments.enumerated() where !segment.parts.isEmpty {
                all.append(
                    segment.parts.map {
                        MediaPart(
                            offset: Int64($0.offset), length: Int64($0.length), durationMicroseconds: $0.duration.microseconds,
                            independent: $0.independent)
                    })
                shown.append("\(rendition.playlist):\(rendition.lines[index])")
            }
        }
        let partTarget = PartCutting.partTarget(of: all)
        if let short = PartCutting.firstShortPart(in: all, partTarget: partTarget) {
            let duration = HLSDuration(microseconds: all[short.segment][short.part].durationMicroseconds)
            throw LoadError(
                "\(shown[short.segment]): part \(short.part) lasts \(duration) s, under 85 % of PART-TARGET \(HLSDuration(microseconds: partTarget)) s (F3); set another part_target")
        }
    }

    private static func loadRendition(_ relative: String, directory: String, urlPrefix: String, partTarget: Int64?)
        throws(LoadError) -> Rendition
    {
        let playlistDirectory = PathNormalization.directory(of: relative)
        let playlist: MediaPlaylist
        let sourceMap: SourceMap
        do {
            let parsed = try PlaylistParser().parseWithSourceMap(try read(directory + "/" + relative, shown: relative))
            guard case .media(let media) = parsed.playlist else { throw LoadError("\(relative): expected a media playlist") }
            playlist = media
            sourceMap = parsed.sourceMap
        } catch let error as PlaylistParseError {
            throw LoadError("\(relative):\(error.line): \(error.code): \(error.message)")
        } catch let error as LoadError {
            throw error
        } catch {
            throw LoadError("\(relative): \(error)")
        }
        guard playlist.endList else {
            throw LoadError("\(relative): a creative must be a VOD media playlist (EXT-X-ENDLIST)")
        }
        let ranges = playlist.resolvedByteRanges()
        var segments: [CreativeSegment] = []
        var lines: [Int] = []
        var map: MediaInitializationSection?
        var keyFrames: [String: KeyFrameLocation] = [:]
        for (index, segment) in playlist.segments.enumerated() {
            let known = sourceMap.segments.indices.contains(index)
            let line = known ? sourceMap.segments[index].extinf : 1
            let at = "\(relative):\(known ? sourceMap.segments[index].uri : 1)"
            if let key = segment.tags.keys.first(where: { $0.method != "NONE" }) {
                throw LoadError("\(at): encrypted creatives (EXT-X-KEY METHOD=\(key.method)) are not supported")
            }
            if let segmentMap = segment.tags.map {
                let url = try served(segmentMap.uri, in: playlistDirectory, directory: directory, urlPrefix: urlPrefix, at: at)
                let rewritten = MediaInitializationSection(uri: url, byteRange: segmentMap.byteRange)
                if index == 0 {
                    map = rewritten
                } else if rewritten != map {
                    throw LoadError("\(at): a creative rendition has one EXT-X-MAP, on its first segment")
                }
            }
            var creativeSegment = CreativeSegment(
                uri: try served(segment.uri, in: playlistDirectory, directory: directory, urlPrefix: urlPrefix, at: at),
                duration: segment.duration)
            if let range = ranges[index] { creativeSegment.byteRange = ByteRange(length: range.length, offset: range.offset) }
            let file = directory + "/" + (playlistDirectory.isEmpty ? "" : playlistDirectory + "/") + segment.uri
            let wholeTransportStream = creativeSegment.byteRange == nil && map == nil && !creativeSegment.uri.hasPrefix("http")
                && segment.uri.hasSuffix(".ts")
            // A segment that does not probe as MPEG-TS is listed whole, without key frame or parts.
            if wholeTransportStream, let data = FileManager.default.contents(atPath: file),
                case let bytes = [UInt8](data), let probe = try? TransportStreamProbe.probe(bytes)
            {
                keyFrames[creativeSegment.uri] = KeyFrameLocation(transportStream: bytes, probe: probe)
                if let partTarget {
                    let duration = segment.duration.microseconds
                    creativeSegment.parts = TransportStreamParts.cut(
                        bytes, probe: probe, segmentDurationMicroseconds: duration,
                        at: TransportStreamParts.cutTimes(segmentDurationMicroseconds: duration, partTargetMicroseconds: partTarget)
                    ).map {
                        CreativePart(
                            offset: UInt64($0.offset), length: UInt64($0.length),
                            duration: HLSDuration(microseconds: $0.durationMicroseconds), independent: $0.independent)
                    }
                }
            }
            segments.append(creativeSegment)
            lines.append(line)
        }
        return Rendition(
            media: CreativeRendition(map: map, segments: segments), playlist: relative, lines: lines, keyFrames: keyFrames)
    }

    /// The URL a segment (or init section) of the package is served at: absolute URLs as they are,
    /// relative ones under `urlPrefix` once the file is known to exist inside the package.
    private static func served(_ uri: String, in playlistDirectory: String, directory: String, urlPrefix: String, at: String)
        throws(LoadError) -> String
    {
        if uri.hasPrefix("http://") || uri.hasPrefix("https://") { return uri }
        let joined = playlistDirectory.isEmpty ? uri : playlistDirectory + "/" + uri
        guard let path = PathNormalization.inside(joined) else {
            throw LoadError("\(at): \"\(uri)\" is outside the package directory; creatives are served from their package")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue
        else {
            throw LoadError("\(at): \"\(uri)\" does not exist")
        }
        return urlPrefix + path
    }

    private static func read(_ path: String, shown: String) throws(LoadError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw LoadError("\(shown): cannot read file") }
        return [UInt8](data)
    }
}

/// Lexical path arithmetic (no symbolic links followed, no file system access): the same answer on
/// every machine for the same configuration.
enum PathNormalization {
    /// `path` made absolute against the working directory, with `.`, `..` and repeated `/` removed.
    static func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var parts: [Substring] = []
        for part in full.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": _ = parts.popLast()
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// A relative path normalized, or `nil` when it is absolute, has a scheme, or leaves its base (`..`).
    static func inside(_ relative: String) -> String? {
        guard !relative.hasPrefix("/"), !relative.contains("://"), !relative.contains("?"), !relative.contains("#")
        else { return nil }
        var parts: [Substring] = []
        for part in relative.split(separator: "/") {
            switch part {
            case ".": continue
            case "..":
                guard parts.popLast() != nil else { return nil }
            default: parts.append(part)
            }
        }
        return parts.isEmpty ? nil : parts.joined(separator: "/")
    }

    /// Everything before the last `/` (empty for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
