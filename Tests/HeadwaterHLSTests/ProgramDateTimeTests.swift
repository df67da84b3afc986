import Foundation
import HeadwaterHLS
import HeadwaterTesting
import Testing

@Suite("ProgramDateTime")
struct ProgramDateTimeTests {
    @Test(
        "ISO 8601 dates parse to the instant and keep their zone",
        arguments: [
            ("2026-11-21T17:36:00.000Z", 1_795_282_560_000, ProgramDateTime.Zone.utc),
            ("2026-11-21T17:36:00Z", 1_795_282_560_000, .utc),
            ("1970-01-01T00:00:00.000Z", 0, .utc),
            ("1969-12-31T23:59:59.999Z", -1, .utc),
            ("2000-01-01T00:00:00Z", 946_684_800_000, .utc),
            ("2026-11-21T23:06:00.000+05:30", 1_795_282_560_000, .offset(minutes: 330)),
            ("2026-11-21T23:06:00.000+0530", 1_795_282_560_000, .offset(minutes: 330)),
            ("2026-11-21T09:36:00.000-08:00", 1_795_282_560_000, .offset(minutes: -480)),
            ("2026-11-21T17:36:00.000+00:00", 1_795_282_560_000, .offset(minutes: 0)),
            ("2026-11-21T17:36:00.000-00:00", 1_795_282_560_000, .offset(minutes: 0)),
            ("2026-11-21T17:36:00.000", 1_795_282_560_000, .unspecified),
            ("2024-02-29T12:00:00Z", 1_709_208_000_000, .utc),
            ("2026-11-21T17:36:00.5Z", 1_795_282_560_500, .utc),
            ("2026-11-21T17:36:00.25Z", 1_795_282_560_250, .utc),
            ("2026-11-21T17:36:00.1234Z", 1_795_282_560_123, .utc),
            ("2026-11-21T17:36:00.1235Z", 1_795_282_560_124, .utc),
            ("2026-11-21T17:36:00.9999Z", 1_795_282_561_000, .utc),
            ("2016-12-31T23:59:60Z", 1_483_228_800_000, .utc),  // leap second: the instant after 23:59:59
        ] as [(String, Int64, ProgramDateTime.Zone)]
    )
    func parses(_ text: String, _ milliseconds: Int64, _ zone: ProgramDateTime.Zone) throws {
        let date = try #require(ProgramDateTime(iso8601: text))
        #expect(date.millisecondsSinceEpoch == milliseconds)
        #expect(date.zone == zone)
    }

    @Test(
        "malformed dates are rejected",
        arguments: [
            "", "2026-11-21", "2026-11-21T17:36", "2026-11-21t17:36:00Z", "2026-11-21T17:36:00z", "2026-11-21 17:36:00Z",
            "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-02-29T00:00:00Z", "2100-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z", "2026-11-00T00:00:00Z", "2026-11-21T24:00:00Z", "2026-11-21T17:60:00Z",
            "2026-11-21T17:36:61Z", "2026-11-21T17:36:00.Z", "2026-11-21T17:36:00+24:00", "2026-11-21T17:36:00+05:60",
            "2026-11-21T17:36:00+5:30", "2026-11-21T17:36:00ZZ", "2026-11-21T17:36:00 Z", "26-11-21T17:36:00Z",
            "2026-1-21T17:36:00Z", "+2026-11-21T17:36:00Z", "2026-11-21T17:36:00.000Q", "2026-11-21T17:36:00+05",
        ]
    )
    func rejects(_ text: String) {
        #expect(ProgramDateTime(iso8601: text) == nil)
    }

    @Test(
        "canonical text always has milliseconds and the stored zone",
        arguments: [
            (1_795_282_560_000, ProgramDateTime.Zone.utc, "2026-11-21T17:36:00.000Z"),
            (1_795_282_560_000, .offset(minutes: 330), "2026-11-21T23:06:00.000+05:30"),
            (1_795_282_560_000, .offset(minutes: -480), "2026-11-21T09:36:00.000-08:00"),
            (1_795_282_560_000, .offset(minutes: -30), "2026-11-21T17:06:00.000-00:30"),
            (1_795_282_560_000, .offset(minutes: 0), "2026-11-21T17:36:00.000+00:00"),
            (1_795_282_560_007, .unspecified, "2026-11-21T17:36:00.007"),
            (-1, .utc, "1969-12-31T23:59:59.999Z"),
            (0, .offset(minutes: -60), "1969-12-31T23:00:00.000-01:00"),
            (951_782_400_000, .utc, "2000-02-29T00:00:00.000Z"),
            (-62_135_596_800_000, .utc, "0001-01-01T00:00:00.000Z"),
            (253_402_300_799_999, .utc, "9999-12-31T23:59:59.999Z"),
        ] as [(Int64, ProgramDateTime.Zone, String)]
    )
    func canonicalText(_ milliseconds: Int64, _ zone: ProgramDateTime.Zone, _ text: String) {
        let date = ProgramDateTime(millisecondsSinceEpoch: milliseconds, zone: zone)
        #expect(date.description == text)
        var bytes: [UInt8] = []
        date.write(into: &bytes)
        #expect(bytes == Array(text.utf8))
    }

    /// Rounding the fourth fractional digit, or a leap second, could carry the last instant of 9999
    /// into year 10000, which needs five digits; the parser rejects those, and every date it accepts
    /// is written as text that parses back equal.
    @Test(
        "every date parsed from text is written as text that parses",
        arguments: ["9999-12-31T23:59:59.9995Z", "9999-12-31T23:59:60Z", "9999-12-31T23:59:59.999Z", "0000-01-01T00:00:00+00:01"]
    )
    func acceptedTextIsWritable(_ text: String) throws {
        guard let date = ProgramDateTime(iso8601: text) else {
            #expect(text.hasPrefix("9999-12-31T23:59:"), "only dates that roll into year 10000 are rejected")
            #expect(text != "9999-12-31T23:59:59.999Z")
            return
        }
        #expect(ProgramDateTime(iso8601: date.description) == date, "\(text) → \(date.description)")
    }

