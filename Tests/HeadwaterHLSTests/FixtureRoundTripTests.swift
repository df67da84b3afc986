import Foundation
import HeadwaterHLS
import HeadwaterTesting
import Testing

/// A playlist file under `Fixtures/<folder>/`, found at run time so new fixtures are picked up
/// without touching the tests.
struct Fixture: Sendable, CustomTestStringConvertible {
    let folder: String
    /// The file name, e.g. `ffmpeg-fmp4.m3u8`.
    let name: String

    var url: URL { Self.root.appendingPathComponent(folder).appendingPathComponent(name) }
    var testDescription: String { "\(folder)/\(name)" }
    /// The name without its extension.
    var baseName: String { (name as NSString).deletingPathExtension }

    func bytes() throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

    /// `Tests/HeadwaterHLSTests/Fixtures`, located from this source file (not `Bundle.module`).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// The folders whose playlists are all valid.
    static let validFolders = ["wild", "spec", "vendor", "ll-hls", "canonical"]

    /// Every `.m3u8`/`.m3u` file in `folders`, sorted.
    static func all(_ folders: [String]) -> [Fixture] {
        folders.flatMap { folder -> [Fixture] in
            let directory = root.appendingPathComponent(folder)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.filter { $0.hasSuffix(".m3u8") || $0.hasSuffix(".m3u") }.sorted().map {
                Fixture(folder: folder, name: $0)
            }
        }
    }

    static func all(_ folder: String) -> [Fixture] { all([folder]) }

    /// Every file of `invalid/` but the manifest, whatever its extension (a bad playlist may not
    /// even be text).
    static func invalidFiles() -> [Fixture] {
        let directory = root.appendingPathComponent("invalid")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0 != "MANIFEST.tsv" && !$0.hasPrefix(".") }.sorted().map { Fixture(folder: "invalid", name: $0) }
    }
}

/// One line of `invalid/MANIFEST.tsv`: `file<TAB>code<TAB>line`.
struct InvalidFixture: Sendable, CustomTestStringConvertible {
    let fixture: Fixture
    let code: String
    let line: Int

    var testDescription: String { "\(fixture.testDescription) → \(code) at line \(line)" }

    static let manifestURL = Fixture.root.appendingPathComponent("invalid").appendingPathComponent("MANIFEST.tsv")

    /// The manifest's rows; a malformed row becomes a case with code `<malformed manifest row …>` so
    /// that it fails visibly instead of being skipped.
    static func all() -> [InvalidFixture] {
        guard let text = try? String(contentsOf: manifestURL, encoding: .utf8) else { return [] }
        return text.split(whereSeparator: \.isNewline).compactMap { row -> InvalidFixture? in
            let trimmed = row.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { return nil }
            let fields = row.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            if fields == ["file", "code", "line"] { return nil }  // the header row
            guard fields.count >= 3, let line = Int(fields[2].trimmingCharacters(in: .whitespaces)) else {
                return InvalidFixture(fixture: Fixture(folder: "invalid", name: fields[0]), code: "<malformed manifest row: \(row)>", line: 0)
            }
            return InvalidFixture(fixture: Fixture(folder: "invalid", name: fields[0]), code: fields[1], line: line)
        }
    }
}

/// One line of `tolerated/MANIFEST.tsv`: `file<TAB>rule<TAB>line<TAB>strict-code`: a form the strict
/// parse refuses with `strict-code` at `line` and the tolerant parse reads, reporting `rule` there.
struct ToleratedFixture: Sendable, CustomTestStringConvertible {
    let fixture: Fixture
    let rule: String
    let line: Int
    let strictCode: String

    var testDescription: String { "\(fixture.testDescription) → \(rule) at line \(line)" }

    static func all() -> [ToleratedFixture] {
        let url = Fixture.root.appendingPathComponent("tolerated").appendingPathComponent("MANIFEST.tsv")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return text.split(whereSeparator: \.isNewline).dropFirst().map { row in
            let fields = row.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 4, let line = Int(fields[2]) else {
                return ToleratedFixture(fixture: Fixture(folder: "tolerated", name: fields[0]), rule: "<malformed row: \(row)>", line: 0, strictCode: "")
            }
            return ToleratedFixture(fixture: Fixture(folder: "tolerated", name: fields[0]), rule: fields[1], line: line, strictCode: fields[3])
        }
    }
}

@Suite("Fixture round trips")
struct FixtureRoundTripTests {
    @Test("every fixture folder has playlists", arguments: Fixture.validFolders + ["invalid"])
    func folderIsNotEmpty(_ folder: String) {
        let files = folder == "invalid" ? Fixture.invalidFiles() : Fixture.all(folder)
        #expect(!files.isEmpty, "no playlists in Fixtures/\(folder)/")
    }

