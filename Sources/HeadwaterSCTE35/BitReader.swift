/// A bounds-checked, MSB-first bit cursor over a byte array.
///
/// Every read checks the remaining length first and throws ``SCTE35Error/unexpectedEndOfData(field:bitOffset:)``
/// instead of indexing out of range, so no input can make the decoder trap. Positions are absolute bit
/// offsets into the original section, which keeps error messages meaningful inside nested structures
/// (a sub-reader for a descriptor shares the storage and only narrows the end).
struct BitReader {
    private let storage: [UInt8]
    /// Absolute offset of the next bit to read.
    private(set) var bitOffset: Int
    /// Absolute offset one past the last readable bit.
    private let endBit: Int

    init(_ bytes: [UInt8]) {
        storage = bytes
        bitOffset = 0
        endBit = bytes.count &* 8
    }

    private init(storage: [UInt8], start: Int, end: Int) {
        self.storage = storage
        bitOffset = start
        endBit = end
    }

    var remainingBits: Int { endBit - bitOffset }
    /// Whole bytes left (rounded down).
    var remainingBytes: Int { remainingBits / 8 }
    var isAtEnd: Bool { bitOffset >= endBit }

    /// Reads `count` (0...64) bits as an unsigned big-endian number.
    mutating func bits(_ count: Int, _ field: StaticString) throws(SCTE35Error) -> UInt64 {
        precondition(count >= 0 && count <= 64, "programmer error: bit count out of range")
        guard count <= remainingBits else {
            throw .unexpectedEndOfData(field: "\(field)", bitOffset: bitOffset)
        }
        var value: UInt64 = 0
        var remaining = count
        while remaining > 0 {
            let available = 8 - (bitOffset & 7)
            let take = min(available, remaining)
            let byte = UInt64(storage[bitOffset >> 3])
            let chunk = (byte >> UInt64(available - take)) & ((1 << UInt64(take)) - 1)
            value = (value << UInt64(take)) | chunk
            remaining -= take
            bitOffset += take
        }
        return value
    }

    mutating func flag(_ field: StaticString) throws(SCTE35Error) -> Bool {
        try bits(1, field) == 1
    }

    mutating func uint8(_ count: Int = 8, _ field: StaticString) throws(SCTE35Error) -> UInt8 {
        UInt8(truncatingIfNeeded: try bits(count, field))
    }

    mutating func uint16(_ count: Int = 16, _ field: StaticString) throws(SCTE35Error) -> UInt16 {
        UInt16(truncatingIfNeeded: try bits(count, field))
    }

    mutating func uint32(_ count: Int = 32, _ field: StaticString) throws(SCTE35Error) -> UInt32 {
        UInt32(truncatingIfNeeded: try bits(count, field))
    }

    /// Reads `count` bytes (need not be byte-aligned).
    mutating func bytes(_ count: Int, _ field: StaticString) throws(SCTE35Error) -> [UInt8] {
        guard count >= 0, count <= remainingBytes else {
            throw .unexpectedEndOfData(field: "\(field)", bitOffset: bitOffset)
        }
        if bitOffset & 7 == 0 {
            let start = bitOffset >> 3
            bitOffset += count * 8
            return Array(storage[start..<(start + count)])
        }
        var result: [UInt8] = []
        result.reserveCapacity(count)
        for _ in 0..<count {
            result.append(try uint8(8, field))
        }
        return result
    }

    /// Reads all whole bytes left.
    mutating func remainingByteArray(_ field: StaticString) throws(SCTE35Error) -> [UInt8] {
        try bytes(remainingBytes, field)
    }

    /// Consumes `count` bytes and returns a reader limited to them, so a nested structure
    /// (command, descriptor loop, descriptor) cannot read past its declared length.
    mutating func subReader(byteCount count: Int, _ field: StaticString) throws(SCTE35Error) -> BitReader {
        guard count >= 0, count <= remainingBytes else {
            throw .unexpectedEndOfData(field: "\(field)", bitOffset: bitOffset)
        }
        let start = bitOffset
        bitOffset += count * 8
        return BitReader(storage: storage, start: start, end: bitOffset)
    }
}
