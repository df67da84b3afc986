/// `EXT-X-MEDIA` (§4.4.6.1): an alternative rendition (audio, video, subtitles, closed captions).
public struct Rendition: AttributeListTag {
    public static let tagName = "EXT-X-MEDIA"
    public static let schema: [AttributeSpec] = [
        .init("TYPE", .enumeratedString, required: true),
        .init("URI", .quotedString),
        .init("GROUP-ID", .quotedString, required: true),
        .init("LANGUAGE", .quotedString),
        .init("ASSOC-LANGUAGE", .quotedString),
        .init("NAME", .quotedString, required: true),
        .init("STABLE-RENDITION-ID", .quotedString),
        .init("DEFAULT", .enumeratedString),
        .init("AUTOSELECT", .enumeratedString),
        .init("FORCED", .enumeratedString),
        .init("INSTREAM-ID", .quotedString),
        .init("BIT-DEPTH", .decimalInteger),
        .init("SAMPLE-RATE", .decimalInteger),
        .init("CHARACTERISTICS", .quotedString),
        .init("CHANNELS", .quotedString),
    ]
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }

    public var type: String { attributes.enumerated("TYPE") ?? "" }
    public var uri: String? {
        get { attributes.string("URI") }
        set { attributes["URI"] = newValue.map(AttributeValue.quoted) }
    }
    public var groupID: String { attributes.string("GROUP-ID") ?? "" }
    public var name: String { attributes.string("NAME") ?? "" }
    public var language: String? { attributes.string("LANGUAGE") }
    public var isDefault: Bool { attributes.yesNo("DEFAULT") ?? false }
    public var autoselect: Bool { attributes.yesNo("AUTOSELECT") ?? false }
}

/// The attributes shared by `EXT-X-STREAM-INF` and `EXT-X-I-FRAME-STREAM-INF` (§4.4.6.2).
private let variantSchema: [AttributeSpec] = [
    .init("BANDWIDTH", .decimalInteger, required: true),
    .init("AVERAGE-BANDWIDTH", .decimalInteger),
    .init("SCORE", .decimalFloatingPoint),
    .init("CODECS", .quotedString),
    .init("SUPPLEMENTAL-CODECS", .quotedString),
    .init("RESOLUTION", .decimalResolution),
    .init("HDCP-LEVEL", .enumeratedString),
    .init("ALLOWED-CPC", .quotedString),
    .init("VIDEO-RANGE", .enumeratedString),
    .init("REQ-VIDEO-LAYOUT", .quotedString),
    .init("STABLE-VARIANT-ID", .quotedString),
    .init("VIDEO", .quotedString),
    .init("PATHWAY-ID", .quotedString),
    .init("PROGRAM-ID", .decimalInteger),  // removed in protocol version 6, still seen in the wild
]

/// `EXT-X-STREAM-INF` plus the URI line that follows it (§4.4.6.2): one variant stream.
public struct VariantStream: AttributeListTag {
    public static let tagName = "EXT-X-STREAM-INF"
    public static let schema: [AttributeSpec] =
        variantSchema + [
            .init("FRAME-RATE", .decimalFloatingPoint),
            .init("AUDIO", .quotedString),
            .init("SUBTITLES", .quotedString),
            .init("CLOSED-CAPTIONS", .quotedStringOrNone),
        ]
    public var attributes: AttributeList
    /// The media playlist URI on the line after the tag.
    public var uri: String
    public init(attributes: AttributeList) {
        self.attributes = attributes
        self.uri = ""
    }
    public init(attributes: AttributeList, uri: String) {
        self.attributes = attributes
        self.uri = uri
    }

    public var bandwidth: UInt64 { attributes.integer("BANDWIDTH") ?? 0 }
    public var averageBandwidth: UInt64? { attributes.integer("AVERAGE-BANDWIDTH") }
    public var codecs: [String]? {
        attributes.string("CODECS").map { $0.split(separator: ",").map(String.init) }
    }
    public var resolution: Resolution? { attributes.resolution("RESOLUTION") }
    public var frameRate: HLSDuration? { attributes.decimal("FRAME-RATE") }
    public var audioGroup: String? { attributes.string("AUDIO") }
    public var subtitlesGroup: String? { attributes.string("SUBTITLES") }
}

/// `EXT-X-I-FRAME-STREAM-INF` (§4.4.6.3): an I-frame-only playlist for trick play.
public struct IFrameVariantStream: AttributeListTag {
    public static let tagName = "EXT-X-I-FRAME-STREAM-INF"
    public static let schema: [AttributeSpec] = variantSchema + [.init("URI", .quotedString, required: true)]
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }

    public var uri: String { attributes.string("URI") ?? "" }
    public var bandwidth: UInt64 { attributes.integer("BANDWIDTH") ?? 0 }
}

/// `EXT-X-SESSION-DATA` (§4.4.6.4): arbitrary session data.
public struct SessionData: AttributeListTag {
    public static let tagName = "EXT-X-SESSION-DATA"
    public static let schema: [AttributeSpec] = [
        .init("DATA-ID", .quotedString, required: true),
        .init("VALUE", .quotedString),
        .init("URI", .quotedString),
        .init("FORMAT", .enumeratedString),
        .init("LANGUAGE", .quotedString),
    ]
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }

    public var dataID: String { attributes.string("DATA-ID") ?? "" }
}

/// `EXT-X-CONTENT-STEERING` (§4.4.6.6).
public struct ContentSteering: AttributeListTag {
    public static let tagName = "EXT-X-CONTENT-STEERING"
    public static let schema: [AttributeSpec] = [
        .init("SERVER-URI", .quotedString, required: true),
        .init("PATHWAY-ID", .quotedString),
    ]
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }

    public var serverURI: String { attributes.string("SERVER-URI") ?? "" }
}

/// `EXT-X-START` (§4.4.2.2): the preferred point to start playback.
public struct StartPoint: AttributeListTag {
    public static let tagName = "EXT-X-START"
    public static let schema: [AttributeSpec] = [
        .init("TIME-OFFSET", .signedDecimalFloatingPoint, required: true),
        .init("PRECISE", .enumeratedString),
    ]
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }

    public var timeOffset: HLSDuration { attributes.decimal("TIME-OFFSET") ?? .zero }
    public var isPrecise: Bool { attributes.yesNo("PRECISE") ?? false }
}

/// `EXT-X-DEFINE` (§4.4.2.3): a variable for substitution. Headwater keeps `{$name}` references as
/// written; it does not substitute.
public struct VariableDefinition: AttributeListTag {
    public static let tagName = "EXT-X-DEFINE"
    public static let schema: [AttributeSpec] = [
        .init("NAME", .quotedString),
        .init("VALUE", .quotedString),
        .init("IMPORT", .quotedString),
        .init("QUERYPARAM", .quotedString),
    ]
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }
}
