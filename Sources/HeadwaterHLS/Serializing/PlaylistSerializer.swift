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
        var out = ByteWriter(capacity: 256 + playlist.segments.count * 96)
        write(playlist, to: &out)
        return out.finish()
    }

    public static func serialize(_ playlist: MultivariantPlaylist) -> [UInt8] {
        var out = ByteWriter(capacity: 256 + playlist.variants.count * 200)
        write(playlist, to: &out)
        return out.finish()
    }

    /// Appends the canonical text of `playlist` to `bytes`.
    public static func write(_ playlist: MediaPlaylist, into bytes: inout [UInt8]) {
        var out = ByteWriter(capacity: 256 + playlist.segments.count * 96)
        write(playlist, to: &out)
        out.finish(appendingTo: &bytes)
    }

    /// Appends the canonical text of `playlist` to `bytes`.
    public static func write(_ playlist: MultivariantPlaylist, into bytes: inout [UInt8]) {
        var out = ByteWriter(capacity: 256 + playlist.variants.count * 200)
        write(playlist, to: &out)
        out.finish(appendingTo: &bytes)
    }

    /// Appends one segment (its tags, EXTINF, BYTERANGE and URI) to `bytes`. The origin's renderers
    /// use this to precompute segment text once and splice it into many playlists.
    public static func writeSegment(_ segment: MediaSegment, integerDurations: Bool = false, into bytes: inout [UInt8]) {
        var out = ByteWriter(capacity: 128)
        writeSegment(segment, integerDurations: integerDurations, to: &out)
        out.finish(appendingTo: &bytes)
    }

    /// Appends `#TAG:attributes` and a newline, for any attribute-list tag, to `bytes`.
    public static func writeTag<T: AttributeListTag>(_ tag: T, into bytes: inout [UInt8]) {
        var out = ByteWriter(capacity: 128)
        writeTag(tag, to: &out)
        out.finish(appendingTo: &bytes)
    }

    /// Appends the attribute list as written in a tag (`A=1,B="x"`) to `bytes`.
    public static func writeAttributes(_ list: AttributeList, into bytes: inout [UInt8]) {
        var out = ByteWriter(capacity: 128)
        writeAttributes(list, to: &out)
        out.finish(appendingTo: &bytes)
    }

    /// The canonical text of a playlist.
    public static func string(_ playlist: Playlist) -> String { String(decoding: serialize(playlist), as: UTF8.self) }
    public static func string(_ playlist: MediaPlaylist) -> String { String(decoding: serialize(playlist), as: UTF8.self) }
    public static func string(_ playlist: MultivariantPlaylist) -> String {
        String(decoding: serialize(playlist), as: UTF8.self)
    }

    // MARK: Media playlist

    static func write(_ p: MediaPlaylist, to out: inout ByteWriter) {
        out.append("#EXTM3U\n" as StaticString)
        writeCommonHeader(version: p.version, independent: p.independentSegments, start: p.start, definitions: p.definitions, to: &out)
        out.append("#EXT-X-TARGETDURATION:" as StaticString)
        out.appendDecimal(UInt64(max(0, p.targetDuration)))
        out.append(10)
        if let ms = p.mediaSequence {
            out.append("#EXT-X-MEDIA-SEQUENCE:" as StaticString)
            out.appendDecimal(ms)
            out.append(10)
        }
        if let ds = p.discontinuitySequence {
            out.append("#EXT-X-DISCONTINUITY-SEQUENCE:" as StaticString)
            out.appendDecimal(ds)
            out.append(10)
        }
        if let type = p.playlistType {
            out.append("#EXT-X-PLAYLIST-TYPE:" as StaticString)
            out.append(type.rawValue)
            out.append(10)
        }
        if p.iFramesOnly { out.append("#EXT-X-I-FRAMES-ONLY\n" as StaticString) }
        if let partInformation = p.partInformation { writeTag(partInformation, to: &out) }
        if let serverControl = p.serverControl { writeTag(serverControl, to: &out) }
        for tag in p.headerUnknownTags { writeUnknown(tag, to: &out) }
        if let skip = p.skip { writeTag(skip, to: &out) }
        let integerDurations = (p.version ?? 3) < 3
        for segment in p.segments {
            writeSegment(segment, integerDurations: integerDurations, to: &out)
        }
        // As on segments, unknown trailing tags come last, after the parts, so that they read back
        // as trailing tags rather than header tags.
        writeSegmentTags(p.trailingTags, includingUnknown: false, to: &out)
        for tag in p.trailingTags.unknownTags { writeUnknown(tag, to: &out) }
        for hint in p.preloadHints { writeTag(hint, to: &out) }
        for report in p.renditionReports { writeTag(report, to: &out) }
        if p.endList { out.append("#EXT-X-ENDLIST\n" as StaticString) }
    }

    static func writeSegment(_ segment: MediaSegment, integerDurations: Bool = false, to out: inout ByteWriter) {
        if !segment.tags.isEmpty { writeSegmentTags(segment.tags, includingUnknown: false, to: &out) }
        out.append("#EXTINF:" as StaticString)
        // Below version 3 EXTINF is an integer (§4.4.4.1), but only a whole value is written so: a
        // fractional one keeps its decimals rather than silently changing (lint reports A9).
        if integerDurations && segment.duration.microseconds % 1_000_000 == 0 {
            segment.duration.writeInteger(to: &out)
        } else {
            segment.duration.write(to: &out)
        }
        out.append(UInt8(ascii: ","))
        out.append(segment.title)
        out.append(10)
        if let range = segment.byteRange {
            out.append("#EXT-X-BYTERANGE:" as StaticString)
            range.write(to: &out)
            out.append(10)
        }
        // Unknown tags go between EXTINF and the URI: there they can only belong to this segment,
        // even on the first segment, where before EXTINF they would read back as header tags.
        for tag in segment.tags.unknownTags { writeUnknown(tag, to: &out) }
        out.append(segment.uri)
        out.append(10)
    }

    static func writeSegmentTags(_ t: SegmentTags, includingUnknown: Bool = true, to out: inout ByteWriter) {
        if t.discontinuity { out.append("#EXT-X-DISCONTINUITY\n" as StaticString) }
        for key in t.keys { writeTag(key, to: &out) }
        if let map = t.map { writeTag(map, to: &out) }
        if let date = t.programDateTime {
            out.append("#EXT-X-PROGRAM-DATE-TIME:" as StaticString)
            date.write(to: &out)
            out.append(10)
        }
        for range in t.dateRanges { writeTag(range, to: &out) }
        for marker in t.adMarkers { writeAdMarker(marker, to: &out) }
        if includingUnknown {
            for tag in t.unknownTags { writeUnknown(tag, to: &out) }
        }
        if t.gap { out.append("#EXT-X-GAP\n" as StaticString) }
        if let bitrate = t.bitrate {
            out.append("#EXT-X-BITRATE:" as StaticString)
            out.appendDecimal(bitrate)
            out.append(10)
        }
        for part in t.parts { writeTag(part, to: &out) }
    }

    /// The line `marker` is written as, without its newline (empty when it is not written).
    public static func line(_ marker: AdMarker) -> String {
        var out = ByteWriter(capacity: 64)
        writeAdMarker(marker, to: &out)
        var bytes = out.finish()
        if bytes.last == 10 { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func writeAdMarker(_ marker: AdMarker, to out: inout ByteWriter) {
        // A continuation with no value (a tolerated bare `EXT-X-CUE-OUT-CONT` whose break opened
        // before the playlist's window) tells the break tracker where it is but has nothing a
        // downstream reader could use, and the canonical form needs a value: it is not written.
        if case .cueOutContinuation(let cont) = marker, cont.value.isEmpty { return }
        out.append(UInt8(ascii: "#"))
        switch marker {
        case .cueOut(let cue):
            out.append(AdMarker.cueOutTag)
            if let value = cue.value {
                out.append(UInt8(ascii: ":"))
                out.append(value)
            }
        case .cueOutContinuation(let cont):
            out.append(AdMarker.cueOutContinuationTag)
            out.append(UInt8(ascii: ":"))
            out.append(cont.value)
        case .cueIn(let value):
            out.append(AdMarker.cueInTag)
            if let value {
                out.append(UInt8(ascii: ":"))
                out.append(value)
            }
        case .oatclsSCTE35(let base64):
            out.append(AdMarker.oatclsTag)
            out.append(UInt8(ascii: ":"))
            out.append(base64)
        case .scte35(let list):
            out.append(AdMarker.scte35Tag)
            out.append(UInt8(ascii: ":"))
            writeAttributes(list, to: &out)
        case .asset(let value):
            out.append(AdMarker.assetTag)
            out.append(UInt8(ascii: ":"))
            out.append(value)
        }
        out.append(10)
    }

    // MARK: Multivariant playlist

    static func write(_ p: MultivariantPlaylist, to out: inout ByteWriter) {
        out.append("#EXTM3U\n" as StaticString)
        writeCommonHeader(version: p.version, independent: p.independentSegments, start: p.start, definitions: p.definitions, to: &out)
        for data in p.sessionData { writeTag(data, to: &out) }
        for key in p.sessionKeys { writeTag(key, to: &out) }
        if let steering = p.contentSteering { writeTag(steering, to: &out) }
        for rendition in p.renditions { writeTag(rendition, to: &out) }
        for variant in p.variants {
            writeTag(variant, to: &out)
            out.append(variant.uri)
            out.append(10)
        }
        for variant in p.iFrameVariants { writeTag(variant, to: &out) }
        for tag in p.unknownTags { writeUnknown(tag, to: &out) }
    }

    // MARK: Pieces

    static func writeCommonHeader(
        version: Int?, independent: Bool, start: StartPoint?, definitions: [VariableDefinition], to out: inout ByteWriter
    ) {
        if let version {
            out.append("#EXT-X-VERSION:" as StaticString)
            out.appendDecimal(UInt64(max(0, version)))
            out.append(10)
        }
        if independent { out.append("#EXT-X-INDEPENDENT-SEGMENTS\n" as StaticString) }
        if let start { writeTag(start, to: &out) }
        for definition in definitions { writeTag(definition, to: &out) }
    }

    static func writeTag<T: AttributeListTag>(_ tag: T, to out: inout ByteWriter) {
        out.append(UInt8(ascii: "#"))
        out.append(T.tagName)
        out.append(UInt8(ascii: ":"))
        writeAttributes(tag.attributes, to: &out)
        out.append(10)
    }

    static func writeAttributes(_ list: AttributeList, to out: inout ByteWriter) {
        var first = true
        for attribute in list.attributes {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(attribute.name)
            out.append(UInt8(ascii: "="))
            switch attribute.value {
            case .quoted(let text):
                out.append(UInt8(ascii: "\""))
                out.append(text)
                out.append(UInt8(ascii: "\""))
            case .token(let text):
                out.append(text)
            }
        }
    }

    static func writeUnknown(_ tag: UnknownTag, to out: inout ByteWriter) {
        out.append(UInt8(ascii: "#"))
        out.append(tag.text)
        out.append(10)
    }
}
