/// Why a bit-level parse of a parameter set stopped, in one line ("end of data reading level_idc").
struct BitstreamError: Error, Sendable, CustomStringConvertible {
    var description: String

    static func endOfData(_ field: StaticString) -> BitstreamError {
        BitstreamError(description: "end of data reading \(field)")
    }

    static func outOfRange(_ field: StaticString, _ value: UInt64) -> BitstreamError {
        BitstreamError(description: "\(field) out of range (\(value))")
    }
}

/// A bounds-checked, MSB-first bit cursor over an RBSP (a NAL unit payload with its emulation
/// prevention bytes already removed), with the Exp-Golomb codes of H.264 §9.1 / H.265 §9.2.
///
/// Every read checks the remaining length first and throws instead of indexing out of range.
struct RBSPReader {
    private let bytes: [UInt8]
    private(set) var bitOffset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remainingBits: Int { bytes.count &* 8 - bitOffset }

    /// Reads `count` (0...64) bits as an unsigned big-endian number: `u(n)`.
    mutating func bits(_ count: Int, _ field: StaticString) throws(BitstreamError) -> UInt64 {
        guard count >= 0, count <= 64, count <= remainingBits else { throw .endOfData(field) }
        var value: UInt64 = 0
        for _ in 0..<count {
            let byte = bytes[bitOffset >> 3]
            let bit = (byte >> UInt8(7 - (bitOffset & 7))) & 1
            value = (value << 1) | UInt64(bit)
            bitOffset += 1
        }
        return value
    }

    mutating func flag(_ field: StaticString) throws(BitstreamError) -> Bool {
        try bits(1, field) == 1
    }

    mutating func skip(_ count: Int, _ field: StaticString) throws(BitstreamError) {
        guard count >= 0, count <= remainingBits else { throw .endOfData(field) }
        bitOffset += count
    }

    /// `ue(v)`: unsigned Exp-Golomb. At most 31 leading zeros (values up to 2³² − 2), as both
    /// standards require of every syntax element.
    mutating func ue(_ field: StaticString) throws(BitstreamError) -> UInt64 {
        var leadingZeros = 0
        while try !flag(field) {
            leadingZeros += 1
            guard leadingZeros <= 31 else { throw .outOfRange(field, UInt64(leadingZeros)) }
        }
        return (UInt64(1) << UInt64(leadingZeros)) - 1 + (try bits(leadingZeros, field))
    }

    /// `ue(v)` checked against an inclusive maximum.
    mutating func ue(_ field: StaticString, max: UInt64) throws(BitstreamError) -> UInt64 {
        let value = try ue(field)
        guard value <= max else { throw .outOfRange(field, value) }
        return value
    }

    /// `se(v)`: signed Exp-Golomb (0, 1, −1, 2, −2, …).
    mutating func se(_ field: StaticString) throws(BitstreamError) -> Int64 {
        let code = try ue(field)
        let magnitude = Int64((code + 1) / 2)
        return code & 1 == 1 ? magnitude : -magnitude
    }
}
