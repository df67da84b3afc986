/// An MSB-first bit accumulator, the encoding twin of ``BitReader``.
///
/// Data fields go through ``field(_:_:bits:)``, which rejects values that do not fit (so a model
/// value is never silently truncated); reserved bits go through ``reserved(_:bits:)``, which masks,
/// because a reserved field's width can depend on a flag written just before it.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var bitCount = 0

    var isByteAligned: Bool { bitCount & 7 == 0 }

    /// Appends the low `count` bits of `value`, most significant first, without range checks.
    mutating func write(_ value: UInt64, bits count: Int) {
        precondition(count >= 0 && count <= 64, "programmer error: bit count out of range")
        var remaining = count
        while remaining > 0 {
            if bitCount & 7 == 0 { bytes.append(0) }
            let free = 8 - (bitCount & 7)
            let take = min(free, remaining)
            let chunk = (value >> UInt64(remaining - take)) & ((1 << UInt64(take)) - 1)
            bytes[bytes.count - 1] |= UInt8(truncatingIfNeeded: chunk << UInt64(free - take))
            remaining -= take
            bitCount += take
        }
    }

    /// Appends a data field, throwing if `value` needs more than `count` bits.
    mutating func field(_ name: StaticString, _ value: UInt64, bits count: Int) throws(SCTE35Error) {
        if count < 64, value >> UInt64(count) != 0 {
            throw .valueOutOfRange(field: "\(name)", value: value, bitWidth: count)
        }
        write(value, bits: count)
    }

    mutating func field(_ name: StaticString, _ value: some BinaryInteger, bits count: Int) throws(SCTE35Error) {
        try field(name, UInt64(truncatingIfNeeded: value), bits: count)
    }

    mutating func flag(_ value: Bool) {
        write(value ? 1 : 0, bits: 1)
    }

    /// Appends reserved bits: the low `count` bits of `value`.
    mutating func reserved(_ value: UInt8, bits count: Int) {
        write(UInt64(value), bits: count)
    }

    mutating func append(_ data: [UInt8]) {
        if isByteAligned {
            bytes.append(contentsOf: data)
            bitCount += data.count * 8
        } else {
            for byte in data { write(UInt64(byte), bits: 8) }
        }
    }
}
