import Foundation
import Testing

/// Runs the built `headwater` binary as a user would: arguments, standard input, exit status,
/// standard output and standard error.
struct HeadwaterProcess {
    static let executable: URL = {
        // The test bundle sits next to the products in .build/<triple>/<configuration>/.
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("headwater").path),
            directory.path != "/"
        {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("headwater")
    }()

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("HeadwaterHLSTests/Fixtures")

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String], stdin: String? = nil) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let error = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: output, as: UTF8.self),
            stderr: String(decoding: error, as: UTF8.self))
    }
}

@Suite("headwater lint")
struct LintCommandTests {
    @Test("a clean vendor playlist passes with exit 0 and no output")
    func clean() throws {
        let file = HeadwaterProcess.fixtures.appendingPathComponent("vendor/aws-scte35-enhanced.m3u8").path
        let result = try HeadwaterProcess.run(["lint", file])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.isEmpty)
    }

    @Test("every invalid fixture fails with FILE:LINE: code: message and exit 1")
    func invalidFixtures() throws {
        let folder = HeadwaterProcess.fixtures.appendingPathComponent("invalid")
        let manifest = try String(contentsOf: folder.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8)
        for row in manifest.split(separator: "\n").dropFirst() {
            let fields = row.split(separator: "\t").map(String.init)
            let path = folder.appendingPathComponent(fields[0]).path
            let result = try HeadwaterProcess.run(["lint", path])
            #expect(result.status == 1, "\(fields[0])")
            #expect(result.stdout.hasPrefix("\(path):\(fields[2]): \(fields[1]): "), "\(fields[0]): \(result.stdout)")
            #expect(result.stdout.split(separator: "\n").count == 1, "one line per problem")
        }
    }

    @Test("rule violations are reported with the rule id and the line; warnings alone exit 0 unless --strict")
    func ruleViolations() throws {
        let errors = """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:6
            #EXTINF:6.000,
            a.ts
            #EXTINF:7.500,
            b.ts

            """
        let result = try HeadwaterProcess.run(["lint", "-"], stdin: errors)
        #expect(result.status == 1)
        #expect(result.stdout.contains("<stdin>:6: B1: "), "\(result.stdout)")

        let warningsOnly = """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:6
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXTINF:6.000,
            a.ts

            """
        let relaxed = try HeadwaterProcess.run(["lint", "-"], stdin: warningsOnly)
        #expect(relaxed.status == 0 && relaxed.stdout.contains("warning"), "\(relaxed.stdout)")
        let strict = try HeadwaterProcess.run(["lint", "--strict", "-"], stdin: warningsOnly)
        #expect(strict.status == 1)
    }

    @Test("--previous checks the live-update rules between two versions")
    func previous() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-lint-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let old = directory.appendingPathComponent("old.m3u8")
        let new = directory.appendingPathComponent("new.m3u8")
        try "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:10\n#EXTINF:6.000,\na.ts\n#EXTINF:6.000,\nb.ts\n"
            .write(to: old, atomically: true, encoding: .utf8)
        // The segment that keeps MSN 11 changed its URI: a C1 violation.
        try "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:11\n#EXTINF:6.000,\nX.ts\n#EXTINF:6.000,\nc.ts\n"
            .write(to: new, atomically: true, encoding: .utf8)
        let result = try HeadwaterProcess.run(["lint", "--previous", old.path, new.path])
        #expect(result.status == 1)
        #expect(result.stdout.contains(": C1: "), "\(result.stdout)")
    }
}

@Suite("headwater fmt")
struct FormatCommandTests {
    @Test("fmt of ffmpeg output is canonical and idempotent")
    func idempotent() throws {
        let file = HeadwaterProcess.fixtures.appendingPathComponent("wild/ffmpeg-ts-program-date-time.m3u8").path
        let once = try HeadwaterProcess.run(["fmt", file])
        #expect(once.status == 0, "\(once.stderr)")
        #expect(once.stdout.contains("#EXT-X-PROGRAM-DATE-TIME:"))
        let twice = try HeadwaterProcess.run(["fmt", "-"], stdin: once.stdout)
        #expect(twice.stdout == once.stdout)
    }

    @Test("a malformed playlist gives one line on standard error and exit 1")
    func malformed() throws {
        let result = try HeadwaterProcess.run(["fmt", "-"], stdin: "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:abc,\na.ts\n")
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "headwater: <stdin>:3: invalid-tag-value: #EXTINF duration must be a non-negative decimal number of seconds, got \"abc,\"\n")
    }
}

@Suite("headwater scte35")
struct SCTE35CommandTests {
    static let spliceInsert = "/DAvAAAAAAAA///wFAVIAACPf+/+c2nALv4AUsz1AAAAAAAKAAhDVUVJAAABNWLbowo="
    static let spliceInsertHex =
        "0xFC302F000000000000FFFFF014054800008F7FEFFE7369C02EFE0052CCF500000000000A0008435545490000013562DBA30A"

    @Test("decode prints the standard's field names; encode of that JSON gives back the same bytes")
    func roundTrip() throws {
        let decoded = try HeadwaterProcess.run(["scte35", "decode", Self.spliceInsert])
        #expect(decoded.status == 0, "\(decoded.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(decoded.stdout.utf8)) as? [String: Any])
        let command = try #require(json["splice_command"] as? [String: Any])
        #expect(command["splice_event_id"] as? Int == 0x4800_008F)
        #expect((command["break_duration"] as? [String: Any])?["duration"] as? Int == 5_426_421)
        let encoded = try HeadwaterProcess.run(["scte35", "encode", "-"], stdin: decoded.stdout)
        #expect(encoded.status == 0, "\(encoded.stderr)")
        #expect(encoded.stdout.contains(Self.spliceInsertHex))
        #expect(encoded.stdout.contains(Self.spliceInsert))
    }

    @Test("bad input exits 1 with a one-line reason", arguments: ["0xFC30", "not base64 !", "0xFD302F00"])
    func badInput(_ input: String) throws {
        let result = try HeadwaterProcess.run(["scte35", "decode", input])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("headwater: "))
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }
}
