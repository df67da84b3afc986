/// Bearer-token checks for `/ingest/…` (RFC 6750 §2.1).
package enum BearerToken {
    /// The token of an `Authorization: Bearer <token>` field value (scheme case-insensitive), or `nil`.
    package static func bearerToken(_ value: String) -> [UInt8]? {
        let bytes = Array(value.utf8)
        let scheme = Array("bearer".utf8)
        guard bytes.count > scheme.count + 1,
            zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 })
        else { return nil }
        var index = scheme.count
        guard bytes[index] == UInt8(ascii: " ") else { return nil }
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") { index += 1 }
        let token = Array(bytes[index...])
        return token.isEmpty ? nil : token
    }

    /// Compares in time that depends only on `expected`'s length, so response timing does not tell
    /// an attacker how many leading bytes of a guess were right.
    package static func matches(_ presented: [UInt8], expected: [UInt8]) -> Bool {
        var difference = UInt(bitPattern: presented.count ^ expected.count)
        for index in expected.indices {
            let byte = index < presented.count ? presented[index] : 0
            difference |= UInt(byte ^ expected[index])
        }
        return difference == 0
    }
}