    @Test("canonical text parses back to an equal value (10,000 random dates in years 1–9998)")
    func textRoundTrip() {
        var generator = PlaylistGenerator(seed: 0xDA7E)
        for _ in 0..<10_000 {
            let date = generator.programDateTime()
            #expect(ProgramDateTime(iso8601: date.description) == date, "\(date.millisecondsSinceEpoch) \(date.zone)")
        }
    }

    @Test("the calendar agrees with Foundation for random instants in 1900–2200")
    func agreesWithFoundation() throws {
        var random = SeededRandom(seed: 0xF0DA)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        for _ in 0..<2_000 {
            let ms = Int64(random.int(-2_208_988_800_000...7_258_118_400_000))
            let text = ProgramDateTime(millisecondsSinceEpoch: ms).description
            let date = Date(timeIntervalSince1970: Double(ms) / 1000)
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let expected =
                String(format: "%04ld-%02ld-%02ldT%02ld:%02ld:%02ld", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
                + String(format: ".%03ldZ", Int(((ms % 1000) + 1000) % 1000))
            #expect(text == expected, "\(ms)")
        }
    }

    @Test("adding a duration rounds to the millisecond, half up, and keeps the zone")
    func adding() throws {
        let start = try #require(ProgramDateTime(iso8601: "2024-02-28T23:59:59.999+01:00"))
        #expect(start.adding(.milliseconds(1)).description == "2024-02-29T00:00:00.000+01:00")
        #expect(start.adding(HLSDuration(microseconds: 499)).millisecondsSinceEpoch == start.millisecondsSinceEpoch)
        #expect(start.adding(HLSDuration(microseconds: 500)).millisecondsSinceEpoch == start.millisecondsSinceEpoch + 1)
        #expect(start.adding(HLSDuration(decimal: "6.0065")!).millisecondsSinceEpoch == start.millisecondsSinceEpoch + 6_007)
        #expect(start.adding(.seconds(86_400)).description == "2024-02-29T23:59:59.999+01:00", "2024 is a leap year")
        #expect(start.adding(.seconds(2 * 86_400)).description == "2024-03-01T23:59:59.999+01:00")
        let newYear = try #require(ProgramDateTime(iso8601: "2025-12-31T23:59:58.000Z"))
        #expect(newYear.adding(.seconds(2)).description == "2026-01-01T00:00:00.000Z")
    }

    @Test("dates are ordered by instant; equality also compares the zone")
    func orderingAndEquality() throws {
        let utc = try #require(ProgramDateTime(iso8601: "2026-11-21T17:36:00Z"))
        let paris = try #require(ProgramDateTime(iso8601: "2026-11-21T18:36:00+01:00"))
        #expect(!(utc < paris) && !(paris < utc))
        #expect(utc != paris)
        #expect(utc.duration(since: paris) == .zero)
        let later = utc.adding(.seconds(6))
        #expect(utc < later)
        #expect(later.duration(since: utc) == .seconds(6))
        #expect(utc.duration(since: later) == .seconds(-6))
    }

    @Test(
        "a date written with microseconds keeps them: microseconds in, microseconds out",
        arguments: [
            ("2026-11-21T17:36:00.123456Z", "2026-11-21T17:36:00.123456Z", 1_795_282_560_123),
            ("2026-11-21T17:36:00.1234Z", "2026-11-21T17:36:00.123400Z", 1_795_282_560_123),
            ("2026-11-21T17:36:00.000600+01:00", "2026-11-21T17:36:00.000600+01:00", 1_795_278_960_001),
            ("2026-11-21T17:36:00.9999995Z", "2026-11-21T17:36:01.000000Z", 1_795_282_561_000),
            ("1969-12-31T23:59:59.999400Z", "1969-12-31T23:59:59.999400Z", -1),
            ("2026-11-21T17:36:00.123Z", "2026-11-21T17:36:00.123Z", 1_795_282_560_123),
        ] as [(String, String, Int64)]
    )
    func microseconds(_ text: String, _ written: String, _ milliseconds: Int64) throws {
        let date = try #require(ProgramDateTime(iso8601: text))
        #expect(date.description == written)
        #expect(date.millisecondsSinceEpoch == milliseconds)
        #expect(ProgramDateTime(iso8601: written) == date)
        #expect((date.microsecondsSinceEpoch != nil) == (text.split(separator: ".").last!.prefix(while: \.isNumber).count > 3))
    }

    @Test("microsecond dates add, compare and subtract exactly; setting milliseconds drops the microseconds")
    func microsecondArithmetic() throws {
        let start = try #require(ProgramDateTime(iso8601: "2026-11-21T17:36:00.000250Z"))
        let next = start.adding(try #require(HLSDuration(decimal: "6.006006")))
        #expect(next.description == "2026-11-21T17:36:06.006256Z")
        #expect(next.duration(since: start) == HLSDuration(decimal: "6.006006"))
        #expect(start < next)
        let millisecond = try #require(ProgramDateTime(iso8601: "2026-11-21T17:36:00.000Z"))
        #expect(millisecond < start && millisecond != start)
        #expect(try #require(ProgramDateTime(iso8601: "2026-11-21T17:36:00.000000Z")) == millisecond, "the same instant")
        var moved = start
        moved.millisecondsSinceEpoch += 1000
        #expect(moved.description == "2026-11-21T17:36:01.000Z" && moved.microsecondsSinceEpoch == nil)
    }
}
