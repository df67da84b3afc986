/// One `NAME=VALUE` pair of an attribute list (RFC 8216bis §4.2).
public struct Attribute: Sendable, Hashable {
    public var name: String
    public var value: AttributeValue

    public init(_ name: String, _ value: AttributeValue) {
        self.name = name
        self.value = value
    }
}

/// An attribute value as written: either a quoted-string (held without its quotes) or an unquoted
/// token (decimal-integer, hexadecimal-sequence, decimal-floating-point, enumerated-string,
/// decimal-resolution — held as its exact text, so nothing is lost on round trip).
public enum AttributeValue: Sendable, Hashable {
    case quoted(String)
    case token(String)

    /// The text between the quotes, or the token itself.
    public var text: String {
        switch self {
        case .quoted(let s), .token(let s): return s
        }
    }

    public static func integer(_ value: some BinaryInteger) -> AttributeValue { .token(String(value)) }
    public static func decimal(_ value: HLSDuration) -> AttributeValue { .token(value.description) }
    public static func hex(_ bytes: some Sequence<UInt8>) -> AttributeValue { .token(HexSequence.encode(bytes)) }
    public static func yesNo(_ value: Bool) -> AttributeValue { .token(value ? "YES" : "NO") }
    public static func date(_ value: ProgramDateTime) -> AttributeValue { .quoted(value.description) }
}

/// An ordered attribute list. Order and unknown attributes are preserved, so a tag Headwater does
/// not fully model still round-trips byte for byte; typed tags (``Key``, ``DateRange``, …) are views
/// over one of these.
public struct AttributeList: Sendable, Hashable, ExpressibleByArrayLiteral {
    public var attributes: [Attribute]

    public init(_ attributes: [Attribute] = []) { self.attributes = attributes }
    public init(arrayLiteral elements: Attribute...) { self.attributes = elements }

    public var isEmpty: Bool { attributes.isEmpty }
    public var names: [String] { attributes.map(\.name) }

    /// The value of `name`, or `nil`. Setting `nil` removes it; setting a new name appends it.
    public subscript(name: String) -> AttributeValue? {
        get { attributes.first(where: { $0.name == name })?.value }
        set {
            if let index = attributes.firstIndex(where: { $0.name == name }) {
                if let newValue {
                    attributes[index].value = newValue
                } else {
                    attributes.remove(at: index)
                }
            } else if let newValue {
                attributes.append(Attribute(name, newValue))
            }
        }
    }

    public func contains(_ name: String) -> Bool { attributes.contains { $0.name == name } }

    // MARK: Typed readers (the parser has already checked types against the tag's schema)

    public func string(_ name: String) -> String? { self[name]?.text }

    public func integer(_ name: String) -> UInt64? {
        guard case .token(let t)? = self[name] else { return nil }
        return UInt64.strictDecimal(t)
    }

    public func decimal(_ name: String) -> HLSDuration? {
        guard case .token(let t)? = self[name] else { return nil }
        return HLSDuration(decimal: t, allowNegative: true)
    }

    public func enumerated(_ name: String) -> String? {
        guard case .token(let t)? = self[name] else { return nil }
        return t
    }

    /// `YES` → true, `NO` → false, absent → `nil`.
    public func yesNo(_ name: String) -> Bool? {
        switch enumerated(name) {
        case "YES": return true
        case "NO": return false
        default: return nil
        }
    }

    public func hexBytes(_ name: String) -> [UInt8]? {
        guard case .token(let t)? = self[name] else { return nil }
        return HexSequence.decode(t)
    }

    public func date(_ name: String) -> ProgramDateTime? {
        guard case .quoted(let q)? = self[name] else { return nil }
        return ProgramDateTime(iso8601: q)
    }

    public func resolution(_ name: String) -> Resolution? {
        guard case .token(let t)? = self[name] else { return nil }
        return Resolution(t)
    }

    public func byteRange(_ name: String) -> ByteRange? {
        guard case .quoted(let q)? = self[name] else { return nil }
        return ByteRange(q)
    }

    /// An enumerated-string-list: a quoted, comma-separated list (`CUE="PRE,ONCE"`).
    public func list(_ name: String) -> [String]? {
        guard case .quoted(let q)? = self[name] else { return nil }
        return q.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    }
}

/// `<width>x<height>` (decimal-resolution).
public struct Resolution: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let w = UInt64.strictDecimal(parts[0]), let h = UInt64.strictDecimal(parts[1]),
            w <= UInt64(Int32.max), h <= UInt64(Int32.max)
        else { return nil }
        self.width = Int(w)
        self.height = Int(h)
    }

    public var description: String { "\(width)x\(height)" }
}

/// hexadecimal-sequence: `0x` or `0X` followed by hex digits (RFC 8216bis §4.2).
public enum HexSequence {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits: [UInt8] = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = [UInt8(ascii: "0"), UInt8(ascii: "x")]
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes `0x…`; an odd digit count is read as if a leading zero were present. `nil` if malformed.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard isValid(utf8[...]) else { return nil }
        var digits = utf8[2...].map { hexValue($0)! }
        if digits.count % 2 == 1 { digits.insert(0, at: 0) }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            out.append(digits[i] << 4 | digits[i + 1])
            i += 2
        }
        return out
    }

    /// `token` with its lower-case hex digits upper-cased (the `0x` prefix and variable references
    /// kept), or `nil` when it has none.
    static func uppercased(_ token: String) -> String? {
        let utf8 = Array(token.utf8)
        var out = utf8
        var changed = false
        var inReference = false
        for i in out.indices {  // (`x` of the prefix is not in a…f)
            let c = out[i]
            if c == UInt8(ascii: "{") { inReference = true }
            if c == UInt8(ascii: "}") { inReference = false }
            if !inReference, c >= 97, c <= 102 {
                out[i] = c - 32
                changed = true
            }
        }
        return changed ? String(decoding: out, as: UTF8.self) : nil
    }

    static func isValid(_ utf8: ArraySlice<UInt8>) -> Bool {
        guard utf8.count > 2, utf8[utf8.startIndex] == UInt8(ascii: "0"),
            utf8[utf8.startIndex + 1] == UInt8(ascii: "x") || utf8[utf8.startIndex + 1] == UInt8(ascii: "X")
        else { return false }
        return utf8.dropFirst(2).allSatisfy { hexValue($0) != nil }
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 65...70: return c - 55
        case 97...102: return c - 87
        default: return nil
        }
    }
}
