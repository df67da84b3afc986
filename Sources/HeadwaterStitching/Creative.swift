public import HeadwaterHLS

/// One media segment of an ad creative or of the slate, in one rendition.
public struct CreativeSegment: Sendable, Hashable {
    /// The URI written in stitched playlists, as given (relative URIs resolve against the stitched
    /// playlist's URL, so they are usually absolute or root-relative, e.g. `/ads/a/video/0.ts`).
    public var uri: String
    /// The EXTINF: the segment's exact media duration.
    public var duration: HLSDuration
    /// A sub-range of `uri`, with an explicit offset (a stitched neighbour is never the same resource).
    public var byteRange: ByteRange?
    /// The segment cut into low-latency parts (byte ranges of `uri`), in order; empty when it was
    /// not cut. Listed as `EXT-X-PART`s when the content is low-latency (HLS-RULES F21): their
    /// durations add up to ``duration`` (F3).
    public var parts: [CreativePart]

    public init(uri: String, duration: HLSDuration, byteRange: ByteRange? = nil, parts: [CreativePart] = []) {
        self.uri = uri
        self.duration = duration
        self.byteRange = byteRange
        self.parts = parts
    }
}

/// One low-latency part of a ``CreativeSegment``: a byte range of the segment's file, so a CDN caches
/// one object per segment and a player fetches the part with a `Range` request.
public struct CreativePart: Sendable, Hashable {
    /// The first byte in the segment's file: absolute, already including the segment's own
    /// `byteRange` offset when it has one (a stitched part never continues a neighbour's range, F3).
    public var offset: UInt64
    public var length: UInt64
    public var duration: HLSDuration
    /// Whether the part starts with an independent frame (`INDEPENDENT=YES`, F3).
    public var independent: Bool

    public init(offset: UInt64, length: UInt64, duration: HLSDuration, independent: Bool) {
        self.offset = offset
        self.length = length
        self.duration = duration
        self.independent = independent
    }

    /// The `EXT-X-PART` of this part of the segment at `uri`.
    func partialSegment(uri: String) -> PartialSegment {
        PartialSegment(
            uri: uri, duration: duration, independent: independent, byteRange: ByteRange(length: length, offset: offset))
    }
}

/// A creative in one rendition: its segments and, for fMP4, its initialization section.
public struct CreativeRendition: Sendable, Hashable {
    /// `EXT-X-MAP` of the creative's segments (fMP4), `nil` for MPEG-TS.
    public var map: MediaInitializationSection?
    public var segments: [CreativeSegment]

    public init(map: MediaInitializationSection? = nil, segments: [CreativeSegment]) {
        self.map = map
        self.segments = segments
    }

    /// Σ EXTINF.
    public var duration: HLSDuration { segments.reduce(.zero) { $0 + $1.duration } }
}

/// An ad creative (or the slate): a short VOD asset packaged once per content rendition, with the
/// same segmentation (segment count and EXTINFs) in every rendition, so that a player can switch
/// variants inside an ad and alternate audio stays aligned with video (DESIGN invariant 3).
public struct Creative: Sendable, Hashable, Identifiable {
    public var id: String
    /// By content rendition name (the `{rendition}` of `/live/{channel}/{rendition}.m3u8`).
    public var renditions: [String: CreativeRendition]
    /// URLs to call when a viewer reaches each event of an ad showing this creative. They may
    /// contain the macros of ``TrackingEvent/macros``; the stitcher writes them, expanded, into the
    /// ad's `EXT-X-DATERANGE` (``TrackingEvent/attributeName``).
    public var tracking: [TrackingEvent: [String]]

    public init(id: String, renditions: [String: CreativeRendition], tracking: [TrackingEvent: [String]] = [:]) {
        self.id = id
        self.renditions = renditions
        self.tracking = tracking
    }

