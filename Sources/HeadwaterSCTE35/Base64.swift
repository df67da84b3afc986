/// Standard base64 (RFC 4648 §4, `+` `/`, `=` padding), written here because the library does not
/// import Foundation. `EXT-OATCLS-SCTE35` and `EXT-X-CUE-OUT-CONT:…SCTE35=` carry sections this way.
enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(chunk >> 18 & 0x3F)])
            out.append(alphabet[Int(chunk >> 12 & 0x3F)])
            out.append(alphabet[Int(chunk >> 6 & 0x3F)])
            out.append(alphabet[Int(chunk & 0x3F)])
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            var chunk = UInt32(bytes[index]) << 16
            if rest == 2 { chunk |= UInt32(bytes[index + 1]) << 8 }
            out.append(alphabet[Int(chunk >> 18 & 0x3F)])
            out.append(alphabet[Int(chunk >> 12 & 0x3F)])
            out.append(rest == 2 ? alphabet[Int(chunk >> 6 & 0x3F)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes padded or unpadded base64; whitespace is not accepted.
    static func decode(_ text: String) throws(SCTE35Error) -> [UInt8] {
        let chars = Array(text.utf8)
        var end = chars.count
        var padding = 0
        while end > 0, chars[end - 1] == UInt8(ascii: "="), padding < 2 {
            end -= 1
            padding += 1
        }
        // With padding the total must be a multiple of 4; without, a lone trailing sextet is impossible.
        if padding > 0, chars.count % 4 != 0 { throw .invalidBase64(offset: chars.count) }
        if end % 4 == 1 { throw .invalidBase64(offset: end) }

        var out: [UInt8] = []
        out.reserveCapacity(end * 3 / 4)
        var accumulator: UInt32 = 0
        var bitsHeld = 0
        for index in 0..<end {
            guard let value = sextet(chars[index]) else { throw .invalidBase64(offset: index) }
            accumulator = (accumulator << 6 | UInt32(value)) & 0xFFFF
            bitsHeld += 6
            if bitsHeld >= 8 {
                bitsHeld -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitsHeld)))
            }
        }
        return out
    }

    private static func sextet(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return char - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return char - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }
}
