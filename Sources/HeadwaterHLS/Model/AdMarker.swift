/// The de-facto ad-marker tags that encoders and packagers put in live playlists (HLS-RULES §H).
/// None is in RFC 8216bis, players ignore them, but an SSAI origin must read every one of them, and
/// write the ones its operators ask for. They apply positionally, like media segment tags.
public enum AdMarker: Sendable, Hashable {
    /// `#EXT-X-CUE-OUT`, `#EXT-X-CUE-OUT:30.000`, or `#EXT-X-CUE-OUT:DURATION=30` (H1, H3, H4).
    case cueOut(CueOut)
    /// `#EXT-X-CUE-OUT-CONT:2.000/30` or `#EXT-X-CUE-OUT-CONT:ElapsedTime=2.000,Duration=30,SCTE35=…` (H1, H2).
    case cueOutContinuation(CueOutContinuation)
    /// `#EXT-X-CUE-IN` (H1). Some packagers append a value; it is kept.
    case cueIn(value: String?)
    /// `#EXT-OATCLS-SCTE35:<base64 splice_info_section>` (H2).
    case oatclsSCTE35(base64: String)
    /// `#EXT-X-SCTE35:CUE="<base64>",…` (H6, vendor-specific attributes kept as written).
    case scte35(AttributeList)
    /// `#EXT-X-ASSET:GENRE=CV,CAID=…` (H4): URL-encoded values, kept verbatim.
    case asset(value: String)

    public static let cueOutTag = "EXT-X-CUE-OUT"
    public static let cueOutContinuationTag = "EXT-X-CUE-OUT-CONT"
    public static let cueInTag = "EXT-X-CUE-IN"
    public static let oatclsTag = "EXT-OATCLS-SCTE35"
    public static let scte35Tag = "EXT-X-SCTE35"
    public static let assetTag = "EXT-X-ASSET"
}

/// `EXT-X-CUE-OUT` in its three syntaxes.
public struct CueOut: Sendable, Hashable {
    /// Which syntax the tag uses.
    public enum Syntax: Sendable, Hashable {
        /// `#EXT-X-CUE-OUT` with no value.
        case bare
        /// `#EXT-X-CUE-OUT:30.000` (Elemental / AWS).
        case plain
        /// `#EXT-X-CUE-OUT:DURATION=30[,…]` (Google DAI, MediaTailor).
        case attributes
    }

    /// The tag value exactly as written, or `nil` for the bare form.
    public var value: String?

    public init(value: String?) { self.value = value }

    /// `#EXT-X-CUE-OUT:<duration>` in the plain syntax.
    public init(duration: HLSDuration) { self.value = duration.description }

    public var syntax: Syntax {
        guard let value, !value.isEmpty else { return .bare }
        return HLSDuration(decimal: value) != nil ? .plain : .attributes
    }

    /// The planned break duration, when the tag states one.
    public var duration: HLSDuration? {
        guard let value, !value.isEmpty else { return nil }
        if let plain = HLSDuration(decimal: value) { return plain }
        guard let list = try? AttributeListParser.parse(value, strictNames: false) else { return nil }
        return list.decimal("DURATION")
    }
}

/// `EXT-X-CUE-OUT-CONT`: progress inside a break, on each segment after the one with CUE-OUT.
public struct CueOutContinuation: Sendable, Hashable {
    /// The tag value exactly as written.
    public var value: String

    public init(value: String) { self.value = value }

    /// `#EXT-X-CUE-OUT-CONT:<elapsed>/<duration>`.
    public init(elapsed: HLSDuration, duration: HLSDuration) {
        self.value = "\(elapsed)/\(duration)"
    }

    /// Elapsed time of the break before this segment.
    public var elapsed: HLSDuration? { parts.elapsed }
    /// The break's planned duration.
    public var duration: HLSDuration? { parts.duration }
    /// The base64 `SCTE35=` of the AWS "SCTE-35 enhanced" form.
    public var scte35Base64: String? { parts.scte35 }

    /// The parsed value: either `<elapsed>/<duration>` or an attribute list, `nil`s where absent.
    public var parts: (elapsed: HLSDuration?, duration: HLSDuration?, scte35: String?) {
        let utf8 = value.utf8
        if !utf8.contains(UInt8(ascii: "=")), let slash = utf8.firstIndex(of: UInt8(ascii: "/")) {
            let elapsed = HLSDuration.parse(utf8: utf8[..<slash], allowNegative: false)
            let duration = HLSDuration.parse(utf8: utf8[utf8.index(after: slash)...], allowNegative: false)
            return (elapsed.map(HLSDuration.init(microseconds:)), duration.map(HLSDuration.init(microseconds:)), nil)
        }
        guard let list = try? AttributeListParser.parse(value, strictNames: false) else { return (nil, nil, nil) }
        return (list.decimal("ElapsedTime"), list.decimal("Duration"), list.string("SCTE35"))
    }
}
