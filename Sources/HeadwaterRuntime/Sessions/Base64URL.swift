/// base64url without padding (RFC 4648 §5, §3.2), the alphabet of session tokens: safe in a URL
/// query without percent-encoding.
///
/// Decoding is canonical: padding, characters outside the alphabet, an impossible length and
/// non-zero unused bits in the last character are all refused, so one byte string has exactly one
/// text form and changing any character of a token changes the bytes it decodes to.
enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var accumulator: UInt32 = 0
        var bitsHeld = 0
        for byte in bytes {
            accumulator = accumulator << 8 | UInt32(byte)
            bitsHeld += 8
            while bitsHeld >= 6 {
                bitsHeld -= 6
                out.append(alphabet[Int(accumulator >> UInt32(bitsHeld) & 0x3F)])
            }
            accumulator &= (1 << UInt32(bitsHeld)) - 1
        }
        if bitsHeld > 0 { out.append(alphabet[Int(accumulator << UInt32(6 - bitsHeld) & 0x3F)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of canonical unpadded base64url text, or `nil`.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bitsHeld = 0
        for char in text {
            guard let value = sextet(char) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bitsHeld += 6
            if bitsHeld >= 8 {
                bitsHeld -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitsHeld)))
                accumulator &= (1 << UInt32(bitsHeld)) - 1
            }
        }
        // The bits left over must be zero, or two texts would decode to the same bytes.
        guard accumulator == 0 else { return nil }
        return out
    }

    private static func sextet(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return char - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return char - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return nil
        }
    }
}
