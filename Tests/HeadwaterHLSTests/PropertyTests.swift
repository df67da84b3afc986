import Foundation
import HeadwaterHLS
import HeadwaterTesting
import Testing

/// The base seed of the property tests: `HEADWATER_SEED` when set (to replay a failure), else a
/// fresh one per run. Every failure message names the seed of the failing case.
enum PropertySeed {
    static let base: UInt64 = {
        if let text = ProcessInfo.processInfo.environment["HEADWATER_SEED"], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 0...UInt64(UInt32.max))
    }()

    /// The seeds of `count` cases.
    static func seeds(_ count: Int) -> [UInt64] { (0..<UInt64(count)).map { base &+ $0 } }
}

@Suite("Generated playlists round-trip")
struct PropertyTests {
    @Test("parse(serialize(p)) == p for 500 generated media playlists")
    func mediaRoundTrip() throws {
        for seed in PropertySeed.seeds(500) {
            var generator = PlaylistGenerator(seed: seed)
            let playlist = generator.mediaPlaylist()
            let text = PlaylistSerializer.serialize(playlist)
            let parsed: Playlist
            do {
                parsed = try PlaylistParser().parse(text)
            } catch {
                Issue.record("seed \(seed) (HEADWATER_SEED=\(seed)): \(error)\n\(String(decoding: text, as: UTF8.self))")
                continue
            }
            #expect(
                parsed == .media(playlist),
                "seed \(seed) (HEADWATER_SEED=\(seed)): \(PlaylistDiff.describe(expected: .media(playlist), actual: parsed))\n\(String(decoding: text, as: UTF8.self))"
            )
            #expect(PlaylistSerializer.serialize(parsed) == text, "seed \(seed): serialize is not a fixed point")
        }
    }

    @Test("parse(serialize(p)) == p for 200 generated multivariant playlists")
    func multivariantRoundTrip() throws {
        for seed in PropertySeed.seeds(200) {
            var generator = PlaylistGenerator(seed: seed)
            let playlist = generator.multivariantPlaylist()
            let text = PlaylistSerializer.serialize(playlist)
            let parsed: Playlist
            do {
                parsed = try PlaylistParser().parse(text)
            } catch {
                Issue.record("seed \(seed) (HEADWATER_SEED=\(seed)): \(error)\n\(String(decoding: text, as: UTF8.self))")
                continue
            }
            #expect(
                parsed == .multivariant(playlist),
                "seed \(seed) (HEADWATER_SEED=\(seed)): \(PlaylistDiff.describe(expected: .multivariant(playlist), actual: parsed))\n\(String(decoding: text, as: UTF8.self))"
            )
            #expect(PlaylistSerializer.serialize(parsed) == text, "seed \(seed): serialize is not a fixed point")
        }
    }

    @Test("the serialized text obeys the line rules of §4.1 (A1-A3)")
    func serializedTextIsWellFormed() {
        for seed in PropertySeed.seeds(200) {
            var generator = PlaylistGenerator(seed: seed)
            let text = String(
                decoding: seed % 2 == 0
                    ? PlaylistSerializer.serialize(generator.mediaPlaylist())
                    : PlaylistSerializer.serialize(generator.multivariantPlaylist()),
                as: UTF8.self)
            #expect(text.hasPrefix("#EXTM3U\n"), "seed \(seed)")
            #expect(text.hasSuffix("\n"), "seed \(seed)")
            for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
                #expect(!line.isEmpty, "seed \(seed): blank line")
                #expect(!line.contains("\r"), "seed \(seed): CR in \(line.debugDescription)")
                #expect(line.first != " " && line.last != " ", "seed \(seed): whitespace around \(line.debugDescription)")
            }
        }
    }

    /// Guards the generator itself: a property test over values that never contain a tag proves nothing.
    @Test("the generator covers every modelled tag")
    func generatorCoversEveryTag() {
        var seen: Set<String> = []
        for seed in PropertySeed.seeds(300) {
            var generator = PlaylistGenerator(seed: seed)
            for text in [
                PlaylistSerializer.string(generator.mediaPlaylist()), PlaylistSerializer.string(generator.multivariantPlaylist()),
            ] {
                for line in text.split(separator: "\n") where line.hasPrefix("#EXT") {
                    seen.insert(String(line.dropFirst().prefix { $0 != ":" }))
                }
            }
        }
        let missing = PlaylistGenerator.modelledTagNames.subtracting(seen)
        #expect(missing.isEmpty, "never generated: \(missing.sorted())")
    }
}
