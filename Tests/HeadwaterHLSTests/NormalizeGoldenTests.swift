import Foundation
import HeadwaterHLS
import HeadwaterTesting
import Testing

/// Normalize goldens (gohlslib's input/output pairs, STYLE §8.4): the canonical serialization of each
/// `wild/` and `vendor/` fixture must equal `Fixtures/normalized/<folder>/<name>.m3u8`. Run with
/// `UPDATE_GOLDENS=1` to rewrite the goldens, then review the diff.
@Suite("Normalize goldens")
struct NormalizeGoldenTests {
    static let folders = ["wild", "vendor"]
    static let updating = ProcessInfo.processInfo.environment["UPDATE_GOLDENS"] == "1"

    static func goldenURL(for fixture: Fixture) -> URL {
        Fixture.root.appendingPathComponent("normalized").appendingPathComponent(fixture.folder)
            .appendingPathComponent(fixture.baseName + ".m3u8")
    }

    @Test("the canonical form equals the committed golden", arguments: Fixture.all(folders))
    func matchesGolden(_ fixture: Fixture) throws {
        let canonical = PlaylistSerializer.serialize(try PlaylistParser().parse(fixture.bytes()))
        let url = Self.goldenURL(for: fixture)
        if Self.updating {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(canonical).write(to: url)
            return
        }
        guard let golden = try? [UInt8](Data(contentsOf: url)) else {
            Issue.record("no golden at \(url.path); run UPDATE_GOLDENS=1 swift test --filter NormalizeGoldenTests and review it")
            return
        }
        let (expected, actual) = (String(decoding: golden, as: UTF8.self), String(decoding: canonical, as: UTF8.self))
        #expect(canonical == golden, "\(PlaylistDiff.firstDifference(expected: expected, actual: actual) ?? "")")
    }

    @Test("every golden is itself canonical (a fixed point of fmt)", arguments: Fixture.all(folders.map { "normalized/\($0)" }))
    func goldenIsCanonical(_ golden: Fixture) throws {
        let bytes = try golden.bytes()
        let written = PlaylistSerializer.serialize(try PlaylistParser().parse(bytes))
        let (expected, actual) = (String(decoding: bytes, as: UTF8.self), String(decoding: written, as: UTF8.self))
        #expect(written == bytes, "\(PlaylistDiff.firstDifference(expected: expected, actual: actual) ?? "")")
    }

    @Test("every golden has a source fixture")
    func noOrphanGoldens() {
        let sources = Set(Fixture.all(Self.folders).map { "normalized/\($0.folder)/\($0.baseName).m3u8" })
        let goldens = Fixture.all(Self.folders.map { "normalized/\($0)" }).map(\.testDescription)
        #expect(goldens.filter { !sources.contains($0) } == [])
    }
}
