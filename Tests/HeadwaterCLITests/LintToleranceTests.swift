import Foundation
import Testing

/// `headwater lint` and `fmt` on what real packagers send (issue 13): tolerated deviations are
/// warnings, violations errors; `fmt` never changes a playlist's meaning.
@Suite("headwater lint: tolerated deviations, and fmt's meaning")
struct LintToleranceTests {
    /// A playlist with two tolerated forms (a TAB title, TARGETDURATION after a segment) and nothing else wrong.
    private let tolerated = """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXTINF:6.000,\t
        a.ts
        #EXT-X-TARGETDURATION:6
        #EXTINF:6.000,
        b.ts
        #EXT-X-ENDLIST

        """

    @Test("tolerated deviations are warnings with their rule id, in line order, and exit 0")
    func warnings() throws {
        let result = try HeadwaterProcess.run(["lint", "-"], stdin: tolerated)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(result.stdout)")
        #expect(lines.first?.hasPrefix("<stdin>:3: tolerate.extinf-title-whitespace: warning: ") == true, "\(result.stdout)")
        #expect(lines.last?.hasPrefix("<stdin>:5: tolerate.late-header-tag: warning: ") == true, "\(result.stdout)")
    }

    @Test("--strict makes the warnings errors")
    func strict() throws {
        let result = try HeadwaterProcess.run(["lint", "--strict", "-"], stdin: tolerated)
        #expect(result.status == 1, "\(result.stdout)")
        #expect(result.stdout.contains("tolerate.extinf-title-whitespace"))
    }

    @Test("what the tolerant parse refuses is still an error with its line")
    func stillRefused() throws {
        let result = try HeadwaterProcess.run(
            ["lint", "-"], stdin: "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.000,\na.ts\n#EXT-X-MEDIA-SEQUENCE:3\n#EXTINF:6.000,\nb.ts\n")
        #expect(result.status == 1)
        #expect(result.stdout.hasPrefix("<stdin>:5: misplaced-tag: "), "\(result.stdout)")
    }

    @Test("a missing EXT-X-MAP inferred from .mp4 is a warning")
    func mapFromExtension() throws {
        let result = try HeadwaterProcess.run(
            ["lint", "-"], stdin: "#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.000,\na.mp4\n#EXT-X-ENDLIST\n")
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains(": B9: warning: "), "\(result.stdout)")
    }

    @Test("a variable used before its EXT-X-DEFINE, or never defined, is an error")
    func variables() throws {
        let early = """
            #EXTM3U
            #EXT-X-VERSION:8
            #EXT-X-TARGETDURATION:6
            #EXTINF:6.000,
            {$host}/a.ts
            #EXT-X-DEFINE:NAME="host",VALUE="https://cdn.example.com"
            #EXTINF:6.000,
            {$host}/b.ts
            #EXTINF:6.000,
            {$nowhere}/c.ts

            """
        let result = try HeadwaterProcess.run(["lint", "-"], stdin: early)
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(result.stdout)")
        #expect(lines.first?.hasPrefix("<stdin>:5: A13: {$host} is used before its EXT-X-DEFINE on line 6") == true, "\(result.stdout)")
        #expect(lines.last?.hasPrefix("<stdin>:10: A13: {$nowhere} is never defined") == true, "\(result.stdout)")
    }

    @Test("fmt refuses to move EXT-X-DEFINE above a use that preceded it")
    func formatKeepsDefineOrder() throws {
        let early = "#EXTM3U\n#EXT-X-VERSION:8\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.000,\n{$host}/a.ts\n#EXT-X-DEFINE:NAME=\"host\",VALUE=\"h\"\n"
        let result = try HeadwaterProcess.run(["fmt", "-"], stdin: early)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("headwater: <stdin>:5: A13: {$host} is used before its EXT-X-DEFINE on line 6"), "\(result.stderr)")
        // Defined first: fmt writes it, idempotently.
        let ordered = "#EXTM3U\n#EXT-X-VERSION:8\n#EXT-X-DEFINE:NAME=\"host\",VALUE=\"h\"\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.000,\n{$host}/a.ts\n"
        let formatted = try HeadwaterProcess.run(["fmt", "-"], stdin: ordered)
        #expect(formatted.status == 0 && formatted.stdout == ordered, "\(formatted.stdout)\(formatted.stderr)")
    }

    @Test("fmt keeps PROGRAM-DATE-TIME precision: microseconds in, microseconds out; milliseconds stay milliseconds")
    func formatKeepsDatePrecision() throws {
        let micro = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00.123456+01:00\n#EXTINF:6.000,\na.ts\n"
        let result = try HeadwaterProcess.run(["fmt", "-"], stdin: micro)
        #expect(result.status == 0 && result.stdout == micro, "\(result.stdout)\(result.stderr)")
        let milli = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00.123Z\n#EXTINF:6.000,\na.ts\n"
        #expect(try HeadwaterProcess.run(["fmt", "-"], stdin: milli).stdout == milli)
    }
}
