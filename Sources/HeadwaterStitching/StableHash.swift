/// A 64-bit hash that is the same on every machine, every process and every release: the pod a
/// viewer gets for a break is chosen from it, so two Headwater nodes serving one session must
/// compute the same value (Swift's `Hasher` is seeded per process and cannot be used).
///
/// Each field is absorbed with its length first, so `("ab", "c")` and `("a", "bc")` differ. The
/// mixing is SplitMix64's finalizer applied per 8-byte word; it is not cryptographic and does not
/// need to be — session ids are already unguessable (signed tokens).
///
/// Changing this function changes every viewer's ad decisions: treat it as a wire format.
struct StableHash {
    private(set) var state: UInt64 = 0x6A09_E667_F3BC_C908  // √2's fraction (SHA-512 IV), any constant works

    init() {}

    mutating func combine(_ value: UInt64) {
        state = Self.mix((state ^ value) &+ 0x9E37_79B9_7F4A_7C15)
    }

    mutating func combine(_ text: String) {
        combine(UInt64(text.utf8.count))
        var word: UInt64 = 0
        var filled: UInt64 = 0
        for byte in text.utf8 {
            word |= UInt64(byte) << (8 * filled)
            filled += 1
            if filled == 8 {
                combine(word)
                word = 0
                filled = 0
            }
        }
        if filled > 0 { combine(word) }
    }

    var value: UInt64 { Self.mix(state) }

    /// SplitMix64's output function: a bijection with good avalanche.
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
