/// FNV-1a, 64 bits: a fast non-cryptographic hash, used for strong ETags of immutable segments
/// (their bytes never change, so a content hash identifies the representation).
public struct FNV1a64: Sendable, Hashable {
    public static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    public static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// The hash of everything fed so far.
    public private(set) var value: UInt64 = FNV1a64.offsetBasis

    public init() {}

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var hash = value
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* Self.prime
        }
        value = hash
    }

    @inlinable
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil {
            for byte in bytes { updateByte(byte) }
        }
    }

    @usableFromInline
    mutating func updateByte(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* Self.prime
    }

    /// The hash as 16 lowercase hex digits, the form used inside segment ETags.
    public var hexDigest: String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The hash of `bytes`.
    @inlinable
    public static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hasher = FNV1a64()
        hasher.update(bytes)
        return hasher.value
    }
}
