import HeadwaterHTTP
import HeadwaterTesting
import Testing

struct ConditionalCase: CustomTestStringConvertible, Sendable {
    var method: ConditionalRequest.Method = .getOrHead
    var ifMatch: String? = nil
    var ifNoneMatch: String? = nil
    var ifModifiedSince: String? = nil
    var ifUnmodifiedSince: String? = nil
    var entityTag = "\"v1\""
    var lastModified: Int64? = 784_111_777  // Sun, 06 Nov 1994 08:49:37 GMT
    let expected: ConditionalOutcome
    let note: String

    var testDescription: String { note }
}

private let same = "Sun, 06 Nov 1994 08:49:37 GMT"
private let later = "Sun, 06 Nov 1994 08:49:38 GMT"
private let earlier = "Sun, 06 Nov 1994 08:49:36 GMT"

let conditionalCases: [ConditionalCase] = [
    .init(expected: .proceed, note: "no preconditions"),

    // If-None-Match: weak comparison (§13.1.2).
    .init(ifNoneMatch: "\"v1\"", expected: .notModified, note: "INM equal → 304"),
    .init(ifNoneMatch: "W/\"v1\"", expected: .notModified, note: "INM weak tag matches weakly"),
    .init(ifNoneMatch: "\"v1\"", entityTag: "W/\"v1\"", expected: .notModified, note: "INM vs our weak tag"),
    .init(ifNoneMatch: "\"v2\"", expected: .proceed, note: "INM different"),
    .init(ifNoneMatch: "\"V1\"", expected: .proceed, note: "opaque-tags are case-sensitive"),
    .init(ifNoneMatch: "\"v2\", \"v1\"", expected: .notModified, note: "INM list, second matches"),
    .init(ifNoneMatch: "\"v2\",W/\"v1\"", expected: .notModified, note: "INM list without OWS, weak"),
    .init(ifNoneMatch: "  \"v2\" \t,  \"v1\"  ", expected: .notModified, note: "INM list with OWS"),
    .init(ifNoneMatch: ",\"v1\",", expected: .notModified, note: "INM list with empty elements"),
    .init(ifNoneMatch: "\"v2\", \"v3\"", expected: .proceed, note: "INM list, none matches"),
    .init(ifNoneMatch: "*", expected: .notModified, note: "INM * on an existing representation"),
    .init(ifNoneMatch: " * ", expected: .notModified, note: "INM * with OWS"),
    .init(method: .other, ifNoneMatch: "*", expected: .preconditionFailed, note: "INM * on PUT → 412"),
    .init(method: .other, ifNoneMatch: "\"v1\"", expected: .preconditionFailed, note: "INM match, non-GET → 412"),
    .init(method: .other, ifNoneMatch: "\"v2\"", expected: .proceed, note: "INM no match, non-GET"),
    .init(ifNoneMatch: "v1", expected: .proceed, note: "INM unquoted is malformed → matches nothing"),
    .init(ifNoneMatch: "\"v1", expected: .proceed, note: "INM unterminated"),
    .init(ifNoneMatch: "\"v1\" \"v2\"", expected: .proceed, note: "INM missing comma"),
    .init(ifNoneMatch: "*, \"v1\"", expected: .proceed, note: "INM * must stand alone"),
    .init(ifNoneMatch: "\"v1\", junk", expected: .proceed, note: "INM malformed after a match"),
    .init(ifNoneMatch: "w/\"v1\"", expected: .proceed, note: "weak indicator is case-sensitive"),
    .init(ifNoneMatch: "", expected: .proceed, note: "INM empty"),
    .init(ifNoneMatch: "\"a b\"", entityTag: "\"a b\"", expected: .proceed, note: "space is not an etagc"),

    // If-Match: strong comparison (§13.1.1).
    .init(ifMatch: "\"v1\"", expected: .proceed, note: "IM equal"),
    .init(ifMatch: "\"v2\"", expected: .preconditionFailed, note: "IM different → 412"),
    .init(ifMatch: "W/\"v1\"", expected: .preconditionFailed, note: "IM weak never matches strongly"),
    .init(ifMatch: "\"v1\"", entityTag: "W/\"v1\"", expected: .preconditionFailed, note: "IM vs our weak tag"),
    .init(ifMatch: "\"v0\", \"v1\"", expected: .proceed, note: "IM list"),
    .init(ifMatch: "*", expected: .proceed, note: "IM *"),
    .init(ifMatch: "garbage", expected: .preconditionFailed, note: "IM malformed → 412"),
    .init(method: .other, ifMatch: "\"v1\"", expected: .proceed, note: "IM on PUT"),

    // If-Modified-Since (§13.1.3).
    .init(ifModifiedSince: same, expected: .notModified, note: "IMS equal to Last-Modified → 304"),
    .init(ifModifiedSince: later, expected: .notModified, note: "IMS after Last-Modified → 304"),
    .init(ifModifiedSince: earlier, expected: .proceed, note: "IMS before Last-Modified"),
    .init(ifModifiedSince: "Sunday, 06-Nov-94 08:49:37 GMT", expected: .notModified, note: "IMS in RFC 850 form"),
    .init(ifModifiedSince: "Sun Nov  6 08:49:37 1994", expected: .notModified, note: "IMS in asctime form"),
    .init(ifModifiedSince: "not a date", expected: .proceed, note: "IMS invalid → ignored"),
    .init(ifModifiedSince: same + ", " + same, expected: .proceed, note: "IMS with two members → ignored"),
    .init(ifModifiedSince: same, lastModified: nil, expected: .proceed, note: "IMS without Last-Modified"),
    .init(method: .other, ifModifiedSince: same, expected: .proceed, note: "IMS ignored for non-GET"),

    // If-None-Match takes precedence over If-Modified-Since.
    .init(ifNoneMatch: "\"v2\"", ifModifiedSince: same, expected: .proceed, note: "INM miss beats IMS hit"),
    .init(ifNoneMatch: "\"v1\"", ifModifiedSince: earlier, expected: .notModified, note: "INM hit beats IMS miss"),
    .init(ifNoneMatch: "garbage", ifModifiedSince: same, expected: .proceed, note: "malformed INM still disables IMS"),

    // If-Unmodified-Since (§13.1.4).
    .init(ifUnmodifiedSince: earlier, expected: .preconditionFailed, note: "IUS before Last-Modified → 412"),
    .init(ifUnmodifiedSince: same, expected: .proceed, note: "IUS equal"),
    .init(ifUnmodifiedSince: later, expected: .proceed, note: "IUS after"),
    .init(ifUnmodifiedSince: "garbage", expected: .proceed, note: "IUS invalid → ignored"),
    .init(ifUnmodifiedSince: earlier, lastModified: nil, expected: .proceed, note: "IUS without Last-Modified"),
    .init(ifMatch: "\"v1\"", ifUnmodifiedSince: earlier, expected: .proceed, note: "IUS ignored when IM present"),
    .init(method: .other, ifUnmodifiedSince: earlier, expected: .preconditionFailed, note: "IUS on PUT"),

    // Combinations in §13.2.2 order.
    .init(ifMatch: "\"v1\"", ifNoneMatch: "\"v1\"", expected: .notModified, note: "IM passes, then INM matches"),
    .init(ifMatch: "\"v2\"", ifNoneMatch: "\"v1\"", expected: .preconditionFailed, note: "IM fails first"),
    .init(ifModifiedSince: same, ifUnmodifiedSince: earlier, expected: .preconditionFailed, note: "IUS before IMS"),
]

