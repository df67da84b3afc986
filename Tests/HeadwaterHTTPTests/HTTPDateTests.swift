import Foundation
import HeadwaterHTTP
import HeadwaterTesting
import Testing

/// RFC 9110 §5.6.7's example instant in all three forms.
private let example: Int64 = 784_111_777

@Test func formatsTheRFCExample() {
    #expect(HTTPDate.format(unixSeconds: example) == "Sun, 06 Nov 1994 08:49:37 GMT")
}

@Test(arguments: [
    (Int64(0), "Thu, 01 Jan 1970 00:00:00 GMT"),
    (Int64(-1), "Wed, 31 Dec 1969 23:59:59 GMT"),
    (Int64(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT"),
    (Int64(1_767_225_600), "Thu, 01 Jan 2026 00:00:00 GMT"),
    (Int64(4_133_980_799), "Fri, 31 Dec 2100 23:59:59 GMT"),
    (HTTPDate.latestUnixSeconds, "Fri, 31 Dec 9999 23:59:59 GMT"),
    (HTTPDate.earliestUnixSeconds, "Sat, 01 Jan 0000 00:00:00 GMT"),
    (Int64.max, "Fri, 31 Dec 9999 23:59:59 GMT"),
    (Int64.min, "Sat, 01 Jan 0000 00:00:00 GMT"),
])
func formats(_ seconds: Int64, _ expected: String) {
    #expect(HTTPDate.format(unixSeconds: seconds) == expected)
}

@Test(arguments: [
    "Sun, 06 Nov 1994 08:49:37 GMT",
    "Sunday, 06-Nov-94 08:49:37 GMT",
    "Sun Nov  6 08:49:37 1994",
    "Sun Nov 06 08:49:37 1994",
    "  Sun, 06 Nov 1994 08:49:37 GMT\t",
])
func parsesAllThreeForms(_ text: String) {
    #expect(HTTPDate.parse(text) == example)
}

@Test(arguments: [
    ("Monday, 07-Nov-94 08:49:37 GMT", example + 86_400),
    ("Tuesday, 08-Nov-94 08:49:37 GMT", example + 2 * 86_400),
    ("Wednesday, 09-Nov-94 08:49:37 GMT", example + 3 * 86_400),
    ("Thursday, 10-Nov-94 08:49:37 GMT", example + 4 * 86_400),
    ("Friday, 11-Nov-94 08:49:37 GMT", example + 5 * 86_400),
    ("Saturday, 12-Nov-94 08:49:37 GMT", example + 6 * 86_400),
])
func parsesEveryRFC850DayName(_ text: String, _ expected: Int64) {
    #expect(HTTPDate.parse(text) == expected)
}

@Test func rfc850TwoDigitYearFollowsTheFiftyYearRule() {
    let now: Int64 = 1_767_225_600  // 2026-01-01
    func year(_ yy: String, now: Int64?) -> Int64? {
        HTTPDate.parse("Thursday, 01-Jan-\(yy) 00:00:00 GMT", now: now)
    }
    // 2076 is exactly 50 years ahead of 2026, not more: it stays in the future.
    #expect(year("76", now: now) == HTTPDate.parse("Thu, 01 Jan 2076 00:00:00 GMT"))
    #expect(year("77", now: now) == HTTPDate.parse("Thu, 01 Jan 1977 00:00:00 GMT"))
    #expect(year("26", now: now) == HTTPDate.parse("Thu, 01 Jan 2026 00:00:00 GMT"))
    #expect(year("94", now: now) == HTTPDate.parse("Thu, 01 Jan 1994 00:00:00 GMT"))
    // Late in a century the window moves into the next one.
    let in2090: Int64 = 3_786_912_000  // 2090-01-01
    #expect(year("10", now: in2090) == HTTPDate.parse("Thu, 01 Jan 2110 00:00:00 GMT"))
    #expect(year("95", now: in2090) == HTTPDate.parse("Thu, 01 Jan 2095 00:00:00 GMT"))
    // Without `now`: 00–69 → 20xx, 70–99 → 19xx.
    #expect(year("69", now: nil) == HTTPDate.parse("Thu, 01 Jan 2069 00:00:00 GMT"))
    #expect(year("70", now: nil) == HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT"))
}

@Test(arguments: [
    "",
    "Sun, 06 Nov 1994 08:49:37",
    "Sun, 06 Nov 1994 08:49:37 UTC",
    "Sun, 06 Nov 1994 08:49:37 gmt",
    "sun, 06 Nov 1994 08:49:37 GMT",
    "Sun, 06 nov 1994 08:49:37 GMT",
    "Sun, 6 Nov 1994 08:49:37 GMT",
    "Sun, 06 Nov 94 08:49:37 GMT",
    "Sun, 06 Nov 1994 8:49:37 GMT",
    "Sun, 06 Nov 1994 08:49:37 GMT ,",
    "Sun,  06 Nov 1994 08:49:37 GMT",
    "Sun, 06-Nov-1994 08:49:37 GMT",
    "Sun, 31 Feb 1994 08:49:37 GMT",
    "Sun, 29 Feb 1900 08:49:37 GMT",
    "Sun, 29 Feb 2100 08:49:37 GMT",
    "Sun, 00 Nov 1994 08:49:37 GMT",
    "Sun, 31 Nov 1994 08:49:37 GMT",
    "Sun, 06 Nov 1994 24:00:00 GMT",
    "Sun, 06 Nov 1994 08:60:00 GMT",
    "Sun, 06 Nov 1994 08:49:61 GMT",
    "Sun, 06 Nov 1994 08-49-37 GMT",
    "Xyz, 06 Nov 1994 08:49:37 GMT",
    "Sunday, 06 Nov 1994 08:49:37 GMT",
    "Sundae, 06-Nov-94 08:49:37 GMT",
    "Sun, 06-Nov-94 08:49:37 GMT",
    "Sunday, 06-Nov-94 08:49:37 UTC",
    "Sunday,06-Nov-94 08:49:37 GMT",
    "Sun Nov 6 08:49:37 1994",
    "Sun Nov  6 08:49:37 94",
    "Sun Nov  6 08:49:37 1994 GMT",
    "Sun Nov 6  08:49:37 1994",
    "1994-11-06T08:49:37Z",
    "784111777",
    "Sun, ０6 Nov 1994 08:49:37 GMT",
])
func rejectsInvalidDates(_ text: String) {
    #expect(HTTPDate.parse(text) == nil)
}

@Test func acceptsValidEdgeDates() {
    #expect(HTTPDate.parse("Tue, 29 Feb 2000 00:00:00 GMT") == 951_782_400)
    #expect(HTTPDate.parse("Thu, 29 Feb 2024 12:00:00 GMT") == 1_709_208_000)
    #expect(HTTPDate.parse("Fri, 31 Dec 9999 23:59:59 GMT") == HTTPDate.latestUnixSeconds)
    // A leap second reads as :59 of the same minute.
    #expect(HTTPDate.parse("Sat, 31 Dec 2016 23:59:60 GMT") == HTTPDate.parse("Sat, 31 Dec 2016 23:59:59 GMT"))
}

@Test func formatMatchesFoundationAndRoundTrips() {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    var r = SeededRandom(seed: 0xDA7E)
    for _ in 0..<3_000 {
        // 1900…2200: Foundation switches to the Julian calendar before 1582.
        let seconds = Int64(r.int(-2_208_988_800...7_258_118_400))
        let text = HTTPDate.format(unixSeconds: seconds)
        #expect(text == formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))), "seed 0xDA7E, \(seconds)")
        #expect(HTTPDate.parse(text) == seconds, "\(text)")
    }
    // Round trip across the whole representable range.
    for _ in 0..<3_000 {
        let seconds = Int64.random(in: HTTPDate.earliestUnixSeconds...HTTPDate.latestUnixSeconds, using: &r)
        let text = HTTPDate.format(unixSeconds: seconds)
        #expect(text.utf8.count == HTTPDate.formattedLength)
        #expect(HTTPDate.parse(text) == seconds, "\(seconds) → \(text)")
    }
}

@Test func cacheReformatsOnlyWhenTheSecondChanges() {
    var cache = HTTPDateCache()
    let first = cache.string(forUnixSeconds: example)
    #expect(first == "Sun, 06 Nov 1994 08:49:37 GMT")
    #expect(cache.string(forUnixSeconds: example) == first)
    #expect(cache.string(forUnixSeconds: example + 1) == "Sun, 06 Nov 1994 08:49:38 GMT")
    #expect(cache.string(forUnixSeconds: example) == first)
}
