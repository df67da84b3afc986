/// `HTTP-date` (RFC 9110 §5.6.7) to and from Unix seconds, without Foundation.
///
/// Formatting always produces the preferred IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`.
/// Parsing accepts IMF-fixdate and, as RFC 9110 requires of recipients, the obsolete RFC 850
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`) forms.
/// HTTP-date is case-sensitive (§5.6.7), so `sun, 06 nov 1994 …` is rejected; a rejected
/// `If-Modified-Since` or `If-Unmodified-Since` is simply ignored by ``ConditionalRequest``.
public enum HTTPDate {
    /// 0000-01-01T00:00:00Z, the earliest instant IMF-fixdate's four-digit year can spell.
    public static let earliestUnixSeconds: Int64 = -62_167_219_200
    /// 9999-12-31T23:59:59Z, the latest instant IMF-fixdate's four-digit year can spell.
    public static let latestUnixSeconds: Int64 = 253_402_300_799

    /// The length of every IMF-fixdate.
    public static let formattedLength = 29

    /// Formats `unixSeconds` as IMF-fixdate. Instants outside ``earliestUnixSeconds``...
    /// ``latestUnixSeconds`` are clamped to them. Reuse the result within a second with
    /// ``HTTPDateCache``.
    public static func format(unixSeconds: Int64) -> String {
        String(unsafeUninitializedCapacity: formattedLength) { buffer in
            write(unixSeconds: unixSeconds, into: buffer)
            return formattedLength
        }
    }

    /// Parses an HTTP-date into Unix seconds, or `nil` when `text` is none of the three forms or
    /// names an impossible date (`31 Feb`, `25:00:00`). Surrounding spaces and tabs are ignored.
    ///
    /// - Parameter now: the current time, used only for RFC 850's two-digit year: RFC 9110 §5.6.7
    ///   says a year that "appears to be more than 50 years in the future" is the most recent past
    ///   year with the same last two digits. Without `now`, `00`–`69` mean 2000–2069 and `70`–`99`
    ///   mean 1970–1999 (the answer RFC 9110 gives for any `now` in 2020–2049).
    /// - Note: a leap second (`:60`, allowed by the grammar) is read as `:59`, so it never moves a
    ///   date into the next minute.
    public static func parse(_ text: String, now: Int64? = nil) -> Int64? {
        var text = text
        return text.withUTF8 { parse(bytes: $0, now: now) }
    }

    // MARK: - Formatting

    private static let dayNames: StaticString = "SunMonTueWedThuFriSat"
    private static let monthNames: StaticString = "JanFebMarAprMayJunJulAugSepOctNovDec"

    /// Writes exactly ``formattedLength`` bytes.
    static func write(unixSeconds: Int64, into buffer: UnsafeMutableBufferPointer<UInt8>) {
        let seconds = min(max(unixSeconds, earliestUnixSeconds), latestUnixSeconds)
        let days = floorDivide(seconds, 86_400)
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let weekday = Int(((days % 7) + 11) % 7)  // 1970-01-01 was a Thursday (4).

        let dayNames = Self.dayNames.utf8Start
        let monthNames = Self.monthNames.utf8Start
        buffer[0] = dayNames[weekday * 3]
        buffer[1] = dayNames[weekday * 3 + 1]
        buffer[2] = dayNames[weekday * 3 + 2]
        buffer[3] = UInt8(ascii: ",")
        buffer[4] = UInt8(ascii: " ")
        writeTwoDigits(day, into: buffer, at: 5)
        buffer[7] = UInt8(ascii: " ")
        buffer[8] = monthNames[(month - 1) * 3]
        buffer[9] = monthNames[(month - 1) * 3 + 1]
        buffer[10] = monthNames[(month - 1) * 3 + 2]
        buffer[11] = UInt8(ascii: " ")
        writeTwoDigits(year / 100, into: buffer, at: 12)
        writeTwoDigits(year % 100, into: buffer, at: 14)
        buffer[16] = UInt8(ascii: " ")
        writeTwoDigits(secondOfDay / 3600, into: buffer, at: 17)
        buffer[19] = UInt8(ascii: ":")
        writeTwoDigits(secondOfDay / 60 % 60, into: buffer, at: 20)
        buffer[22] = UInt8(ascii: ":")
        writeTwoDigits(secondOfDay % 60, into: buffer, at: 23)
        buffer[25] = UInt8(ascii: " ")
        buffer[26] = UInt8(ascii: "G")
        buffer[27] = UInt8(ascii: "M")
        buffer[28] = UInt8(ascii: "T")
    }

    private static func writeTwoDigits(_ value: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, at index: Int) {
        buffer[index] = UInt8(truncatingIfNeeded: value / 10) &+ UInt8(ascii: "0")
        buffer[index + 1] = UInt8(truncatingIfNeeded: value % 10) &+ UInt8(ascii: "0")
    }

    // MARK: - Parsing

    static func parse(bytes: UnsafeBufferPointer<UInt8>, now: Int64?) -> Int64? {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        let b = UnsafeBufferPointer(rebasing: bytes[start..<end])
        guard b.count >= 24 else { return nil }
        if b[3] == UInt8(ascii: ",") { return parseIMFFixdate(b) }
        if b[3] == UInt8(ascii: " ") { return parseAsctime(b) }
        return parseRFC850(b, now: now)
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`
    private static func parseIMFFixdate(_ b: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard b.count == 29, shortDayIndex(b, at: 0) != nil,
            b[4] == UInt8(ascii: " "), b[7] == UInt8(ascii: " "), b[11] == UInt8(ascii: " "),
            b[16] == UInt8(ascii: " "), b[25] == UInt8(ascii: " "), isGMT(b, at: 26),
            let day = digits(b, at: 5, count: 2),
            let month = monthIndex(b, at: 8),
            let year = digits(b, at: 12, count: 4)
        else { return nil }
        return timestamp(year: year, month: month, day: day, b, timeAt: 17)
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`
    private static func parseRFC850(_ b: UnsafeBufferPointer<UInt8>, now: Int64?) -> Int64? {
        guard let nameLength = longDayNameLength(b), b.count == nameLength + 24,
            b[nameLength] == UInt8(ascii: ","), b[nameLength + 1] == UInt8(ascii: " ")
        else { return nil }
        let i = nameLength + 2
        guard b[i + 2] == UInt8(ascii: "-"), b[i + 6] == UInt8(ascii: "-"), b[i + 9] == UInt8(ascii: " "),
            b[i + 18] == UInt8(ascii: " "), isGMT(b, at: i + 19),
            let day = digits(b, at: i, count: 2),
            let month = monthIndex(b, at: i + 3),
            let twoDigitYear = digits(b, at: i + 7, count: 2)
        else { return nil }
        let year: Int
        if let now {
            let currentYear = civilDate(daysSinceEpoch: floorDivide(now, 86_400)).year
            var candidate = currentYear - currentYear % 100 + twoDigitYear + 100
            while candidate > currentYear + 50 { candidate -= 100 }
            year = candidate
        } else {
            year = twoDigitYear < 70 ? 2000 + twoDigitYear : 1900 + twoDigitYear
        }
        return timestamp(year: year, month: month, day: day, b, timeAt: i + 10)
    }

    /// `Sun Nov  6 08:49:37 1994` (the day is `SP DIGIT` or `2DIGIT`).
    private static func parseAsctime(_ b: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard b.count == 24, shortDayIndex(b, at: 0) != nil,
            b[7] == UInt8(ascii: " "), b[10] == UInt8(ascii: " "), b[19] == UInt8(ascii: " "),
            let month = monthIndex(b, at: 4),
            let year = digits(b, at: 20, count: 4)
        else { return nil }
        let day: Int
        if b[8] == UInt8(ascii: " ") {
            guard let units = digits(b, at: 9, count: 1) else { return nil }
            day = units
        } else {
            guard let both = digits(b, at: 8, count: 2) else { return nil }
            day = both
        }
        return timestamp(year: year, month: month, day: day, b, timeAt: 11)
    }

    /// Reads `HH:MM:SS` at `index` and combines it with the date, validating every field.
    private static func timestamp(
        year: Int,
        month: Int,
        day: Int,
        _ b: UnsafeBufferPointer<UInt8>,
        timeAt index: Int
    ) -> Int64? {
        guard b[index + 2] == UInt8(ascii: ":"), b[index + 5] == UInt8(ascii: ":"),
            let hour = digits(b, at: index, count: 2), hour <= 23,
            let minute = digits(b, at: index + 3, count: 2), minute <= 59,
            let second = digits(b, at: index + 6, count: 2), second <= 60,
            day >= 1, day <= daysInMonth(year: year, month: month)
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + min(second, 59))
    }

    private static func digits(_ b: UnsafeBufferPointer<UInt8>, at index: Int, count: Int) -> Int? {
        var value = 0
        for i in index..<(index + count) {
            let digit = b[i] &- UInt8(ascii: "0")
            guard digit <= 9 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }

    private static func isGMT(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
        b[i] == UInt8(ascii: "G") && b[i + 1] == UInt8(ascii: "M") && b[i + 2] == UInt8(ascii: "T")
    }

    /// 1...12 when the three bytes at `index` spell a month name exactly.
    private static func monthIndex(_ b: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        threeLetterIndex(b, at: index, in: monthNames, count: 12).map { $0 + 1 }
    }

    private static func shortDayIndex(_ b: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        threeLetterIndex(b, at: index, in: dayNames, count: 7)
    }

    private static func threeLetterIndex(
        _ b: UnsafeBufferPointer<UInt8>,
        at index: Int,
        in names: StaticString,
        count: Int
    ) -> Int? {
        let names = names.utf8Start
        for n in 0..<count
        where b[index] == names[n * 3] && b[index + 1] == names[n * 3 + 1] && b[index + 2] == names[n * 3 + 2] {
            return n
        }
        return nil
    }

    /// The length of the RFC 850 `day-name-l` that starts `b` (`Monday` … `Sunday`).
    private static func longDayNameLength(_ b: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let day = shortDayIndex(b, at: 0) else { return nil }
        let suffix: StaticString
        switch day {
        case 2: suffix = "sday"  // Tuesday
        case 3: suffix = "nesday"  // Wednesday
        case 4: suffix = "rsday"  // Thursday
        case 6: suffix = "urday"  // Saturday
        default: suffix = "day"  // Sunday, Monday, Friday
        }
        let length = 3 + suffix.utf8CodeUnitCount
        guard b.count > length else { return nil }
        let bytes = suffix.utf8Start
        for i in 0..<suffix.utf8CodeUnitCount where b[3 + i] != bytes[i] { return nil }
        return length
    }

    // MARK: - Civil calendar (proleptic Gregorian; Howard Hinnant's algorithms)

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    static func civilDate(daysSinceEpoch: Int64) -> (year: Int, month: Int, day: Int) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // March = 0
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// The formatted `Date` of the current second, so a connection handler formats at most once per
/// second. Owned by one event loop (or one connection); it is a value, so it needs no lock.
///
/// ```swift
/// var dates = HTTPDateCache()
/// headers.add(name: "Date", value: dates.string(forUnixSeconds: now))
/// ```
public struct HTTPDateCache: Sendable {
    private var second: Int64 = .min
    private var formatted = ""

    public init() {}

    /// IMF-fixdate for `unixSeconds`; formats only when the second differs from the last call.
    public mutating func string(forUnixSeconds unixSeconds: Int64) -> String {
        if unixSeconds != second {
            second = unixSeconds
            formatted = HTTPDate.format(unixSeconds: unixSeconds)
        }
        return formatted
    }
}
