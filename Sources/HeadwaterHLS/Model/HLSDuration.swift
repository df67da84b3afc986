/// A duration in HLS playlists, held in fixed point (microseconds).
///
/// Playlists carry durations as decimal text (`#EXTINF:10.010,`, `DURATION=59.993`). Summing them as
/// `Double` drifts (a day of 2.002 s segments is off by milliseconds), and a live origin sums them
/// forever, so Headwater never uses floating point for media time. Microseconds are exact for every
/// duration an encoder writes with up to six decimals.
public struct HLSDuration: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The duration in microseconds. May be negative only for signed attributes (`TIME-OFFSET`).
    public var microseconds: Int64

    @inlinable
    public init(microseconds: Int64) { self.microseconds = microseconds }

    public static let zero = HLSDuration(microseconds: 0)

    @inlinable
    public static func seconds(_ seconds: Int64) -> HLSDuration { HLSDuration(microseconds: seconds * 1_000_000) }

    @inlinable
    public static func milliseconds(_ ms: Int64) -> HLSDuration { HLSDuration(microseconds: ms * 1_000) }

    /// Whole seconds, rounded half up: the value RFC 8216bis §4.4.3.1 compares against
    /// `EXT-X-TARGETDURATION` ("rounded to the nearest integer").
    @inlinable
    public var roundedSeconds: Int64 {
        microseconds >= 0 ? (microseconds + 500_000) / 1_000_000 : -((-microseconds + 500_000) / 1_000_000)
    }

    /// Seconds as a `Double`, for display and statistics only — never for arithmetic on media time.
    public var seconds: Double { Double(microseconds) / 1_000_000 }

    /// Parses decimal text (`10`, `10.010`, `-3.5` when `allowNegative`). Digits past the sixth decimal
    /// are rounded half up. Returns `nil` for anything that is not a plain decimal number.
    public init?(decimal text: some StringProtocol, allowNegative: Bool = false) {
        guard let value = Self.parse(utf8: text.utf8, allowNegative: allowNegative) else { return nil }
        self.microseconds = value
    }

    static func parse(utf8: some Collection<UInt8>, allowNegative: Bool) -> Int64? {
        if let value = utf8.withContiguousStorageIfAvailable({ parse(buffer: $0, allowNegative: allowNegative) }) {
            return value
        }
        return Array(utf8).withUnsafeBufferPointer { parse(buffer: $0, allowNegative: allowNegative) }
    }

    static func parse(buffer utf8: UnsafeBufferPointer<UInt8>, allowNegative: Bool) -> Int64? {
        var iterator = utf8.makeIterator()
        var negative = false
        var integer: Int64 = 0
        var integerDigits = 0
        var fraction: Int64 = 0
        var fractionDigits = 0
        var roundUp = false
        var seenDot = false
        var first = true
        while let byte = iterator.next() {
            defer { first = false }
            switch byte {
            case UInt8(ascii: "-") where first && allowNegative:
                negative = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let digit = Int64(byte &- UInt8(ascii: "0"))
                if seenDot {
                    if fractionDigits < 6 {
                        fraction = fraction * 10 + digit
                    } else if fractionDigits == 6 {
                        roundUp = digit >= 5
                    }
                    fractionDigits += 1
                } else {
                    integerDigits += 1
                    guard integerDigits <= 13 else { return nil }
                    integer = integer * 10 + digit
                }
            case UInt8(ascii: ".") where !seenDot:
                seenDot = true
            default:
                return nil
            }
        }
        guard integerDigits > 0 || fractionDigits > 0 else { return nil }
        if seenDot && fractionDigits == 0 && integerDigits == 0 { return nil }
        var scaled = fraction
        var digits = min(fractionDigits, 6)
        while digits < 6 {
            scaled *= 10
            digits += 1
        }
        var value = integer * 1_000_000 + scaled + (roundUp ? 1 : 0)
        // At most 999,999,999,999.999999 s (31,000 years): whatever parses can be written and read back.
        guard value < 1_000_000_000_000_000_000 else { return nil }
        if negative { value = -value }
        return value
    }

    /// The canonical text: at least three decimals, up to six, trailing zeros past the third trimmed
    /// (`2.000`, `10.010`, `6.006006`).
    public var description: String {
        var bytes: [UInt8] = []
        write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the canonical text to `bytes` without allocating a `String`.
    public func write(into bytes: inout [UInt8]) {
        var writer = ByteWriter(capacity: 24)
        write(to: &writer)
        writer.finish(appendingTo: &bytes)
    }

    @inlinable
    func write(to writer: inout ByteWriter) {
        let magnitude = microseconds.magnitude
        if microseconds < 0 { writer.append(UInt8(ascii: "-")) }
        var fraction = magnitude % 1_000_000
        writer.appendDecimal(magnitude / 1_000_000)
        writer.append(UInt8(ascii: "."))
        var digits = 6
        while digits > 3 && fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        writer.appendPadded(fraction, width: digits)
    }

    /// Appends the duration as a whole number of seconds, rounded half up (playlists below version 3).
    public func writeInteger(into bytes: inout [UInt8]) {
        var writer = ByteWriter(capacity: 24)
        writeInteger(to: &writer)
        writer.finish(appendingTo: &bytes)
    }

    @inlinable
    func writeInteger(to writer: inout ByteWriter) {
        writer.appendDecimal(UInt64(max(0, roundedSeconds)))
    }

    @inlinable
    public static func < (lhs: HLSDuration, rhs: HLSDuration) -> Bool { lhs.microseconds < rhs.microseconds }
    // Arithmetic saturates instead of trapping: durations come from untrusted playlists, and no real
    // media time is anywhere near ±292,000 years.
    @inlinable
    public static func + (lhs: HLSDuration, rhs: HLSDuration) -> HLSDuration {
        let (sum, overflow) = lhs.microseconds.addingReportingOverflow(rhs.microseconds)
        return HLSDuration(microseconds: overflow ? (rhs.microseconds > 0 ? .max : .min) : sum)
    }
    @inlinable
    public static func - (lhs: HLSDuration, rhs: HLSDuration) -> HLSDuration {
        let (difference, overflow) = lhs.microseconds.subtractingReportingOverflow(rhs.microseconds)
        return HLSDuration(microseconds: overflow ? (rhs.microseconds < 0 ? .max : .min) : difference)
    }
    @inlinable
    public static func += (lhs: inout HLSDuration, rhs: HLSDuration) { lhs = lhs + rhs }
    @inlinable
    public static func -= (lhs: inout HLSDuration, rhs: HLSDuration) { lhs = lhs - rhs }
}

