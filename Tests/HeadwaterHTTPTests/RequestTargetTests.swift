import HeadwaterHTTP
import HeadwaterTesting
import Testing

private func parse(_ target: String) -> Result<RequestTarget, RequestTargetError> {
    RequestTarget.parse(target)
}

private func segments(_ target: String) -> [String]? {
    try? parse(target).get().segments
}

private func error(_ target: String) -> RequestTargetError? {
    if case .failure(let error) = parse(target) { return error }
    return nil
}

// MARK: - Accepted

@Test(arguments: [
    ("/", []),
    ("/live/news/master.m3u8", ["live", "news", "master.m3u8"]),
    ("/live/news/720p/seg_123.ts", ["live", "news", "720p", "seg_123.ts"]),
    ("/live/news/", ["live", "news", ""]),
    ("/a%20b", ["a b"]),
    ("/a+b", ["a+b"]),
    ("/%41%62%63", ["Abc"]),
    ("/%e2%82%ac", ["€"]),
    ("/%E2%82%AC", ["€"]),
    ("/...", ["..."]),
    ("/..a", ["..a"]),
    ("/a..", ["a.."]),
    ("/.well-known/x", [".well-known", "x"]),
    ("/%252e%252e", ["%2e%2e"]),
    ("/a;b=c/d:e@f!$&'()*,=~_-.", ["a;b=c", "d:e@f!$&'()*,=~_-."]),
    ("/a?", ["a"]),
    ("/a?/b/../c", ["a"]),
] as [(String, [String])])
func acceptsPaths(_ target: String, _ expected: [String]) {
    #expect(segments(target) == expected)
}

@Test func keepsRawPathAndQuery() throws {
    let target = try parse("/ssai/news/720p.m3u8?session=abc%2Bdef&_HLS_msn=12").get()
    #expect(target.path == "/ssai/news/720p.m3u8")
    #expect(target.rawQuery == "session=abc%2Bdef&_HLS_msn=12")
    #expect(target.query.first("session") == "abc+def")
    #expect(target.query.first("_HLS_msn") == "12")
    #expect(target.query.first("missing") == nil)

    let noQuery = try parse("/a/b").get()
    #expect(noQuery.rawQuery == nil)
    #expect(noQuery.query.items.isEmpty)
    #expect(noQuery.path == "/a/b")

    let emptyQuery = try parse("/a?").get()
    #expect(emptyQuery.rawQuery == "")
    #expect(emptyQuery.query.items.isEmpty)
}

@Test func parsesQueries() throws {
    let query = try parse("/x?a=1&b=two+words&a=2&flag&&empty=&=anon&c=%3D%26%2B&d=x=y&").get().query
    #expect(
        query.items == [
            .init(name: "a", value: "1"),
            .init(name: "b", value: "two words"),
            .init(name: "a", value: "2"),
            .init(name: "flag", value: ""),
            .init(name: "empty", value: ""),
            .init(name: "", value: "anon"),
            .init(name: "c", value: "=&+"),
            .init(name: "d", value: "x=y"),
        ]
    )
    #expect(query.first("a") == "1")
    #expect(query.all("a") == ["1", "2"])
    #expect(query.first("flag") == "")
    #expect(try parse("/x?q=%E2%82%AC+/?").get().query.first("q") == "€ /?")
    #expect(try parse("/x?path=/a/b%2Fc").get().query.first("path") == "/a/b/c")
}

// MARK: - Rejected

struct HostileTarget: CustomTestStringConvertible, Sendable {
    let target: String
    let error: RequestTargetError
    init(_ target: String, _ error: RequestTargetError) {
        self.target = target
        self.error = error
    }
    var testDescription: String { target.debugDescription }
}

