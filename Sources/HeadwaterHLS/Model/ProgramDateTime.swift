/// An absolute date as written in `EXT-X-PROGRAM-DATE-TIME` and `EXT-X-DATERANGE` (ISO 8601 /
/// RFC 3339), with millisecond precision and the writer's time zone kept; a date written with
/// microseconds keeps them, so that it is written back as it came (`fmt` never changes meaning).
///
/// Held as milliseconds since the Unix epoch so that date arithmetic (PDT + Σ EXTINF, DATERANGE
/// START-DATE from a splice PTS) is exact integer arithmetic, without Foundation.
public struct ProgramDateTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// How the zone was (or is to be) written.
    public enum Zone: Sendable, Hashable {
        /// `Z`
        case utc
        /// `+HH:MM` / `-HH:MM`, in minutes east of UTC.
        case offset(minutes: Int)
        /// No designator at all (allowed by ISO 8601, discouraged by HLS: B7 says SHOULD include a zone).
        case unspecified
    }

    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var millisecondsSinceEpoch: Int64 {
        get { milliseconds }
        set {
            milliseconds = newValue
            submillisecond = Self.noSubmillisecond  // a new instant: the old microseconds are not its own
        }
    }
    private var milliseconds: Int64
    /// The zone used when writing the date; it does not change the instant.
    public var zone: Zone
    /// Microseconds to add to ``millisecondsSinceEpoch`` (−500…499, as it is rounded half up) for a
    /// date written with more than millisecond precision, or ``noSubmillisecond``. Two bytes fit in
    /// the padding after the zone, so a date stays 24 bytes: a playlist holds one per segment.
    private var submillisecond: Int16 = Self.noSubmillisecond
    private static let noSubmillisecond = Int16.min

    public init(millisecondsSinceEpoch: Int64, zone: Zone = .utc) {
        self.milliseconds = millisecondsSinceEpoch
        self.zone = zone
    }

    /// A date with microsecond precision, written with six decimals.
    public init(microsecondsSinceEpoch: Int64, zone: Zone = .utc) {
        let milliseconds = Self.roundedToMilliseconds(microsecondsSinceEpoch)
        self.milliseconds = milliseconds
        self.submillisecond = Int16(truncatingIfNeeded: microsecondsSinceEpoch &- milliseconds &* 1000)
        self.zone = zone
    }

    /// The instant to the microsecond, when the date was written (or computed) with more than
    /// millisecond precision; `nil` otherwise (setting ``millisecondsSinceEpoch`` drops it).
    public var microsecondsSinceEpoch: Int64? { precise }

    private var precise: Int64? {
        guard submillisecond != Self.noSubmillisecond else { return nil }
        return milliseconds &* 1000 &+ Int64(submillisecond)
    }

    /// The instant in microseconds.
    private var instant: Int64 { precise ?? millisecondsSinceEpoch.multipliedReportingOverflow(by: 1000).partialValue }

    /// Microseconds rounded half up to milliseconds (floor division, so dates before 1970 round alike).
    private static func roundedToMilliseconds(_ us: Int64) -> Int64 {
        let shifted = us.addingReportingOverflow(500).partialValue
        let quotient = shifted / 1000
        return shifted % 1000 < 0 ? quotient - 1 : quotient
    }

    /// Two dates are ordered by instant only.
    public static func < (lhs: ProgramDateTime, rhs: ProgramDateTime) -> Bool {
        lhs.instant < rhs.instant
    }

    /// The same instant written in the same zone (`.123Z` equals `.123000Z`).
    public static func == (lhs: ProgramDateTime, rhs: ProgramDateTime) -> Bool {
        lhs.instant == rhs.instant && lhs.zone == rhs.zone
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(instant)
        hasher.combine(zone)
    }

    /// The date `duration` later (rounded to the millisecond, half up), in the same zone. Saturates
    /// instead of trapping: a hostile playlist can extrapolate a date past the 64-bit range.
    public func adding(_ duration: HLSDuration) -> ProgramDateTime {
        let us = duration.microseconds
        if let precise {
            let (sum, overflow) = precise.addingReportingOverflow(us)
            if !overflow { return ProgramDateTime(microsecondsSinceEpoch: sum, zone: zone) }
        }
        let ms = us >= 0 ? (us / 2 + 250) / 500 : -((-(us / 2) + 250) / 500)  // rounded half up, no overflow
        let (sum, overflow) = millisecondsSinceEpoch.addingReportingOverflow(ms)
        return ProgramDateTime(millisecondsSinceEpoch: overflow ? (ms > 0 ? .max : .min) : sum, zone: zone)
    }

    /// The signed duration from `other` to `self`.
    public func duration(since other: ProgramDateTime) -> HLSDuration {
        if precise != nil || other.precise != nil { return HLSDuration(microseconds: instant &- other.instant) }
        return .milliseconds(millisecondsSinceEpoch - other.millisecondsSinceEpoch)
    }

    // MARK: Parsing

    /// Parses `YYYY-MM-DDThh:mm:ss[.fff…][Z|±hh:mm|±hhmm]`. A lower-case `t`/`z` and a space separator
    /// are not accepted: RFC 3339 output from encoders is upper case.
    public init?(iso8601 text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard let value = bytes.withUnsafeBufferPointer({ Self.parse($0) }) else { return nil }
        self = value
    }

    static func parse(_ b: UnsafeBufferPointer<UInt8>) -> ProgramDateTime? {
        // Fixed layout up to the seconds: YYYY-MM-DDThh:mm:ss
        guard b.count >= 19, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":")
        else { return nil }
        @inline(__always) func digits(_ at: Int, _ count: Int) -> Int? {
            var value = 0
            for index in at..<(at + count) {
                let c = b[index] &- 48
                guard c <= 9 else { return nil }
                value = value * 10 + Int(c)
            }
            return value
        }
        guard let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2), let hour = digits(11, 2),
            let minute = digits(14, 2), let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= Self.daysInMonth(year: year, month: month),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var i = 19
        var micros = 0
        var fractionDigits = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var roundUp = false
            while i < b.count, b[i] &- 48 <= 9 {
                if fractionDigits < 6 {
                    micros = micros * 10 + Int(b[i] &- 48)
                } else if fractionDigits == 6 {
                    roundUp = b[i] >= 53  // rounded half up to the microsecond
                }
                fractionDigits += 1
                i += 1
            }
            guard fractionDigits > 0 else { return nil }
            var scale = fractionDigits
            while scale < 6 {
                micros *= 10
                scale += 1
            }
            if roundUp { micros += 1 }
        }
        var zone = Zone.unspecified
        if i < b.count {
            if b[i] == UInt8(ascii: "Z") {
                zone = .utc
                i += 1
            } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
                let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
                i += 1
                guard i + 2 <= b.count, let hh = digits(i, 2) else { return nil }
                i += 2
                if i < b.count, b[i] == UInt8(ascii: ":") { i += 1 }
                guard i + 2 <= b.count, let mm = digits(i, 2), hh <= 23, mm <= 59 else { return nil }
                i += 2
                zone = .offset(minutes: sign * (hh * 60 + mm))
            } else {
                return nil
            }
        }
        guard i == b.count else { return nil }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        let localMicroseconds = (Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second)) * 1_000_000 + Int64(micros)
        // A leap second or rounding may carry into the next day; the result must still be writable
        // with a four-digit year.
        guard roundedToMilliseconds(localMicroseconds) < Self.year10000 else { return nil }
        var offset: Int64 = 0
        if case .offset(let minutes) = zone { offset = Int64(minutes) * 60_000_000 }
        // Up to three decimals are milliseconds exactly; more keep their microseconds.
        if fractionDigits > 3 { return ProgramDateTime(microsecondsSinceEpoch: localMicroseconds - offset, zone: zone) }
        return ProgramDateTime(millisecondsSinceEpoch: (localMicroseconds - offset) / 1000, zone: zone)
    }

    // MARK: Formatting

    /// Canonical text: `2026-11-21T17:36:00.000Z` (milliseconds, or microseconds for a date that has
    /// them, `…:00.000250Z`; the stored zone).
    public var description: String {
        var bytes: [UInt8] = []
        write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    public func write(into bytes: inout [UInt8]) {
        var writer = ByteWriter(capacity: 32)
        write(to: &writer)
        writer.finish(appendingTo: &bytes)
    }

    func write(to writer: inout ByteWriter) {
        var offsetMinutes = 0
        if case .offset(let minutes) = zone { offsetMinutes = minutes }
        let local = millisecondsSinceEpoch &+ Int64(offsetMinutes) * 60_000  // wraps only for dates beyond any calendar
        var days = local / 86_400_000
        var msOfDay = local % 86_400_000
        if msOfDay < 0 {
            msOfDay += 86_400_000
            days -= 1
        }
        // The microseconds within the day, when written with them: the rounded milliseconds above
        // may be one more than the truncated ones (`.000600` rounds to `.001`), so the date's fields
        // come from the microseconds themselves.
        var usOfDay: Int64?
        if let precise {
            let localUS = precise &+ Int64(offsetMinutes) * 60_000_000
            var d = localUS / 86_400_000_000
            var us = localUS % 86_400_000_000
            if us < 0 {
                us += 86_400_000_000
                d -= 1
            }
            days = d
            msOfDay = us / 1000
            usOfDay = us
        }
        let (year, month, day) = Self.civilFromDays(Int(days))
        if year >= 0 && year <= 9999 {
            writer.appendPadded(UInt64(year), width: 4)
        } else {
            if year < 0 { writer.append(UInt8(ascii: "-")) }
            writer.appendDecimal(UInt64(year.magnitude))
        }
        writer.append(UInt8(ascii: "-"))
        writer.appendPadded(UInt64(month), width: 2)
        writer.append(UInt8(ascii: "-"))
        writer.appendPadded(UInt64(day), width: 2)
        writer.append(UInt8(ascii: "T"))
        let ms = UInt64(msOfDay)
        writer.appendPadded(ms / 3_600_000, width: 2)
        writer.append(UInt8(ascii: ":"))
        writer.appendPadded(ms / 60_000 % 60, width: 2)
        writer.append(UInt8(ascii: ":"))
        writer.appendPadded(ms / 1000 % 60, width: 2)
        writer.append(UInt8(ascii: "."))
        if let usOfDay {
            writer.appendPadded(UInt64(usOfDay % 1_000_000), width: 6)
        } else {
            writer.appendPadded(ms % 1000, width: 3)
        }
        switch zone {
        case .utc:
            writer.append(UInt8(ascii: "Z"))
        case .unspecified:
            break
        case .offset(let minutes):
            writer.append(minutes < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            writer.appendPadded(UInt64(minutes.magnitude / 60), width: 2)
            writer.append(UInt8(ascii: ":"))
            writer.appendPadded(UInt64(minutes.magnitude % 60), width: 2)
        }
    }

    /// 10000-01-01T00:00:00 in local milliseconds: the first instant that needs a five-digit year.
    static let year10000 = Int64(daysFromCivil(year: 10000, month: 1, day: 1)) * 86_400_000

    // MARK: Calendar (proleptic Gregorian; H. Hinnant's days_from_civil / civil_from_days)

    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ z: Int) -> (year: Int, month: Int, day: Int) {
        let z = z + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
