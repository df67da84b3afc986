/// An absolute date as written in `EXT-X-PROGRAM-DATE-TIME` and `EXT-X-DATERANGE` (ISO 8601 /
/// RFC 3339), with millisecond precision and the writer's time zone kept.
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
    public var millisecondsSinceEpoch: Int64
    /// The zone used when writing the date; it does not change the instant.
    public var zone: Zone

    public init(millisecondsSinceEpoch: Int64, zone: Zone = .utc) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
        self.zone = zone
    }

    /// Two dates are ordered by instant only.
    public static func < (lhs: ProgramDateTime, rhs: ProgramDateTime) -> Bool {
        lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch
    }

    /// The date `duration` later (rounded to the millisecond, half up), in the same zone. Saturates
    /// instead of trapping: a hostile playlist can extrapolate a date past the 64-bit range.
    public func adding(_ duration: HLSDuration) -> ProgramDateTime {
        let us = duration.microseconds
        let ms = us >= 0 ? (us + 500) / 1000 : -((-us + 500) / 1000)
        let (sum, overflow) = millisecondsSinceEpoch.addingReportingOverflow(ms)
        return ProgramDateTime(millisecondsSinceEpoch: overflow ? (ms < 0 ? .min : .max) : sum, zone: zone)
    }

    /// The signed duration from `other` to `self`.
    public func duration(since other: ProgramDateTime) -> HLSDuration {
        .milliseconds(millisecondsSinceEpoch - other.millisecondsSinceEpoch)
    }

    // MARK: Parsing

    /// Parses `YYYY-MM-DDThh:mm:ss[.fff…][Z|±hh:mm|±hhmm]`. A lower-case `t`/`z` and a space separator
    /// are not accepted: RFC 3339 output from encoders is upper case.
    public init?(iso8601 text: some StringProtocol) {
        var bytes: [UInt8] = []
        bytes.append(contentsOf: text.utf8)
        guard let value = Self.parse(bytes[...]) else { return nil }
        self = value
    }

    static func parse(_ b: ArraySlice<UInt8>) -> ProgramDateTime? {
        var i = b.startIndex
        func digits(_ count: Int) -> Int? {
            guard b.endIndex - i >= count else { return nil }
            var value = 0
            for _ in 0..<count {
                let c = b[i]
                guard c >= 48 && c <= 57 else { return nil }
                value = value * 10 + Int(c - 48)
                i += 1
            }
            return value
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.endIndex, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2), expect(UInt8(ascii: "-")),
            let day = digits(2), expect(UInt8(ascii: "T")), let hour = digits(2), expect(UInt8(ascii: ":")),
            let minute = digits(2), expect(UInt8(ascii: ":")), let second = digits(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= Self.daysInMonth(year: year, month: month),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var millis = 0
        if expect(UInt8(ascii: ".")) {
            var count = 0
            var roundUp = false
            while i < b.endIndex, b[i] >= 48, b[i] <= 57 {
                if count < 3 {
                    millis = millis * 10 + Int(b[i] - 48)
                } else if count == 3 {
                    roundUp = b[i] >= 53
                }
                count += 1
                i += 1
            }
            guard count > 0 else { return nil }
            var scale = count
            while scale < 3 {
                millis *= 10
                scale += 1
            }
            if roundUp { millis += 1 }
        }
        var zone = Zone.unspecified
        if i < b.endIndex {
            if b[i] == UInt8(ascii: "Z") {
                zone = .utc
                i += 1
            } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
                let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
                i += 1
                guard let hh = digits(2) else { return nil }
                _ = expect(UInt8(ascii: ":"))
                guard let mm = digits(2), hh <= 23, mm <= 59 else { return nil }
                zone = .offset(minutes: sign * (hh * 60 + mm))
            } else {
                return nil
            }
        }
        guard i == b.endIndex else { return nil }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        var seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        if case .offset(let minutes) = zone { seconds -= Int64(minutes * 60) }
        return ProgramDateTime(millisecondsSinceEpoch: seconds * 1000 + Int64(millis), zone: zone)
    }

    // MARK: Formatting

    /// Canonical text: `2026-11-21T17:36:00.000Z` (always milliseconds; the stored zone).
    public var description: String {
        var bytes: [UInt8] = []
        write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    public func write(into bytes: inout [UInt8]) {
        var offsetMinutes = 0
        if case .offset(let minutes) = zone { offsetMinutes = minutes }
        let local = millisecondsSinceEpoch &+ Int64(offsetMinutes) * 60_000  // wraps only for dates beyond any calendar
        var days = local / 86_400_000
        var msOfDay = local % 86_400_000
        if msOfDay < 0 {
            msOfDay += 86_400_000
            days -= 1
        }
        let (year, month, day) = Self.civilFromDays(Int(days))
        let pad = DecimalWriter.writePadded
        if year >= 0 && year <= 9999 {
            pad(UInt64(year), 4, &bytes)
        } else {
            DecimalWriter.write(Int64(year), into: &bytes)
        }
        bytes.append(UInt8(ascii: "-"))
        pad(UInt64(month), 2, &bytes)
        bytes.append(UInt8(ascii: "-"))
        pad(UInt64(day), 2, &bytes)
        bytes.append(UInt8(ascii: "T"))
        pad(UInt64(msOfDay / 3_600_000), 2, &bytes)
        bytes.append(UInt8(ascii: ":"))
        pad(UInt64(msOfDay / 60_000 % 60), 2, &bytes)
        bytes.append(UInt8(ascii: ":"))
        pad(UInt64(msOfDay / 1000 % 60), 2, &bytes)
        bytes.append(UInt8(ascii: "."))
        pad(UInt64(msOfDay % 1000), 3, &bytes)
        switch zone {
        case .utc:
            bytes.append(UInt8(ascii: "Z"))
        case .unspecified:
            break
        case .offset(let minutes):
            bytes.append(minutes < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            pad(UInt64(abs(minutes) / 60), 2, &bytes)
            bytes.append(UInt8(ascii: ":"))
            pad(UInt64(abs(minutes) % 60), 2, &bytes)
        }
    }

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
