/// 90 kHz PTS arithmetic on the 33-bit circle (ISO/IEC 13818-1 §2.4.3.7) and exact conversions to
/// microseconds.
enum Timestamps {
    static let modulus: UInt64 = 1 << 33
    static let mask: UInt64 = modulus - 1
    static let ticksPerSecond: Int64 = 90_000

    /// The signed distance from `origin` to `pts`, assuming they are less than 2³² ticks (13.25 h)
    /// apart, so that a wrap through 0 reads as a small positive step.
    static func distance(from origin: UInt64, to pts: UInt64) -> Int64 {
        let delta = (pts &- origin) & mask
        return delta >= 1 << 32 ? Int64(delta) - Int64(modulus) : Int64(delta)
    }

    /// `origin + delta` on the 33-bit circle.
    static func adding(_ delta: Int64, to origin: UInt64) -> UInt64 {
        UInt64(bitPattern: Int64(bitPattern: origin & mask) &+ delta) & mask
    }

    /// `ticks / 90 000 + numerator / denominator` seconds in microseconds, rounded half up, clamped to
    /// `0...Int64.max`. Computed in 128 bits so that no 33-bit tick count or 32-bit rate overflows.
    static func microseconds(ticks: Int64, plusSeconds numerator: Int64 = 0, over denominator: Int64 = 1) -> Int64 {
        let d = Int128(max(denominator, 1))
        // (ticks × d + numerator × 90 000) / (90 000 × d) seconds = (…) × 100 / (9 × d) µs
        let scaled = (Int128(ticks) * d + Int128(numerator) * Int128(ticksPerSecond)) * 100
        let divisor = 9 * d
        guard scaled > 0 else { return 0 }
        return Int64(clamping: (scaled * 2 + divisor) / (divisor * 2))
    }
}

/// The decoded header of one PES packet (ISO/IEC 13818-1 §2.4.3.6).
struct PESHeader {
    var pts: UInt64?
    /// Where the elementary stream bytes are, in the PES packet's own buffer.
    var payload: Range<Int>

    /// stream_ids whose PES packets have no optional header (program_stream_map, padding, …).
    private static let headerlessStreamIDs: Set<UInt8> = [0xBC, 0xBE, 0xBF, 0xF0, 0xF1, 0xF2, 0xF8, 0xFF]

    /// `nil` when the bytes do not start with a PES start code or the header overruns them.
    init?(_ b: [UInt8]) {
        guard b.count >= 6, b[0] == 0, b[1] == 0, b[2] == 1 else { return nil }
        let declared = Int(b[4]) << 8 | Int(b[5])
        let end = declared == 0 ? b.count : min(b.count, 6 + declared)
        if Self.headerlessStreamIDs.contains(b[3]) {
            pts = nil
            payload = 6..<end
            return
        }
        guard b.count >= 9, b[6] & 0xC0 == 0x80 else { return nil }
        let headerLength = Int(b[8])
        guard 9 + headerLength <= end else { return nil }
        let flags = b[7] >> 6  // PTS_DTS_flags: 2 = PTS, 3 = PTS and DTS
        if flags >= 2, headerLength >= 5 {
            let pts = UInt64(b[9] >> 1) & 0x07
            let high = UInt64(b[10]) << 7 | UInt64(b[11] >> 1)
            let low = UInt64(b[12]) << 7 | UInt64(b[13] >> 1)
            self.pts = pts << 30 | high << 15 | low
        } else {
            pts = nil
        }
        payload = (9 + headerLength)..<end
    }
}
