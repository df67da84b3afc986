/// Conversions for the 90 kHz clock that every SCTE-35 time (`pts_time`, `pts_adjustment`,
/// `break_duration`, `segmentation_duration`) is expressed in.
///
/// HLS needs seconds (`PLANNED-DURATION`, `START-DATE` offsets); the origin keeps fixed-point
/// microseconds to avoid float drift, so both are offered. Conversions round to the nearest unit.
public enum Ticks90kHz {
    /// Ticks per second.
    public static let perSecond: UInt64 = 90_000
    /// `pts_time` and `pts_adjustment` are 33-bit and wrap modulo 2^33.
    public static let ptsModulus: UInt64 = 1 << 33

    /// Microseconds, rounded to nearest (exact for ≥ 40-bit tick values).
    public static func microseconds(_ ticks: UInt64) -> Int64 {
        // ticks × 100 / 9; the quotient/remainder split cannot overflow for any UInt64.
        let quotient = ticks / 9
        let remainder = ticks % 9
        let micros = quotient.multipliedReportingOverflow(by: 100)
        guard !micros.overflow else { return Int64.max }
        let value = micros.partialValue &+ (remainder * 100 + 4) / 9
        return value > UInt64(Int64.max) ? Int64.max : Int64(value)
    }

    /// Seconds as a `Double`, rounded to the microsecond (so it prints as e.g. `60.293567`).
    public static func seconds(_ ticks: UInt64) -> Double {
        Double(microseconds(ticks)) / 1_000_000
    }

    /// Ticks for a non-negative number of microseconds, rounded to nearest (negative → 0).
    public static func ticks(microseconds: Int64) -> UInt64 {
        guard microseconds > 0 else { return 0 }
        let micros = UInt64(microseconds)
        // micros × 9 / 100 without overflow.
        return (micros / 100) &* 9 &+ ((micros % 100) * 9 + 50) / 100
    }

    /// `(pts + adjustment) mod 2^33`, as SCTE 35 §9.6 prescribes for every `pts_time`.
    public static func adjusted(_ pts: UInt64, by adjustment: UInt64) -> UInt64 {
        (pts % ptsModulus &+ adjustment % ptsModulus) % ptsModulus
    }
}
