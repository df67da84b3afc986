/// The token payload: a version byte, then the fields, each length-prefixed.
///
/// ```
/// version        1 byte, 1
/// start          varint, zigzag-encoded Int64 (milliseconds since the epoch)
/// channel        varint byte count, UTF-8
/// id             varint byte count, UTF-8
/// targeting      varint pair count, then for each pair in ascending byte order of the key:
///   key          varint byte count, UTF-8
///   value        varint byte count, UTF-8
/// ```
///
/// Varints are unsigned LEB128. Decoding is strict (minimal varints, keys strictly ascending,
/// valid UTF-8, no trailing bytes), so every accepted payload is the one ``SessionToken/encoded()``
/// would write for the token it decodes to. The MAC is checked before any of this is read.
extension SessionToken {
    /// The only payload version there is.
    static let version: UInt8 = 1

    /// The payload bytes (before base64url and the MAC).
    public func encoded() -> [UInt8] {
        var out: [UInt8] = [Self.version]
        out.reserveCapacity(64)
        Self.appendVarint(UInt64(bitPattern: (start << 1) ^ (start >> 63)), to: &out)
        Self.appendString(channel, to: &out)
        Self.appendString(id, to: &out)
        let keys = targeting.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        Self.appendVarint(UInt64(keys.count), to: &out)
        for key in keys {
            Self.appendString(key, to: &out)
            Self.appendString(targeting[key]!, to: &out)
        }
        return out
    }

    /// Reads a payload; the error says what is wrong with it, for ``SessionTokenError/malformed(_:)``.
    init(decoding bytes: [UInt8]) throws(SessionTokenError) {
        var reader = PayloadReader(bytes: bytes[...])
        guard let version = reader.byte() else { throw .malformed("empty payload") }
        guard version == Self.version else { throw .malformed("unknown version \(version)") }
        let zigzag = try reader.varint()
        let start = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
        let channel = try reader.string()
        let id = try reader.string()
        let count = try reader.varint()
        // Every pair takes at least two bytes: this bounds the loop by the input, not the claim.
        guard count <= UInt64(reader.remaining / 2) else { throw .malformed("truncated targeting") }
        var targeting: [String: String] = [:]
        var previousKey: String?
        for _ in 0..<count {
            let key = try reader.string()
            let value = try reader.string()
            if let previousKey, !previousKey.utf8.lexicographicallyPrecedes(key.utf8) {
                throw .malformed("targeting keys out of order")
            }
            previousKey = key
            targeting[key] = value
        }
        guard reader.remaining == 0 else { throw .malformed("trailing bytes") }
        self.init(channel: channel, id: id, start: start, targeting: targeting)
    }

    private static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }

    private static func appendString(_ string: String, to out: inout [UInt8]) {
        appendVarint(UInt64(string.utf8.count), to: &out)
        out.append(contentsOf: string.utf8)
    }
}

/// A cursor over payload bytes.
private struct PayloadReader {
    var bytes: ArraySlice<UInt8>

    var remaining: Int { bytes.count }

    mutating func byte() -> UInt8? { bytes.popFirst() }

    /// Unsigned LEB128, at most 10 bytes, minimal (no redundant trailing zero group).
    mutating func varint() throws(SessionTokenError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard let byte = bytes.popFirst() else { throw .malformed("truncated") }
            guard shift < 63 || byte <= 1 else { throw .malformed("number too large") }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                guard byte != 0 || shift == 0 else { throw .malformed("non-minimal number") }
                return value
            }
            shift += 7
        }
    }

    mutating func string() throws(SessionTokenError) -> String {
        let length = try varint()
        guard length <= UInt64(bytes.count) else { throw .malformed("truncated") }
        let end = bytes.startIndex + Int(length)
        guard let string = String(validating: bytes[bytes.startIndex..<end], as: UTF8.self) else {
            throw .malformed("text is not UTF-8")
        }
        bytes = bytes[end...]
        return string
    }
}