let hostileTargets: [HostileTarget] = [
    // Not origin-form.
    .init("", .empty),
    .init("*", .notOriginForm),
    .init("http://evil.example/live/a.m3u8", .notOriginForm),
    .init("HTTP://evil.example/", .notOriginForm),
    .init("evil.example:443", .notOriginForm),
    .init("live/a.m3u8", .notOriginForm),
    .init("%2Flive", .notOriginForm),
    .init("\\live", .notOriginForm),
    .init("?a=b", .notOriginForm),
    .init("//evil.example/path", .emptySegment),

    // Dot segments, raw and encoded.
    .init("/..", .dotSegment),
    .init("/.", .dotSegment),
    .init("/../etc/passwd", .dotSegment),
    .init("/live/../../etc/passwd", .dotSegment),
    .init("/live/./a.ts", .dotSegment),
    .init("/live/..", .dotSegment),
    .init("/live/../", .dotSegment),
    .init("/%2e%2e/etc/passwd", .dotSegment),
    .init("/%2E%2E/etc/passwd", .dotSegment),
    .init("/%2e./x", .dotSegment),
    .init("/%2E./x", .dotSegment),
    .init("/.%2e/x", .dotSegment),
    .init("/.%2E/x", .dotSegment),
    .init("/%2e/x", .dotSegment),
    .init("/live/%2e%2e", .dotSegment),

    // Encoded slash and backslash.
    .init("/live%2f..%2f..%2fetc", .encodedSlash),
    .init("/live%2F..%2Fetc", .encodedSlash),
    .init("/%2e%2e%2fetc", .encodedSlash),
    .init("/a%2fb", .encodedSlash),
    .init("/a\\b", .backslash),
    .init("/..\\..\\etc", .backslash),
    .init("/a%5cb", .backslash),
    .init("/a%5Cb", .backslash),
    .init("/%2e%2e%5cetc", .backslash),

    // Control bytes and NUL, raw and encoded, in path and query.
    .init("/a%00.ts", .controlByte(.path)),
    .init("/a.m3u8%00.ts", .controlByte(.path)),
    .init("/a\u{0}b", .controlByte(.path)),
    .init("/a%0d%0aSet-Cookie:x", .controlByte(.path)),
    .init("/a%0A", .controlByte(.path)),
    .init("/a%09b", .controlByte(.path)),
    .init("/a%7fb", .controlByte(.path)),
    .init("/a\u{7F}b", .controlByte(.path)),
    .init("/a\tb", .controlByte(.path)),
    .init("/a\r\nb", .controlByte(.path)),
    .init("/a?x=%00", .controlByte(.query)),
    .init("/a?x=%0d%0a", .controlByte(.query)),
    .init("/a?x%0a=1", .controlByte(.query)),
    .init("/a?x=\u{1B}[31m", .controlByte(.query)),

    // Raw bytes that must be encoded.
    .init("/a b", .disallowedByte(0x20, in: .path)),
    .init("/caf\u{E9}", .disallowedByte(0xC3, in: .path)),
    .init("/a?x=1 2", .disallowedByte(0x20, in: .query)),
    .init("/a?x=\u{E9}", .disallowedByte(0xC3, in: .query)),

    // Fragments.
    .init("/a#b", .fragment),
    .init("/a?x=1#frag", .fragment),
    .init("/#", .fragment),

    // Empty segments.
    .init("//", .emptySegment),
    .init("/live//a.ts", .emptySegment),
    .init("/live///a.ts", .emptySegment),
    .init("/a//", .emptySegment),

    // Invalid percent-encoding.
    .init("/a%zz", .invalidPercentEncoding(.path)),
    .init("/a%4", .invalidPercentEncoding(.path)),
    .init("/a%", .invalidPercentEncoding(.path)),
    .init("/a%4/b", .invalidPercentEncoding(.path)),
    .init("/a%g1", .invalidPercentEncoding(.path)),
    .init("/a%%41", .invalidPercentEncoding(.path)),
    .init("/a%u002e", .invalidPercentEncoding(.path)),
    .init("/a?x=%zz", .invalidPercentEncoding(.query)),
    .init("/a?x=%4", .invalidPercentEncoding(.query)),
    .init("/a?x=%", .invalidPercentEncoding(.query)),
    .init("/a?%=1", .invalidPercentEncoding(.query)),

    // Decoded bytes that are not UTF-8 (overlong '.', lone bytes, surrogates).
    .init("/%c0%ae%c0%ae/etc", .invalidUTF8(.path)),
    .init("/%ff", .invalidUTF8(.path)),
    .init("/%e2%82", .invalidUTF8(.path)),
    .init("/%ed%a0%80", .invalidUTF8(.path)),
    .init("/a?x=%ff", .invalidUTF8(.query)),

    // Length limits.
    .init("/" + String(repeating: "a", count: 2048), .tooLong(.path, limit: 2048)),
    .init("/" + String(repeating: "a/", count: 1100), .tooLong(.path, limit: 2048)),
    .init("/a?" + String(repeating: "x", count: 4097), .tooLong(.query, limit: 4096)),
]

@Test(arguments: hostileTargets)
func rejectsHostileTargets(_ c: HostileTarget) {
    #expect(error(c.target) == c.error)
}

@Test func lengthLimitsAreInclusive() {
    #expect(segments("/" + String(repeating: "a", count: 2047))?.first?.utf8.count == 2047)
    #expect((try? parse("/a?" + String(repeating: "x", count: 4096)).get()) != nil)
}

@Test func reasonsAreOneLineAndNeverEchoInput() {
    for c in hostileTargets {
        let reason = c.error.reason
        #expect(!reason.isEmpty)
        #expect(!reason.contains("\n") && !reason.contains("\r"))
        #expect(reason.utf8.count < 120)
        #expect(!reason.contains("evil") && !reason.contains("passwd"))
    }
    #expect(RequestTargetError.disallowedByte(0xC3, in: .path).reason.contains("0xC3"))
    #expect(RequestTargetError.tooLong(.query, limit: 4096).reason == "request query is longer than 4096 bytes")
}

/// No accepted target ever yields a segment a file server could misread.
@Test func acceptedSegmentsAreAlwaysSafe() {
    var r = SeededRandom(seed: 0x7A46E7)
    let pieces = ["/", "/", "a", "b", ".", "..", "%2e", "%2E", "%2f", "%5c", "\\", "%00", "%", "%4", "%41", "%c0%ae",
                  "%e2%82%ac", "?", "&", "=", "+", "#", " ", "~", "%25", "//"]
    var accepted = 0
    for _ in 0..<20_000 {
        var target = r.chance(0.9) ? "/" : ""
        for _ in 0..<r.int(0...8) { target += r.pick(pieces) }
        guard case .success(let parsed) = parse(target) else { continue }
        accepted += 1
        for segment in parsed.segments {
            #expect(segment != "." && segment != "..", "\(target.debugDescription)")
            #expect(!segment.contains("/") && !segment.contains("\\"), "\(target.debugDescription)")
            #expect(!segment.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(target.debugDescription)")
        }
        for (index, segment) in parsed.segments.enumerated() where segment.isEmpty {
            #expect(index == parsed.segments.count - 1, "\(target.debugDescription)")
        }
        for item in parsed.query.items {
            #expect(!(item.name + item.value).unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
        }
    }
    #expect(accepted > 1_000)
}
