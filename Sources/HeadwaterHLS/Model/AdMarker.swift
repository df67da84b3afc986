/// The de-facto ad-marker tags that encoders and packagers put in live playlists (HLS-RULES §H).
/// None is in RFC 8216bis, players ignore them, but an SSAI origin must read every one of them, and
/// write the ones its operators ask for. They apply positionally, like media segment tags.
///
/// What a marker means to a break tracker, whatever its syntax: ``role`` (start, continuation, end,
/// an SCTE-35 section that decides, or metadata), ``plannedDuration``, ``elapsed`` and
/// ``scte35Base64``.
///
/// The dialects a tolerant parse (``PlaylistParser/parseTolerating(_:)``) reads, and what it reads
/// them as (the strict parse refuses the first two and keeps the others as unknown tags):
///
/// | dialect | example | read as |
/// | --- | --- | --- |
/// | bare continuation (Elemental configurations, hand-made playlists) | `#EXT-X-CUE-OUT-CONT` | `#EXT-X-CUE-OUT-CONT:<elapsed>/<duration>` from the playlist's `EXT-X-CUE-OUT`; without one, a continuation with no value (``role`` `.continuation`, not written) |
/// | duration then parameters (Elemental/MediaConvert) | `#EXT-X-CUE-OUT:30,SpliceType=LiveDAI` | `#EXT-X-CUE-OUT:DURATION=30,SpliceType=LiveDAI` |
/// | Adobe Primetime (CueMode PT_1_0), MediaLive/Elemental "Adobe" style | `#EXT-X-CUE:TYPE=SpliceOut,ID=1,TIME=266.198,DURATION=60.0`, `#EXT-X-CUE:DURATION="201.467",ID="0",TYPE="SpliceOut",TIME="414.171"` | `#EXT-X-CUE-OUT:DURATION=60.000,ID=1,TIME=266.198`; `TYPE=SpliceIn` → `#EXT-X-CUE-IN:ID=…` |
/// | Adobe continuation | `#EXT-X-CUE-CONT:ID=1,AVAIL-DUR-ELAPSED=5.8` | `#EXT-X-CUE-OUT-CONT:5.800/60.000` (duration from the open cue, else `ElapsedTime=5.800`) |
/// | threefive splice point | `#EXT-X-SPLICEPOINT-SCTE35:/DA0AAAA…` | `#EXT-OATCLS-SCTE35:/DA0AAAA…` (the section decides) |
///
/// Forms the strict parse already reads, with the vendors that write them: `#EXT-X-CUE-OUT:DURATION=30,BREAKID=…`
/// (attribute syntax, extra attributes kept), `#EXT-X-CUE-IN:BREAKID=…` (value kept), Wowza Streaming
/// Engine's `ModuleAdMarkers` and Harmonic's Elemental-style `EXT-X-CUE-OUT`/`-CONT`/`-IN`, and
/// `#EXT-X-CUE-OUT-CONT:ElapsedTime=…,Duration=…,SCTE35=…` (AWS "SCTE-35 enhanced").
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
    /// Adobe Primetime's start or end (H5).
    public static let adobeCueTag = "EXT-X-CUE"
    /// Adobe Primetime's continuation (H5).
    public static let adobeCueContinuationTag = "EXT-X-CUE-CONT"
    /// threefive's splice point (H6).
    public static let splicePointTag = "EXT-X-SPLICEPOINT-SCTE35"

    /// What a marker says about an ad break.
    public enum Role: Sendable, Hashable {
        /// A break starts on this segment.
        case start
        /// This segment is inside a break that started earlier.
        case continuation
        /// The break ends: this segment is content again.
        case end
        /// An SCTE-35 section (``scte35Base64``) whose command and descriptors say what happens.
        case cue
        /// Targeting or asset metadata, no timing (`EXT-X-ASSET`).
        case metadata
    }

    public var role: Role {
        switch self {
        case .cueOut: return .start
        case .cueOutContinuation: return .continuation
        case .cueIn: return .end
        case .oatclsSCTE35: return .cue
        case .scte35(let list):
            // The CUE decides when there is one; otherwise the CUE-OUT/CUE-IN (or TYPE) attribute does.
            if list.string("CUE") != nil { return .cue }
            switch (list.string("CUE-OUT")?.uppercased(), list.string("CUE-IN")?.uppercased(), list.string("TYPE")?.uppercased()) {
            case ("CONT", _, _): return .continuation
            case ("YES", _, _), (_, _, "OUT"): return .start
            case (_, "YES", _), (_, _, "IN"): return .end
            default: return .cue
            }
        case .asset: return .metadata
        }
    }

    /// The planned duration of the break, where the tag states it.
    public var plannedDuration: HLSDuration? {
        switch self {
        case .cueOut(let cue): return cue.duration
        case .cueOutContinuation(let cont): return cont.duration
        case .scte35(let list): return list.decimal("DURATION")
        case .cueIn, .oatclsSCTE35, .asset: return nil
        }
    }

    /// Time since the break started, before this segment, where the tag states it.
    public var elapsed: HLSDuration? {
        if case .cueOutContinuation(let cont) = self { return cont.elapsed }
        return nil
    }

    /// The base64 `splice_info_section` the tag carries, if any.
    public var scte35Base64: String? {
        switch self {
        case .oatclsSCTE35(let base64): return base64
        case .cueOutContinuation(let cont): return cont.scte35Base64
        case .scte35(let list): return list.string("CUE")
        case .cueOut, .cueIn, .asset: return nil
        }
    }

    /// A dialect tag (Adobe `EXT-X-CUE`/`EXT-X-CUE-CONT`, threefive `EXT-X-SPLICEPOINT-SCTE35`) as
    /// the canonical marker that means the same, or `nil` when `tag` is not one or does not say
    /// enough to be read (it then stays an unknown tag). `openDuration` is the planned duration of
    /// the break in progress, for a continuation that does not state it.
    public init?(dialect tag: UnknownTag, openDuration: HLSDuration? = nil) {
        let text = tag.text
        guard let colon = text.firstIndex(of: ":") else {
            if text == Self.adobeCueContinuationTag {
                self = .cueOutContinuation(CueOutContinuation(value: ""))
                return
            }
            return nil
        }
        let name = text[..<colon]
        let value = text[text.index(after: colon)...]
        switch name {
        case Self.splicePointTag:
            // Base64 (either alphabet), as `EXT-OATCLS-SCTE35` needs.
            guard !value.isEmpty,
                value.utf8.allSatisfy({ c in
                    (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 43 || c == 47 || c == 61 || c == 45 || c == 95
                })
            else { return nil }
            self = .oatclsSCTE35(base64: String(value))
        case Self.adobeCueTag:
            guard let list = try? AttributeListParser.parse(value, strictNames: false) else { return nil }
            let rest = AdMarker.attributes(list, removing: ["TYPE", "DURATION"])
            switch list.string("TYPE")?.lowercased() {
            case "spliceout", "spliceinsert":
                let duration = list.string("DURATION").flatMap { HLSDuration(decimal: $0) }
                if list.string("TYPE")?.lowercased() == "spliceinsert", duration == nil { return nil }
                var parts: [String] = duration.map { ["DURATION=\($0)"] } ?? []
                if !rest.isEmpty { parts.append(rest) }
                self = .cueOut(CueOut(value: parts.isEmpty ? nil : parts.joined(separator: ",")))
            case "splicein":
                self = .cueIn(value: rest.isEmpty ? nil : rest)
            default:
                return nil
            }
        case Self.adobeCueContinuationTag:
            guard let list = try? AttributeListParser.parse(value, strictNames: false) else { return nil }
            let elapsed = list.string("AVAIL-DUR-ELAPSED").flatMap { HLSDuration(decimal: $0) }
            let duration = list.string("DURATION").flatMap { HLSDuration(decimal: $0) } ?? openDuration
            switch (elapsed, duration) {
            case (let elapsed?, let duration?): self = .cueOutContinuation(CueOutContinuation(elapsed: elapsed, duration: duration))
            case (let elapsed?, nil): self = .cueOutContinuation(CueOutContinuation(value: "ElapsedTime=\(elapsed)"))
            case (nil, _): self = .cueOutContinuation(CueOutContinuation(value: ""))
            }
        default:
            return nil
        }
    }

    /// `list` without `names`, written as `NAME=value` pairs with every value as a token when it can
    /// be one (the Adobe style quotes numbers), quoted otherwise.
    private static func attributes(_ list: AttributeList, removing names: Set<String>) -> String {
        list.attributes.filter { !names.contains($0.name) }
            .map { attribute in
                let text = attribute.value.text
                let plain = !text.isEmpty && !text.contains(where: { $0 == "," || $0 == "\"" || $0 == " " || $0 == "=" })
                return plain ? "\(attribute.name)=\(text)" : "\(attribute.name)=\"\(text)\""
            }
            .joined(separator: ",")
    }
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

    /// `30,SpliceType=LiveDAI,…` (a duration, then parameters, as some Elemental configurations write)
    /// rewritten in the attribute syntax, `DURATION=30,SpliceType=LiveDAI,…`; only the duration is kept
    /// when the parameters are not an attribute list or already hold a `DURATION`. `nil` when `value`
    /// does not start with a duration and a comma.
    public init?(durationThenParameters value: String) {
        guard let comma = value.firstIndex(of: ","), let duration = HLSDuration(decimal: value[..<comma]) else { return nil }
        let parameters = value[value.index(after: comma)...]
        if let list = try? AttributeListParser.parse(parameters, strictNames: false), !list.contains("DURATION") {
            self.value = "DURATION=\(duration)," + parameters
        } else {
            self.value = duration.description
        }
    }

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
