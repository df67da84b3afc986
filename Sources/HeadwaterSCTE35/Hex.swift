/// Hexadecimal text as used by `EXT-X-DATERANGE` `SCTE35-CMD/OUT/IN` (a hexadecimal-sequence,
/// RFC 8216bis §4.2): `0x` followed by upper-case digits on output; `0x`/`0X` or bare, any case, on input.
enum Hex {
    private static let digits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// `0x` + upper-case hex digits.
    static func encode(_ bytes: [UInt8], prefix: Bool = true) -> String {
        var out: [UInt8] = prefix ? [UInt8(ascii: "0"), UInt8(ascii: "x")] : []
        out.reserveCapacity(out.count + bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hex digits with an optional `0x`/`0X` prefix. Offsets in errors count the prefix.
    static func decode(_ text: String) throws(SCTE35Error) -> [UInt8] {
        let chars = Array(text.utf8)
        var index = 0
        if chars.count >= 2, chars[0] == UInt8(ascii: "0"), chars[1] == UInt8(ascii: "x") || chars[1] == UInt8(ascii: "X") {
            index = 2
        }
        guard (chars.count - index) % 2 == 0 else { throw .invalidHex(offset: chars.count - 1) }
        var out: [UInt8] = []
        out.reserveCapacity((chars.count - index) / 2)
        while index < chars.count {
            guard let high = nibble(chars[index]) else { throw .invalidHex(offset: index) }
            guard let low = nibble(chars[index + 1]) else { throw .invalidHex(offset: index + 1) }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    static func isHexDigit(_ char: UInt8) -> Bool { nibble(char) != nil }

    private static func nibble(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return char - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return char - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}
