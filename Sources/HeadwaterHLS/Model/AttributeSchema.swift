/// The value types of RFC 8216bis §4.2, plus the quoted forms HLS uses for dates and byte ranges.
public enum AttributeType: Sendable, Hashable {
    case decimalInteger
    case hexadecimalSequence
    case decimalFloatingPoint
    case signedDecimalFloatingPoint
    case quotedString
    case enumeratedString
    /// A quoted-string holding a comma-separated list of enumerated strings (`CUE="PRE,ONCE"`).
    case enumeratedStringList
    case decimalResolution
    /// A quoted ISO 8601 date (`START-DATE="…"`).
    case quotedDate
    /// A quoted `"n[@o]"`.
    case quotedByteRange
    /// A quoted-string or the enumerated-string `NONE` (`CLOSED-CAPTIONS`).
    case quotedStringOrNone
    /// A `client-attribute` value (`X-…` on DATERANGE): quoted-string, hexadecimal-sequence or
    /// signed-decimal-floating-point (§4.4.5.1).
    case clientValue

    /// Whether `value` is of this type.
    public func accepts(_ value: AttributeValue) -> Bool {
        switch (self, value) {
        case (.decimalInteger, .token(let t)): return UInt64.strictDecimal(t) != nil
        case (.hexadecimalSequence, .token(let t)):
            // §4.3: a hexadecimal-sequence may hold variable references (`IV=0x{$iv}`).
            return HexSequence.isValid(Array(t.utf8)[...]) || VariableReference.isHexTemplate(t)
        case (.decimalFloatingPoint, .token(let t)): return HLSDuration(decimal: t) != nil
        case (.signedDecimalFloatingPoint, .token(let t)): return HLSDuration(decimal: t, allowNegative: true) != nil
        case (.quotedString, .quoted): return true
        case (.enumeratedString, .token(let t)):
            // §4.3 substitutes variables only in URI lines, quoted-strings and hexadecimal-sequences.
            return !t.isEmpty && !VariableReference.contains(t)
        case (.enumeratedStringList, .quoted): return true
        case (.decimalResolution, .token(let t)): return Resolution(t) != nil
        case (.quotedDate, .quoted(let q)): return ProgramDateTime(iso8601: q) != nil
        case (.quotedByteRange, .quoted(let q)): return ByteRange(q) != nil
        case (.quotedStringOrNone, .quoted): return true
        case (.quotedStringOrNone, .token(let t)): return t == "NONE"
        case (.clientValue, .quoted): return true
        case (.clientValue, .token(let t)):
            return HexSequence.isValid(Array(t.utf8)[...]) || HLSDuration(decimal: t, allowNegative: true) != nil
        default: return false
        }
    }

    /// The name used in error messages, as the spec spells it.
    public var specName: String {
        switch self {
        case .decimalInteger: return "decimal-integer"
        case .hexadecimalSequence: return "hexadecimal-sequence"
        case .decimalFloatingPoint: return "decimal-floating-point"
        case .signedDecimalFloatingPoint: return "signed-decimal-floating-point"
        case .quotedString: return "quoted-string"
        case .enumeratedString: return "enumerated-string"
        case .enumeratedStringList: return "quoted enumerated-string-list"
        case .decimalResolution: return "decimal-resolution"
        case .quotedDate: return "quoted ISO 8601 date"
        case .quotedByteRange: return "quoted byte range \"n[@o]\""
        case .quotedStringOrNone: return "quoted-string or NONE"
        case .clientValue: return "quoted-string, hexadecimal-sequence or signed-decimal-floating-point"
        }
    }
}

/// One attribute a tag defines.
public struct AttributeSpec: Sendable, Hashable {
    public var name: String
    public var type: AttributeType
    public var isRequired: Bool

    public init(_ name: String, _ type: AttributeType, required: Bool = false) {
        self.name = name
        self.type = type
        self.isRequired = required
    }
}

/// A tag whose value is an attribute list. Conforming types are typed views over ``attributes``;
/// the parser checks each known attribute's type and the required ones before building them.
public protocol AttributeListTag: Sendable, Hashable {
    /// The tag name without `#`, e.g. `EXT-X-KEY`.
    static var tagName: String { get }
    static var schema: [AttributeSpec] { get }
    /// Whether `X-` client attributes are allowed (only `EXT-X-DATERANGE`).
    static var allowsClientAttributes: Bool { get }
    var attributes: AttributeList { get set }
    init(attributes: AttributeList)
}

extension AttributeListTag {
    public static var allowsClientAttributes: Bool { false }
}
