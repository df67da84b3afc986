import HeadwaterHLS
import Testing

/// What the strict parse does with a tolerated form.
private enum Strict {
    /// Refuses it with this code at the deviation's line.
    case refuses(PlaylistParseError.Code)
    /// Accepts it (a legal unknown tag, or a form only the validator reports).
    case accepts
}

private func text(_ lines: [String]) -> [UInt8] { Array((lines.joined(separator: "\n") + "\n").utf8) }

/// One tolerated form, before and after: the strict parse does `strict`; the tolerant parse reports
/// exactly `rules` (at `lines`) and serializes to `canonical`, which the strict parse accepts into the
/// same playlist, a tolerant parse reads without a deviation and (when `clean`) the validator passes
/// without a single issue. Media playlists get an `EXT-X-ENDLIST` (a finished playlist this short is
/// not a C5 problem).
@discardableResult
private func expectTolerated(
    _ input: [String], strict: Strict, rules: [IngestDeviation.Rule], lines: [Int], canonical: [String],
    clean: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
) throws -> Playlist {
    let isMedia = !input.contains { $0.hasPrefix("#EXT-X-STREAM-INF") }
    let input = isMedia ? input + ["#EXT-X-ENDLIST"] : input
    let canonical = isMedia ? canonical + ["#EXT-X-ENDLIST"] : canonical
    switch strict {
    case .refuses(let code):
        let error = #expect(throws: PlaylistParseError.self, sourceLocation: sourceLocation) {
            try PlaylistParser().parse(text(input))
        }
        #expect(error?.code == code, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.line == lines.first, "\(String(describing: error))", sourceLocation: sourceLocation)
    case .accepts:
        _ = try PlaylistParser().parse(text(input))
    }
    let (playlist, deviations) = try PlaylistParser().parseTolerating(text(input))
    #expect(deviations.map(\.rule) == rules, "\(deviations)", sourceLocation: sourceLocation)
    #expect(deviations.map(\.line) == lines, "\(deviations)", sourceLocation: sourceLocation)
    #expect(deviations.allSatisfy { !$0.message.isEmpty }, sourceLocation: sourceLocation)
    let output = PlaylistSerializer.string(playlist)
    #expect(output == String(decoding: text(canonical), as: UTF8.self), sourceLocation: sourceLocation)
    let reparsed = try PlaylistParser().parse(Array(output.utf8))
    #expect(reparsed == playlist, sourceLocation: sourceLocation)
    #expect(try PlaylistParser().parseTolerating(Array(output.utf8)).deviations.isEmpty, sourceLocation: sourceLocation)
    if clean {
        let issues = PlaylistValidator.validate(reparsed)
        #expect(issues.isEmpty, "\(issues)", sourceLocation: sourceLocation)
    }
    return playlist
}

private let head = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:6"]
private let iv = "0x000102030405060708090A0B0C0D0E0F"

