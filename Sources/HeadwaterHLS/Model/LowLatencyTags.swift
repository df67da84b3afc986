/// `EXT-X-PART-INF` (§4.4.3.7): the Part Target Duration of a low-latency playlist.
public struct PartInformation: AttributeListTag {
    public static let tagName = "EXT-X-PART-INF"
    public static let schema: [AttributeSpec] = [.init("PART-TARGET", .decimalFloatingPoint, required: true)]
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }
    public init(partTarget: HLSDuration) { self.attributes = [Attribute("PART-TARGET", .decimal(partTarget))] }

    public var partTarget: HLSDuration { attributes.decimal("PART-TARGET") ?? .zero }
}

/// `EXT-X-SERVER-CONTROL` (§4.4.3.8): which delivery directives the server supports.
public struct ServerControl: AttributeListTag {
    public static let tagName = "EXT-X-SERVER-CONTROL"
    public static let schema: [AttributeSpec] = [
        .init("CAN-SKIP-UNTIL", .decimalFloatingPoint),
        .init("CAN-SKIP-DATERANGES", .enumeratedString),
        .init("HOLD-BACK", .decimalFloatingPoint),
        .init("PART-HOLD-BACK", .decimalFloatingPoint),
        .init("CAN-BLOCK-RELOAD", .enumeratedString),
    ]
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }

    public var canSkipUntil: HLSDuration? { attributes.decimal("CAN-SKIP-UNTIL") }
    public var canSkipDateRanges: Bool { attributes.yesNo("CAN-SKIP-DATERANGES") ?? false }
    public var holdBack: HLSDuration? { attributes.decimal("HOLD-BACK") }
    public var partHoldBack: HLSDuration? { attributes.decimal("PART-HOLD-BACK") }
    public var canBlockReload: Bool { attributes.yesNo("CAN-BLOCK-RELOAD") ?? false }
}

/// `EXT-X-PART` (§4.4.4.9): a Partial Segment of the (possibly still open) parent segment.
public struct PartialSegment: AttributeListTag {
    public static let tagName = "EXT-X-PART"
    public static let schema: [AttributeSpec] = [
        .init("URI", .quotedString, required: true),
        .init("DURATION", .decimalFloatingPoint, required: true),
        .init("INDEPENDENT", .enumeratedString),
        .init("BYTERANGE", .quotedByteRange),
        .init("GAP", .enumeratedString),
    ]
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }

    public init(uri: String, duration: HLSDuration, independent: Bool = false, byteRange: ByteRange? = nil) {
        var list: AttributeList = [Attribute("DURATION", .decimal(duration)), Attribute("URI", .quoted(uri))]
        if independent { list["INDEPENDENT"] = .token("YES") }
        if let byteRange { list["BYTERANGE"] = .quoted(byteRange.description) }
        self.attributes = list
    }

    public var uri: String { attributes.string("URI") ?? "" }
    public var duration: HLSDuration { attributes.decimal("DURATION") ?? .zero }
    public var isIndependent: Bool { attributes.yesNo("INDEPENDENT") ?? false }
    public var byteRange: ByteRange? { attributes.byteRange("BYTERANGE") }
    public var isGap: Bool { attributes.yesNo("GAP") ?? false }
}

/// `EXT-X-PRELOAD-HINT` (§4.4.5.3): the next part or init section, requestable before it exists.
public struct PreloadHint: AttributeListTag {
    public static let tagName = "EXT-X-PRELOAD-HINT"
    public static let schema: [AttributeSpec] = [
        .init("TYPE", .enumeratedString, required: true),
        .init("URI", .quotedString, required: true),
        .init("BYTERANGE-START", .decimalInteger),
        .init("BYTERANGE-LENGTH", .decimalInteger),
    ]
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }

    public var type: String { attributes.enumerated("TYPE") ?? "" }
    public var uri: String { attributes.string("URI") ?? "" }
}

/// `EXT-X-RENDITION-REPORT` (§4.4.5.4): the live edge of another rendition.
public struct RenditionReport: AttributeListTag {
    public static let tagName = "EXT-X-RENDITION-REPORT"
    public static let schema: [AttributeSpec] = [
        .init("URI", .quotedString, required: true),
        .init("LAST-MSN", .decimalInteger),
        .init("LAST-PART", .decimalInteger),
    ]
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }

    public var uri: String { attributes.string("URI") ?? "" }
    public var lastMediaSequence: UInt64? { attributes.integer("LAST-MSN") }
    public var lastPart: UInt64? { attributes.integer("LAST-PART") }
}

/// `EXT-X-SKIP` (§4.4.5.2): segments a Playlist Delta Update left out.
public struct Skip: AttributeListTag {
    public static let tagName = "EXT-X-SKIP"
    public static let schema: [AttributeSpec] = [
        .init("SKIPPED-SEGMENTS", .decimalInteger, required: true),
        .init("RECENTLY-REMOVED-DATERANGES", .quotedString),
    ]
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }

    public var skippedSegments: UInt64 { attributes.integer("SKIPPED-SEGMENTS") ?? 0 }
    /// Tab-separated IDs (§4.4.5.2).
    public var recentlyRemovedDateRanges: [String]? {
        attributes.string("RECENTLY-REMOVED-DATERANGES").map {
            $0.split(separator: "\t", omittingEmptySubsequences: true).map(String.init)
        }
    }
}