/// Integer-to-ASCII without `String` allocation: the serializer's hot path.
@usableFromInline
enum DecimalWriter {
    /// "00" … "99", so that each division produces two digits.
    @usableFromInline
    static let pairs: [UInt8] = {
        var table: [UInt8] = []
        for i in 0..<100 {
            table.append(UInt8(ascii: "0") + UInt8(i / 10))
            table.append(UInt8(ascii: "0") + UInt8(i % 10))
        }
        return table
    }()

    /// Writes `value` at `destination` (which must have room for 20 bytes); returns the length.
    @inlinable
    static func write(_ value: UInt64, to destination: UnsafeMutablePointer<UInt8>) -> Int {
        if value < 10 {
            destination[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value)
            return 1
        }
        var digits = 0
        var probe = value
        while probe > 0 {
            digits += 1
            probe /= 10
        }
        var rest = value
        var index = digits
        pairs.withUnsafeBufferPointer { table in
            while rest >= 100 {
                let pair = Int(rest % 100) * 2
                rest /= 100
                index -= 2
                destination[index] = table[pair]
                destination[index + 1] = table[pair + 1]
            }
            if rest >= 10 {
                let pair = Int(rest) * 2
                destination[0] = table[pair]
                destination[1] = table[pair + 1]
            } else {
                destination[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest)
            }
        }
        return digits
    }

}
