/// A small, fast, seedable generator (SplitMix64) so that property tests are reproducible: every
/// failing test prints its seed, and the same seed replays the same case.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { self.state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `range`.
    public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// `true` with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }

    /// `next() % bound`: cheap and exactly reproducible across platforms (for byte-mutation loops).
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// A random byte.
    public mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }

    /// A random element.
    public mutating func pick<T>(_ elements: [T]) -> T { elements[int(0...(elements.count - 1))] }
}
