/// JSON/Codable plumbing shared by the model types.
///
/// Every model type encodes with the SCTE 35 syntax names (snake_case) so that a decoded section
/// reads like the standard's tables. Length fields, `crc_32` and `*_seconds`/`*_name` values are
/// written for information and ignored when decoding, because the encoder recomputes them.
struct FieldKey: CodingKey, ExpressibleByStringLiteral, Hashable {
    let stringValue: String
    var intValue: Int? { nil }

    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
    init(stringLiteral value: String) { stringValue = value }
}

extension KeyedEncodingContainer where K == FieldKey {
    /// Byte strings are written as `0x` + upper-case hex.
    mutating func encodeHex(_ bytes: [UInt8], forKey key: FieldKey) throws {
        try encode(Hex.encode(bytes), forKey: key)
    }

    /// Seconds rounded to the microsecond, e.g. `60.293567`, from 90 kHz ticks.
    mutating func encodeSeconds(ticks: UInt64, forKey key: FieldKey) throws {
        try encode(Ticks90kHz.seconds(ticks), forKey: key)
    }

    /// Reserved bits are written only when they differ from the spec's all-ones default.
    mutating func encodeReserved(_ value: UInt8, default allOnes: UInt8, forKey key: FieldKey) throws {
        if value != allOnes { try encode(value, forKey: key) }
    }
}

extension KeyedDecodingContainer where K == FieldKey {
    func decodeHex(forKey key: FieldKey) throws -> [UInt8] {
        let text = try decode(String.self, forKey: key)
        do {
            return try Hex.decode(text)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: error.description)
        }
    }

    func decodeHexIfPresent(forKey key: FieldKey) throws -> [UInt8]? {
        guard contains(key) else { return nil }
        return try decodeHex(forKey: key)
    }

    func decode<T: Decodable>(_ key: FieldKey, default value: T) throws -> T {
        try decodeIfPresent(T.self, forKey: key) ?? value
    }
}

extension KeyedEncodingContainer where K == FieldKey {
    /// A 32-bit `identifier` is written as its four ASCII characters (`"CUEI"`) when printable,
    /// otherwise as `0x` + 8 hex digits.
    mutating func encodeIdentifier(_ identifier: UInt32, forKey key: FieldKey) throws {
        let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: identifier >> UInt32($0)) }
        let printable = bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        let looksHex = bytes[0] == UInt8(ascii: "0") && (bytes[1] == UInt8(ascii: "x") || bytes[1] == UInt8(ascii: "X"))
        if printable && !looksHex {
            try encode(String(decoding: bytes, as: UTF8.self), forKey: key)
        } else {
            try encode(hex(UInt64(identifier), digits: 8), forKey: key)
        }
    }
}

extension KeyedDecodingContainer where K == FieldKey {
    /// Accepts a number, `0x`-prefixed hex, or four ASCII characters.
    func decodeIdentifier(forKey key: FieldKey) throws -> UInt32 {
        if let number = try? decode(UInt32.self, forKey: key) { return number }
        let text = try decode(String.self, forKey: key)
        let utf8 = Array(text.utf8)
        if utf8.count > 2, utf8[0] == UInt8(ascii: "0"), utf8[1] == UInt8(ascii: "x") || utf8[1] == UInt8(ascii: "X"),
            utf8.count <= 10, let bytes = try? Hex.decode(String(repeating: "0", count: utf8.count % 2) + text.dropFirst(2))
        {
            return bytes.reduce(0) { $0 << 8 | UInt32($1) }
        }
        guard utf8.count == 4 else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "identifier must be a number, 0x + hex, or 4 ASCII characters")
        }
        return utf8.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