    /// The creative's duration: that of its first rendition in name order (all renditions agree
    /// once ``AdRuleSet/validate(renditions:targetDuration:maximumSegmentDuration:)`` accepted them).
    public var duration: HLSDuration {
        guard let name = renditions.keys.min() else { return .zero }
        return renditions[name]!.duration
    }
}

/// The moments of an ad that tracking URLs report (the VAST linear events of the same names).
public enum TrackingEvent: String, CaseIterable, Sendable, Hashable {
    case impression, firstQuartile, midpoint, thirdQuartile, complete

    /// The client attribute of the ad's `EXT-X-DATERANGE` that lists the event's URLs, expanded and
    /// separated by single spaces: `X-TRACKING-IMPRESSION`, `X-TRACKING-FIRST-QUARTILE`,
    /// `X-TRACKING-MIDPOINT`, `X-TRACKING-THIRD-QUARTILE`, `X-TRACKING-COMPLETE`.
    public var attributeName: String {
        switch self {
        case .impression: "X-TRACKING-IMPRESSION"
        case .firstQuartile: "X-TRACKING-FIRST-QUARTILE"
        case .midpoint: "X-TRACKING-MIDPOINT"
        case .thirdQuartile: "X-TRACKING-THIRD-QUARTILE"
        case .complete: "X-TRACKING-COMPLETE"
        }
    }

    /// The macros a tracking URL may contain, each replaced by a percent-encoded value: `{session}`
    /// the session id, `{break}` the break id, `{ad}` the ad id (`X-AD-ID`), `{creative}` the creative
    /// id (`X-CREATIVE-ID`). All are fixed for a (session, break, ad), so the expanded URLs never
    /// change across reloads (invariant 6).
    public static let macros = ["session", "break", "ad", "creative"]

    /// `template` with its macros replaced.
    public static func expand(_ template: String, sessionID: String, breakID: String, adID: String, creativeID: String)
        -> String
    {
        guard template.utf8.contains(UInt8(ascii: "{")) else { return template }
        var output = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            output += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            let name = rest[rest.index(after: open)..<close]
            switch name {
            case "session": output += percentEncoded(sessionID)
            case "break": output += percentEncoded(breakID)
            case "ad": output += percentEncoded(adID)
            case "creative": output += percentEncoded(creativeID)
            default: output += rest[open...close]  // validation refuses unknown macros
            }
            rest = rest[rest.index(after: close)...]
        }
        return output + rest
    }

    /// RFC 3986 percent-encoding of everything but the unreserved characters.
    static func percentEncoded(_ value: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Why `url` cannot be a tracking URL template, `nil` when it can: an `http://` or `https://`
    /// URL of printable ASCII without spaces or quotes (it is written in a quoted-string, separated
    /// from the next by a space), whose `{…}` are known ``macros``.
    public static func problem(with url: String) -> String? {
        let bytes = Array(url.utf8)
        let scheme = url.hasPrefix("https://") ? 8 : url.hasPrefix("http://") ? 7 : 0
        guard scheme > 0, bytes.count > scheme else { return "must be an http:// or https:// URL" }
        if bytes.contains(UInt8(ascii: " ")) { return "contains a space; percent-encode it (%20)" }
        if bytes.contains(UInt8(ascii: "\"")) { return "contains a double quote; percent-encode it (%22)" }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return "contains a control character" }
        if bytes.contains(where: { $0 > 0x7E }) { return "contains a non-ASCII character; percent-encode it" }
        var rest = Substring(url)
        while let brace = rest.firstIndex(where: { $0 == "{" || $0 == "}" }) {
            guard rest[brace] == "{", let close = rest[brace...].firstIndex(of: "}") else {
                return "has an unmatched brace; macros are written {session}, {break}, {ad}, {creative}"
            }
            let name = String(rest[rest.index(after: brace)..<close])
            guard macros.contains(name) else {
                return "unknown macro {\(name)} (known: {session}, {break}, {ad}, {creative})"
            }
            rest = rest[rest.index(after: close)...]
        }
        return nil
    }
}