    @Test("parses, and serialize → parse gives an equal value", arguments: Fixture.all(Fixture.validFolders))
    func serializeThenParseIsIdentity(_ fixture: Fixture) throws {
        let parsed = try PlaylistParser().parse(fixture.bytes())
        let text = PlaylistSerializer.serialize(parsed)
        let reparsed = try PlaylistParser().parse(text)
        #expect(reparsed == parsed, "\(PlaylistDiff.describe(expected: parsed, actual: reparsed))")
    }

    @Test("fmt is idempotent", arguments: Fixture.all(Fixture.validFolders))
    func formatIsIdempotent(_ fixture: Fixture) throws {
        let once = PlaylistSerializer.serialize(try PlaylistParser().parse(fixture.bytes()))
        let twice = PlaylistSerializer.serialize(try PlaylistParser().parse(once))
        let (a, b) = (String(decoding: once, as: UTF8.self), String(decoding: twice, as: UTF8.self))
        #expect(twice == once, "\(PlaylistDiff.firstDifference(expected: a, actual: b) ?? "")")
    }

    @Test("a canonical playlist re-serializes byte for byte", arguments: Fixture.all("canonical"))
    func canonicalIsByteIdentical(_ fixture: Fixture) throws {
        let bytes = try fixture.bytes()
        let written = PlaylistSerializer.serialize(try PlaylistParser().parse(bytes))
        let (expected, actual) = (String(decoding: bytes, as: UTF8.self), String(decoding: written, as: UTF8.self))
        #expect(written == bytes, "\(PlaylistDiff.firstDifference(expected: expected, actual: actual) ?? "")")
    }

    @Test("an invalid playlist fails with the manifest's code and line", arguments: InvalidFixture.all())
    func invalidFailsAsListed(_ invalid: InvalidFixture) throws {
        let bytes = try invalid.fixture.bytes()
        let error = #expect(throws: PlaylistParseError.self) { try PlaylistParser().parse(bytes) }
        #expect(error?.code.name == invalid.code, "\(error.map(String.init(describing:)) ?? "")")
        #expect(error?.line == invalid.line, "\(error.map(String.init(describing:)) ?? "")")
    }

    @Test(
        "a tolerated playlist: the strict parse refuses it, the tolerant parse reads it and writes a canonical playlist the validator passes",
        arguments: ToleratedFixture.all())
    func toleratedIsReadAndCanonical(_ tolerated: ToleratedFixture) throws {
        let bytes = try tolerated.fixture.bytes()
        let error = #expect(throws: PlaylistParseError.self) { try PlaylistParser().parse(bytes) }
        #expect(error?.code.name == tolerated.strictCode && error?.line == tolerated.line, "\(String(describing: error))")
        let (playlist, deviations) = try PlaylistParser().parseTolerating(bytes)
        #expect(deviations.map { "\($0.rule.rawValue)@\($0.line)" } == ["\(tolerated.rule)@\(tolerated.line)"], "\(deviations)")
        let canonical = try PlaylistParser().parse(PlaylistSerializer.serialize(playlist))
        #expect(canonical == playlist)
        #expect(PlaylistValidator.validate(canonical).isEmpty, "\(PlaylistValidator.validate(canonical))")
    }

    @Test("tolerated/ holds exactly the files its MANIFEST.tsv lists")
    func toleratedManifestMatchesFolder() {
        #expect(Set(ToleratedFixture.all().map(\.fixture.name)) == Set(Fixture.all("tolerated").map(\.name)))
        #expect(ToleratedFixture.all().count >= 6)
    }

    @Test("every file in invalid/ is listed in MANIFEST.tsv, and every listed file exists")
    func manifestMatchesFolder() {
        let listed = Set(InvalidFixture.all().map(\.fixture.name))
        let present = Set(Fixture.invalidFiles().map(\.name))
        #expect(present.subtracting(listed).sorted() == [], "files missing from MANIFEST.tsv")
        #expect(listed.subtracting(present).sorted() == [], "manifest rows without a file")
    }

    @Test("every code named in MANIFEST.tsv is a PlaylistParseError code")
    func manifestCodesExist() {
        let codes: [PlaylistParseError.Code] = [
            .missingHeader, .invalidEncoding, .unexpectedWhitespace, .malformedAttributeList,
            .duplicateAttribute, .invalidAttributeValue, .missingAttribute, .invalidTagValue, .duplicateTag,
            .mixedPlaylistKinds, .missingTargetDuration, .missingURI, .missingEXTINF, .missingVariantURI, .misplacedTag,
            .limitExceeded,
        ]
        let known = Set(codes.map(\.name))
        let unknown = InvalidFixture.all().filter { !known.contains($0.code) }.map(\.testDescription)
        #expect(unknown == [])
    }
}
