/// Writes playlists in Headwater's canonical form.
///
/// The canonical form is what `headwater fmt` prints and what the origin serves: LF line endings,
/// header tags in a fixed order, segment tags in the order of ``SegmentTags``, EXTINF with 3–6
/// decimals, dates with milliseconds. Attribute lists keep the order they were parsed or built in,
/// and unknown tags are written back where they were found, so parse → serialize of a canonical
/// playlist reproduces it byte for byte, and serialize → parse gives back an equal value.
///
/// It appends to a caller-owned `[UInt8]` so the origin can render into a reused buffer without
/// intermediate `String`s.
public enum PlaylistSerializer {
    public static func serialize(_ playlist: Playlist) -> [UInt8] {
        switch playlist {
        case .media(let media): return serialize(media)
        case .multivariant(let multivariant): return serialize(multivariant)
        }
    }

    public static func serialize(_ playlist: MediaPlaylist) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + playlist.segments.count * 64)
        write(playlist, into: &out)
        return out
    }

    public static func serialize(_ playlist: MultivariantPlaylist) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + playlist.variants.count * 160)
        write(playlist, into: &out)
        return out
    }

    /// The canonical text of a playlist.
    public static func string(_ playlist: Playlist) -> String { String(decoding: serialize(playlist), as: UTF8.self) }
    public static func string(_ playlist: MediaPlaylist) -> String { String(decoding: serialize(playlist), as: UTF8.self) }
    public static func string(_ playlist: MultivariantPlaylist) -> String {
        String(decoding: serialize(playlist), as: UTF8.self)
    }

    // MARK: Media playlist

    public static func write(_ p: MediaPlaylist, into out: inout [UInt8]) {
        out.append(contentsOf: "#EXTM3U\n".utf8)
        writeCommonHeader(version: p.version, independent: p.independentSegments, start: p.start, definitions: p.definitions, into: &out)
        out.append(contentsOf: "#EXT-X-TARGETDURATION:".utf8)
        DecimalWriter.write(UInt64(max(0, p.targetDuration)), into: &out)
        out.append(10)
        if let ms = p.mediaSequence {
            out.append(contentsOf: "#EXT-X-MEDIA-SEQUENCE:".utf8)
            DecimalWriter.write(ms, into: &out)
            out.append(10)
        }
        if let ds = p.discontinuitySequence {
            out.append(contentsOf: "#EXT-X-DISCONTINUITY-SEQUENCE:".utf8)
            DecimalWriter.write(ds, into: &out)
            out.append(10)
        }
        if let type = p.playlistType {
            out.append(contentsOf: "#EXT-X-PLAYLIST-TYPE:".utf8)
            out.append(contentsOf: type.rawValue.utf8)
            out.append(10)
        }
        if p.iFramesOnly { out.append(contentsOf: "#EXT-X-I-FRAMES-ONLY\n".utf8) }
        if let partInformation = p.partInformation { writeTag(partInformation, into: &out) }
        if let serverControl = p.serverControl { writeTag(serverControl, into: &out) }
        for tag in p.headerUnknownTags { writeUnknown(tag, into: &out) }
        if let skip = p.skip { writeTag(skip, into: &out) }
        let integerDurations = (p.version ?? 3) < 3
        for segment in p.segments {
            writeSegment(segment, integerDurations: integerDurations, into: &out)
        }
        writeSegmentTags(p.trailingTags, into: &out)
        for hint in p.preloadHints { writeTag(hint, into: &out) }
        for report in p.renditionReports { writeTag(report, into: &out) }
        if p.endList { out.append(contentsOf: "#EXT-X-ENDLIST\n".utf8) }
    }

    /// Writes one segment: its tags, EXTINF, BYTERANGE and URI. The origin's renderers use this to
    /// precompute segment text once and splice it into many playlists.
    public static func writeSegment(_ segment: MediaSegment, integerDurations: Bool = false, into out: inout [UInt8]) {
        if !segment.tags.isEmpty { writeSegmentTags(segment.tags, into: &out) }
        out.append(contentsOf: "#EXTINF:".utf8)
        if integerDurations {
            segment.duration.writeInteger(into: &out)
        } else {
            segment.duration.write(into: &out)
        }
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: segment.title.utf8)
        out.append(10)
        if let range = segment.byteRange {
            out.append(contentsOf: "#EXT-X-BYTERANGE:".utf8)
            range.write(into: &out)
            out.append(10)
        }
        out.append(contentsOf: segment.uri.utf8)
        out.append(10)
    }

    static func writeSegmentTags(_ t: SegmentTags, into out: inout [UInt8]) {
        if t.discontinuity { out.append(contentsOf: "#EXT-X-DISCONTINUITY\n".utf8) }
        for key in t.keys { writeTag(key, into: &out) }
        if let map = t.map { writeTag(map, into: &out) }
        if let date = t.programDateTime {
            out.append(contentsOf: "#EXT-X-PROGRAM-DATE-TIME:".utf8)
            date.write(into: &out)
            out.append(10)
        }
        for range in t.dateRanges { writeTag(range, into: &out) }
        for marker in t.adMarkers { writeAdMarker(marker, into: &out) }
        for tag in t.unknownTags { writeUnknown(tag, into: &out) }
        if t.gap { out.append(contentsOf: "#EXT-X-GAP\n".utf8) }
        if let bitrate = t.bitrate {
            out.append(contentsOf: "#EXT-X-BITRATE:".utf8)
            DecimalWriter.write(bitrate, into: &out)
            out.append(10)
        }
        for part in t.parts { writeTag(part, into: &out) }
    }

    static func writeAdMarker(_ marker: AdMarker, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "#"))
        switch marker {
        case .cueOut(let cue):
            out.append(contentsOf: AdMarker.cueOutTag.utf8)
            if let value = cue.value {
                out.append(UInt8(ascii: ":"))
                out.append(contentsOf: value.utf8)
            }
        case .cueOutContinuation(let cont):
            out.append(contentsOf: AdMarker.cueOutContinuationTag.utf8)
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: cont.value.utf8)
        case .cueIn(let value):
            out.append(contentsOf: AdMarker.cueInTag.utf8)
            if let value {
                out.append(UInt8(ascii: ":"))
                out.append(contentsOf: value.utf8)
            }
        case .oatclsSCTE35(let base64):
            out.append(contentsOf: AdMarker.oatclsTag.utf8)
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: base64.utf8)
        case .scte35(let list):
            out.append(contentsOf: AdMarker.scte35Tag.utf8)
            out.append(UInt8(ascii: ":"))
            writeAttributes(list, into: &out)
        case .asset(let value):
            out.append(contentsOf: AdMarker.assetTag.utf8)
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: value.utf8)
        }
        out.append(10)
    }

    // MARK: Multivariant playlist

    public static func write(_ p: MultivariantPlaylist, into out: inout [UInt8]) {
        out.append(contentsOf: "#EXTM3U\n".utf8)
        writeCommonHeader(version: p.version, independent: p.independentSegments, start: p.start, definitions: p.definitions, into: &out)
        for data in p.sessionData { writeTag(data, into: &out) }
        for key in p.sessionKeys { writeTag(key, into: &out) }
        if let steering = p.contentSteering { writeTag(steering, into: &out) }
        for rendition in p.renditions { writeTag(rendition, into: &out) }
        for variant in p.variants {
            writeTag(variant, into: &out)
            out.append(contentsOf: variant.uri.utf8)
            out.append(10)
        }
        for variant in p.iFrameVariants { writeTag(variant, into: &out) }
        for tag in p.unknownTags { writeUnknown(tag, into: &out) }
    }

    // MARK: Pieces

    static func writeCommonHeader(
        version: Int?, independent: Bool, start: StartPoint?, definitions: [VariableDefinition], into out: inout [UInt8]
    ) {
        if let version {
            out.append(contentsOf: "#EXT-X-VERSION:".utf8)
            DecimalWriter.write(Int64(version), into: &out)
            out.append(10)
        }
        if independent { out.append(contentsOf: "#EXT-X-INDEPENDENT-SEGMENTS\n".utf8) }
        if let start { writeTag(start, into: &out) }
        for definition in definitions { writeTag(definition, into: &out) }
    }

    /// Writes `#TAG:attributes\n` for any attribute-list tag.
    public static func writeTag<T: AttributeListTag>(_ tag: T, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "#"))
        out.append(contentsOf: T.tagName.utf8)
        out.append(UInt8(ascii: ":"))
        writeAttributes(tag.attributes, into: &out)
        out.append(10)
    }

    public static func writeAttributes(_ list: AttributeList, into out: inout [UInt8]) {
        var first = true
        for attribute in list.attributes {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(contentsOf: attribute.name.utf8)
            out.append(UInt8(ascii: "="))
            switch attribute.value {
            case .quoted(let text):
                out.append(UInt8(ascii: "\""))
                out.append(contentsOf: text.utf8)
                out.append(UInt8(ascii: "\""))
            case .token(let text):
                out.append(contentsOf: text.utf8)
            }
        }
    }

    static func writeUnknown(_ tag: UnknownTag, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "#"))
        out.append(contentsOf: tag.text.utf8)
        out.append(10)
    }
}
