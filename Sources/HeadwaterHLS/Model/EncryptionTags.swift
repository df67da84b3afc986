/// `EXT-X-KEY` (RFC 8216bis §4.4.4.4): how the following segments are encrypted. It applies to every
/// segment until the next KEY with the same KEYFORMAT; the origin must re-emit it at the head of a
/// sliding window (B10) and signal `METHOD=NONE` before clear ads inside encrypted content.
public struct Key: AttributeListTag {
    public static let tagName = "EXT-X-KEY"
    public static let schema: [AttributeSpec] = [
        .init("METHOD", .enumeratedString, required: true),
        .init("URI", .quotedString),
        .init("IV", .hexadecimalSequence),
        .init("KEYFORMAT", .quotedString),
        .init("KEYFORMATVERSIONS", .quotedString),
    ]
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }

    public init(method: String, uri: String? = nil, iv: [UInt8]? = nil, keyFormat: String? = nil) {
        var list: AttributeList = [Attribute("METHOD", .token(method))]
        if let uri { list["URI"] = .quoted(uri) }
        if let iv { list["IV"] = .hex(iv) }
        if let keyFormat { list["KEYFORMAT"] = .quoted(keyFormat) }
        self.attributes = list
    }

    /// `EXT-X-KEY:METHOD=NONE`.
    public static let none = Key(method: "NONE")

    public var method: String { attributes.enumerated("METHOD") ?? "" }
    public var uri: String? { attributes.string("URI") }
    public var iv: [UInt8]? { attributes.hexBytes("IV") }
    /// Defaults to `identity` (§4.4.4.4).
    public var keyFormat: String { attributes.string("KEYFORMAT") ?? "identity" }
}

/// `EXT-X-SESSION-KEY` (§4.4.6.5): a key announced in the multivariant playlist for preloading.
public struct SessionKey: AttributeListTag {
    public static let tagName = "EXT-X-SESSION-KEY"
    public static let schema = Key.schema
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }

    public var method: String { attributes.enumerated("METHOD") ?? "" }
    public var uri: String? { attributes.string("URI") }
}

/// `EXT-X-MAP` (§4.4.4.5): the Media Initialization Section for the following segments. Every fMP4
/// segment must have one applied (B9), so it is re-emitted at the head after the window slides.
public struct MediaInitializationSection: AttributeListTag {
    public static let tagName = "EXT-X-MAP"
    public static let schema: [AttributeSpec] = [
        .init("URI", .quotedString, required: true),
        .init("BYTERANGE", .quotedByteRange),
    ]
    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }

    public init(uri: String, byteRange: ByteRange? = nil) {
        var list: AttributeList = [Attribute("URI", .quoted(uri))]
        if let byteRange { list["BYTERANGE"] = .quoted(byteRange.description) }
        self.attributes = list
    }

    public var uri: String {
        get { attributes.string("URI") ?? "" }
        set { attributes["URI"] = .quoted(newValue) }
    }
    public var byteRange: ByteRange? { attributes.byteRange("BYTERANGE") }
}