@Test(arguments: conditionalCases)
func conditionalRequests(_ c: ConditionalCase) {
    let outcome = ConditionalRequest.evaluate(
        method: c.method,
        ifMatch: c.ifMatch,
        ifNoneMatch: c.ifNoneMatch,
        ifModifiedSince: c.ifModifiedSince,
        ifUnmodifiedSince: c.ifUnmodifiedSince,
        entityTag: c.entityTag,
        lastModifiedSeconds: c.lastModified
    )
    #expect(outcome == c.expected)
}

@Test func notModifiedOnlyForGetOrHead() {
    var r = SeededRandom(seed: 0x304)
    let fields: [String?] = [nil, "*", "\"v1\"", "\"v2\"", "W/\"v1\"", "x", "\"v2\", \"v1\""]
    let dates: [String?] = [nil, same, later, earlier, "x"]
    for _ in 0..<2_000 {
        let outcome = ConditionalRequest.evaluate(
            method: .other,
            ifMatch: r.pick(fields),
            ifNoneMatch: r.pick(fields),
            ifModifiedSince: r.pick(dates),
            ifUnmodifiedSince: r.pick(dates),
            entityTag: "\"v1\"",
            lastModifiedSeconds: r.chance(0.5) ? 784_111_777 : nil
        )
        #expect(outcome != .notModified)
    }
}