@Suite("Tolerant parse: each tolerated form, before and after")
struct TolerantParseTests {
    @Test("whitespace after a comma in an attribute list")
    func attributeWhitespace() throws {
        try expectTolerated(
            head + [#"#EXT-X-KEY:METHOD=AES-128,URI="key.bin", IV=\#(iv)"#, "#EXTINF:6.000,", "a.ts"],
            strict: .refuses(.malformedAttributeList), rules: [.attributeWhitespace], lines: [4],
            canonical: head + [#"#EXT-X-KEY:METHOD=AES-128,URI="key.bin",IV=\#(iv)"#, "#EXTINF:6.000,", "a.ts"])
        try expectTolerated(
            ["#EXTM3U", "#EXT-X-STREAM-INF:PROGRAM-ID=1, BANDWIDTH=1280000,  CODECS=\"avc1.4d401f,mp4a.40.2\"", "low.m3u8"],
            strict: .refuses(.malformedAttributeList), rules: [.attributeWhitespace], lines: [2],
            canonical: ["#EXTM3U", "#EXT-X-STREAM-INF:PROGRAM-ID=1,BANDWIDTH=1280000,CODECS=\"avc1.4d401f,mp4a.40.2\"", "low.m3u8"],
            clean: false)  // PROGRAM-ID is obsolete: the validator says so, rightly
    }

    @Test("an EXTINF title of whitespace, with a TAB, or with trailing whitespace")
    func extinfTitle() throws {
        let body = ["#EXTINF:6.000,", "a.ts"]
        try expectTolerated(
            head + ["#EXTINF:6.000,\t", "a.ts"], strict: .refuses(.unexpectedWhitespace), rules: [.extinfTitleWhitespace],
            lines: [4], canonical: head + body)
        try expectTolerated(
            head + ["#EXTINF:6.000,\tNews at\tsix", "a.ts"], strict: .refuses(.invalidEncoding), rules: [.extinfTitleWhitespace],
            lines: [4], canonical: head + ["#EXTINF:6.000,News at six", "a.ts"])
        try expectTolerated(
            head + ["#EXTINF:6.000,News  ", "a.ts"], strict: .refuses(.unexpectedWhitespace), rules: [.extinfTitleWhitespace],
            lines: [4], canonical: head + ["#EXTINF:6.000,News", "a.ts"])
    }

    @Test("leading or trailing whitespace on other lines")
    func lineWhitespace() throws {
        try expectTolerated(
            head + ["#EXTINF:6.000,", "a.ts  ", "  #EXTINF:6.000,", "b.ts"], strict: .refuses(.unexpectedWhitespace),
            rules: [.lineWhitespace, .lineWhitespace], lines: [5, 6],
            canonical: head + ["#EXTINF:6.000,", "a.ts", "#EXTINF:6.000,", "b.ts"])
    }

    @Test("playlist-level tags after a segment tag")
    func lateHeaderTags() throws {
        try expectTolerated(
            ["#EXTM3U", "#EXT-X-VERSION:3", "#EXTINF:6.000,", "a.ts", "#EXT-X-TARGETDURATION:6", "#EXTINF:6.000,", "b.ts"],
            strict: .refuses(.misplacedTag), rules: [.lateHeaderTag], lines: [5],
            canonical: head + ["#EXTINF:6.000,", "a.ts", "#EXTINF:6.000,", "b.ts"])
        try expectTolerated(
            head + [
                "#EXTINF:6.000,", "a.ts", "#EXT-X-PLAYLIST-TYPE:EVENT", "#EXTINF:6.000,", "b.ts",
                "#EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=36.0",
            ],
            strict: .refuses(.misplacedTag), rules: [.lateHeaderTag, .lateHeaderTag], lines: [6, 9],
            canonical: head + [
                "#EXT-X-PLAYLIST-TYPE:EVENT", "#EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=36.0", "#EXTINF:6.000,", "a.ts",
                "#EXTINF:6.000,", "b.ts",
            ], clean: false)  // (SERVER-CONTROL without parts: the validator's business)
    }

    @Test("MEDIA-SEQUENCE and DISCONTINUITY-SEQUENCE after KEY, MAP or PROGRAM-DATE-TIME, before the first URI")
    func lateSequenceTags() throws {
        let date = "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00.000Z"
        try expectTolerated(
            head + [date, "#EXT-X-MEDIA-SEQUENCE:7", "#EXT-X-DISCONTINUITY-SEQUENCE:2", "#EXTINF:6.000,", "a.ts"],
            strict: .refuses(.misplacedTag), rules: [.lateSequenceTag, .lateSequenceTag], lines: [5, 6],
            canonical: head + ["#EXT-X-MEDIA-SEQUENCE:7", "#EXT-X-DISCONTINUITY-SEQUENCE:2", date, "#EXTINF:6.000,", "a.ts"])
        let key = #"#EXT-X-KEY:METHOD=AES-128,URI="k.bin",IV=\#(iv)"#
        try expectTolerated(
            head + [key, "#EXT-X-MEDIA-SEQUENCE:7", "#EXTINF:6.000,", "a.ts"],
            strict: .refuses(.misplacedTag), rules: [.lateSequenceTag], lines: [5],
            canonical: head + ["#EXT-X-MEDIA-SEQUENCE:7", key, "#EXTINF:6.000,", "a.ts"])
    }

    @Test("MEDIA-SEQUENCE after a URI stays refused: it would renumber segments already listed")
    func sequenceAfterURIRefused() {
        let input = text(head + ["#EXTINF:6.000,", "a.ts", "#EXT-X-MEDIA-SEQUENCE:7", "#EXTINF:6.000,", "b.ts"])
        let error = #expect(throws: PlaylistParseError.self) { try PlaylistParser().parseTolerating(input) }
        #expect(error?.code == .misplacedTag && error?.line == 6)
    }

    @Test("a variable reference in an enumerated-string is substituted; in a hexadecimal-sequence it is standard")
    func variables() throws {
        let v8 = ["#EXTM3U", "#EXT-X-VERSION:8", #"#EXT-X-DEFINE:NAME="method",VALUE="AES-128""#, "#EXT-X-TARGETDURATION:6"]
        try expectTolerated(
            v8 + [#"#EXT-X-KEY:METHOD={$method},URI="k.bin",IV=\#(iv)"#, "#EXTINF:6.000,", "a.ts"],
            strict: .refuses(.invalidAttributeValue), rules: [.variableInEnumeratedString], lines: [5],
            canonical: v8 + [#"#EXT-X-KEY:METHOD=AES-128,URI="k.bin",IV=\#(iv)"#, "#EXTINF:6.000,", "a.ts"])
        // §4.3 substitutes in hexadecimal-sequences: the strict parse accepts it and nothing is tolerated.
        let hex = ["#EXTM3U", "#EXT-X-VERSION:8", #"#EXT-X-DEFINE:NAME="iv",VALUE="0x000102030405060708090A0B0C0D0E0F""#,
            "#EXT-X-TARGETDURATION:6", #"#EXT-X-KEY:METHOD=AES-128,URI="k.bin",IV={$iv}"#, "#EXTINF:6.000,", "a.ts"]
        _ = try PlaylistParser().parse(text(hex))
        #expect(try PlaylistParser().parseTolerating(text(hex)).deviations.isEmpty)
        // A reference with no VALUE above cannot be substituted: refused, with its line.
        let undefined = text(head + [#"#EXT-X-KEY:METHOD={$method},URI="k.bin""#, "#EXTINF:6.000,", "a.ts"])
        let error = #expect(throws: PlaylistParseError.self) { try PlaylistParser().parseTolerating(undefined) }
        #expect(error?.code == .invalidAttributeValue && error?.line == 4)
    }

    @Test("lower-case hex digits are upper-cased")
    func lowercaseHex() throws {
        let lower = "0x000102030405060708090a0b0c0d0e0f"
        let input = head + [#"#EXT-X-KEY:METHOD=AES-128,URI="k.bin",IV=\#(lower)"#, "#EXTINF:6.000,", "a.ts"]
        // The strict parse reads it; the validator reports A7 (the rule the deviation stands for).
        let strictIssues = PlaylistValidator.validate(try PlaylistParser().parse(text(input + ["#EXT-X-ENDLIST"])))
        #expect(strictIssues.map(\.rule) == ["A7"])
        try expectTolerated(
            input, strict: .accepts, rules: [.lowercaseHex], lines: [4],
            canonical: head + [#"#EXT-X-KEY:METHOD=AES-128,URI="k.bin",IV=\#(iv)"#, "#EXTINF:6.000,", "a.ts"])
    }

    @Test("genuinely broken input stays refused, with its line")
    func brokenStaysRefused() {
        let cases: [([String], PlaylistParseError.Code, Int)] = [
            (head + ["#EXTINF:6.000,", "#EXTINF:6.000,", "b.ts"], .missingURI, 4),
            (head + ["#EXTINF:6.000,"], .missingURI, 4),
            (head + ["#EXTINF:six,", "a.ts"], .invalidTagValue, 4),
            (head + ["a.ts"], .missingEXTINF, 4),
            (["#EXTM3U", "#EXT-X-STREAM-INF:BANDWIDTH=1000", "#EXT-X-STREAM-INF:BANDWIDTH=2000", "b.m3u8"], .missingVariantURI, 2),
            (["#EXTM3U", "#EXT-X-STREAM-INF:BANDWIDTH=abc", "a.m3u8"], .invalidAttributeValue, 2),
            (["#EXTM3U", "#EXTINF:6.000,", "a.ts"], .missingTargetDuration, 1),
            (head + ["#EXT-X-KEY:METHOD=AES-128,URI=\"k\",, IV=0x00", "#EXTINF:6.000,", "a.ts"], .malformedAttributeList, 4),
            (head + ["#EXTINF:6.000,", "a\tb.ts"], .invalidEncoding, 5),
        ]
        for (lines, code, line) in cases {
            let error = #expect(throws: PlaylistParseError.self, "\(lines)") { try PlaylistParser().parseTolerating(text(lines)) }
            #expect(error?.code == code && error?.line == line, "\(String(describing: error)) for \(lines)")
        }
    }

    @Test("every rule has a stable, prefixed kebab-case id")
    func ruleIDs() {
        for rule in IngestDeviation.Rule.allCases {
            #expect(rule.rawValue.hasPrefix("tolerate."))
            #expect(rule.rawValue.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 || $0 == 46 })
        }
        #expect(Set(IngestDeviation.Rule.allCases.map(\.rawValue)).count == IngestDeviation.Rule.allCases.count)
    }

    @Test("a canonical playlist parses the same both ways, with no deviation")
    func canonicalUnchanged() throws {
        let input = text(head + ["#EXT-X-CUE-OUT:12.000", "#EXTINF:6.000,Title", "a.ts", "#EXT-X-CUE-OUT-CONT:6.000/12.000",
            "#EXTINF:6.000,", "b.ts", "#EXT-X-CUE-IN", "#EXTINF:6.000,", "c.ts"])
        let (tolerated, deviations) = try PlaylistParser().parseTolerating(input)
        #expect(deviations.isEmpty)
        #expect(tolerated == (try PlaylistParser().parse(input)))
    }
}
