import Foundation
import HeadwaterHLS
import Testing

/// One row of `thirdparty/MANIFEST.tsv`: `file<TAB>label<TAB>expect<TAB>output-issues<TAB>reason`.
struct ThirdPartyFixture: Sendable, CustomTestStringConvertible {
    enum Label: String, Sendable { case tolerated, valid, invalid }

    let fixture: Fixture
    let label: Label?
    /// tolerated: the rule ids parseTolerating reports; invalid: `code@line`; valid: empty.
    let expect: [String]
    /// Validator rule ids the canonical re-serialization may report because of the content itself.
    let outputIssues: Set<String>
    let reason: String
    /// The row as written, when it does not parse (the test then fails on it rather than skip it).
    let malformedRow: String?

    var testDescription: String { "\(fixture.name) (\(label?.rawValue ?? "malformed row"))" }

    static let folder = "thirdparty"

    static func all() -> [ThirdPartyFixture] {
        let url = Fixture.root.appendingPathComponent(folder).appendingPathComponent("MANIFEST.tsv")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return text.split(whereSeparator: \.isNewline).compactMap { row -> ThirdPartyFixture? in
            if row.hasPrefix("#") || row.allSatisfy(\.isWhitespace) { return nil }
            let fields = row.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            func list(_ field: String) -> [String] { field == "-" ? [] : field.split(separator: ",").map(String.init) }
            guard fields.count == 5, let label = Label(rawValue: fields[1]) else {
                return ThirdPartyFixture(
                    fixture: Fixture(folder: folder, name: fields[0]), label: nil, expect: [], outputIssues: [], reason: "",
                    malformedRow: String(row))
            }
            return ThirdPartyFixture(
                fixture: Fixture(folder: folder, name: fields[0]), label: label, expect: list(fields[2]),
                outputIssues: Set(list(fields[3])), reason: fields[4], malformedRow: nil)
        }
    }
}

/// Playlists from the public test suites of other HLS libraries (`Fixtures/thirdparty/`, sources and
/// licences in its `LICENSES.md`): the tolerated ones are refused by the strict parse (or, for
/// lower-case hex, flagged by the validator), read by `parseTolerating` with exactly the deviations
/// the manifest names, and come out canonical; the invalid ones are refused by both with the
/// manifest's code and line.
@Suite("Third-party playlist corpus")
struct ThirdPartyCorpusTests {
    @Test("the manifest labels every playlist of the folder, and only those")
    func manifestCoversTheFolder() {
        let listed = ThirdPartyFixture.all().map(\.fixture.name).sorted()
        let files = Fixture.all(ThirdPartyFixture.folder).map(\.name)
        #expect(!files.isEmpty)
        #expect(listed == files)
        let labels = Dictionary(grouping: ThirdPartyFixture.all(), by: { $0.label?.rawValue ?? "?" }).mapValues(\.count)
        #expect(labels["tolerated", default: 0] >= 14 && labels["invalid", default: 0] >= 10, "\(labels)")
    }

    @Test("each playlist is read as its label says", arguments: ThirdPartyFixture.all())
    func readAsLabelled(_ entry: ThirdPartyFixture) throws {
        let label = try #require(entry.label, "malformed manifest row: \(entry.malformedRow ?? "")")
        let bytes = try entry.fixture.bytes()
        switch label {
        case .invalid:
            let expected = try #require(entry.expect.first, "an invalid row needs code@line")
            for (name, parse) in [
                ("strict", { () throws(PlaylistParseError) in _ = try PlaylistParser().parse(bytes) }),
                ("tolerant", { () throws(PlaylistParseError) in _ = try PlaylistParser().parseTolerating(bytes) }),
            ] {
                do throws(PlaylistParseError) {
                    try parse()
                    Issue.record("\(name) parse accepted \(entry.fixture.name)")
                } catch {
                    #expect("\(error.code)@\(error.line)" == expected, "\(name): \(error)")
                }
            }
        case .tolerated, .valid:
            let strict = Result { () throws(PlaylistParseError) in try PlaylistParser().parse(bytes) }
            if label == .tolerated, case .success(let playlist) = strict {
                // Some deviations the strict parse reads as written (lower-case hex): the validator
                // then flags what the tolerant parse normalises.
                let flagged = PlaylistValidator.validate(playlist).filter { !entry.outputIssues.contains($0.rule) }
                #expect(!flagged.isEmpty, "the strict parse accepts \(entry.fixture.name) and finds nothing: not a deviation")
            } else if label == .valid {
                _ = try strict.get()
            }
            let (playlist, deviations) = try PlaylistParser().parseTolerating(bytes)
            #expect(Set(deviations.map(\.rule.rawValue)) == Set(entry.expect), "\(deviations)")
            try expectCanonical(playlist, entry)
        }
    }

    /// What Headwater would serve: the strict parse reads it with nothing left to tolerate, it is
    /// stable under a second round, and the validator finds nothing beyond the content's own issues.
    private func expectCanonical(_ playlist: Playlist, _ entry: ThirdPartyFixture) throws {
        let served = PlaylistSerializer.serialize(playlist)
        let reread = try PlaylistParser().parse(served)
        #expect(try PlaylistParser().parseTolerating(served).deviations.isEmpty)
        #expect(PlaylistSerializer.serialize(reread) == served, "serialization is not stable")
        let issues = PlaylistValidator.validate(reread)
        let unexpected = issues.filter { !entry.outputIssues.contains($0.rule) }
        #expect(unexpected.isEmpty, "\(entry.fixture.name): \(unexpected)")
        // Each allowed issue is one the content really has, so the manifest cannot hide a regression.
        #expect(Set(issues.map(\.rule)) == entry.outputIssues, "\(entry.fixture.name): \(issues)")
    }
}
