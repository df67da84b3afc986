/// The attribute-list grammar of RFC 8216bis §4.2 (A6): `NAME=VALUE` pairs separated by commas, no
/// whitespace, names `[A-Z0-9-]`, each name at most once, values quoted (`"…"`, no CR/LF/`"`) or
/// unquoted tokens (no `"`, `,` or whitespace).
public enum AttributeListParser {
    /// Why an attribute list failed to parse (mapped to a ``PlaylistParseError`` with a line number).
    public struct Failure: Error, Hashable {
        public var isDuplicate: Bool
        public var message: String
        /// The list has more attributes than allowed (a limit, not a syntax error).
        public var isLimit: Bool = false
    }

    /// Parses `text`. With `strictNames: false`, vendor spellings such as `ElapsedTime=` (AWS) are
    /// accepted (`[A-Za-z0-9_-]`).
    public static func parse(_ text: some StringProtocol, strictNames: Bool = true) throws(Failure) -> AttributeList {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { (buffer) throws(Failure) -> AttributeList in
            try parse(buffer, strictNames: strictNames)
        }
    }

    /// With `skipsSpaceAfterComma`, spaces and TABs after a separating comma are skipped (a tolerant
    /// parse's ``IngestDeviation/Rule/attributeWhitespace``).
    static func parse(_ b: UnsafeBufferPointer<UInt8>, strictNames: Bool, maxAttributes: Int = 256, skipsSpaceAfterComma: Bool = false)
        throws(Failure) -> AttributeList
    {
        let range = 0..<b.count
        var attributes: [Attribute] = []
        var i = range.lowerBound
        let end = range.upperBound
        guard i < end else { throw Failure(isDuplicate: false, message: "empty attribute list") }
        while true {
            // NAME
            let nameStart = i
            while i < end, b[i] != UInt8(ascii: "=") {
                let c = b[i]
                let ok =
                    (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c == UInt8(ascii: "-")
                    || (!strictNames && ((c >= 97 && c <= 122) || c == UInt8(ascii: "_")))
                guard ok else {
                    throw Failure(
                        isDuplicate: false,
                        message: "invalid character \(Self.show(c)) in attribute name at column \(i - range.lowerBound + 1)"
                    )
                }
                i += 1
            }
            guard i > nameStart else {
                throw Failure(isDuplicate: false, message: "empty attribute name at column \(i - range.lowerBound + 1)")
            }
            guard i < end else {
                throw Failure(
                    isDuplicate: false,
                    message: "attribute \(String(decoding: UnsafeBufferPointer(rebasing: b[nameStart..<i]), as: UTF8.self)) has no '=value'")
            }
            let name = String(decoding: UnsafeBufferPointer(rebasing: b[nameStart..<i]), as: UTF8.self)
            i += 1  // '='
            // VALUE
            let value: AttributeValue
            if i < end, b[i] == UInt8(ascii: "\"") {
                i += 1
                let valueStart = i
                while i < end, b[i] != UInt8(ascii: "\"") {
                    guard b[i] != 10 && b[i] != 13 else { break }
                    i += 1
                }
                guard i < end, b[i] == UInt8(ascii: "\"") else {
                    throw Failure(isDuplicate: false, message: "unterminated quoted-string in attribute \(name)")
                }
                value = .quoted(String(decoding: UnsafeBufferPointer(rebasing: b[valueStart..<i]), as: UTF8.self))
                i += 1
            } else {
                let valueStart = i
                while i < end, b[i] != UInt8(ascii: ",") {
                    let c = b[i]
                    guard c != UInt8(ascii: "\""), c != 32, c != 9 else {
                        throw Failure(
                            isDuplicate: false,
                            message: "invalid character \(Self.show(c)) in value of attribute \(name)")
                    }
                    i += 1
                }
                guard i > valueStart else {
                    throw Failure(isDuplicate: false, message: "attribute \(name) has an empty value")
                }
                value = .token(String(decoding: UnsafeBufferPointer(rebasing: b[valueStart..<i]), as: UTF8.self))
            }
            if attributes.contains(where: { $0.name == name }) {
                throw Failure(isDuplicate: true, message: "attribute \(name) appears twice")
            }
            attributes.append(Attribute(name, value))
            guard attributes.count <= maxAttributes else {
                throw Failure(isDuplicate: false, message: "more than \(maxAttributes) attributes", isLimit: true)
            }
            if i == end { break }
            guard b[i] == UInt8(ascii: ",") else {
                throw Failure(
                    isDuplicate: false,
                    message: "expected ',' after attribute \(name), found \(Self.show(b[i]))")
            }
            i += 1
            if skipsSpaceAfterComma {
                while i < end, b[i] == 32 || b[i] == 9 { i += 1 }
            }
            guard i < end else { throw Failure(isDuplicate: false, message: "trailing ',' in attribute list") }
        }
        return AttributeList(attributes)
    }

    static func show(_ c: UInt8) -> String {
        if c >= 0x21 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
        return c == 32 ? "space" : "byte 0x" + String(c, radix: 16, uppercase: true)
    }
}
