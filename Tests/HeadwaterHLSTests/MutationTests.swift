import HeadwaterHLS
import HeadwaterTesting
import Testing

/// Seeded random byte mutations of every fixture (STYLE §8.4): the parser must throw a
/// ``PlaylistParseError`` or succeed — never trap — and whatever it accepts must serialize to text
/// that parses back to an equal value.
@Suite("Mutated fixtures")
struct MutationTests {
    /// Mutations per fixture folder, shared among its files.
    static let mutationsPerFolder = 2_000

    static let folders = Fixture.validFolders + ["invalid"]

    static func fixtures() -> [Fixture] {
        Fixture.all(folders.filter { $0 != "invalid" }) + Fixture.invalidFiles() + Fixture.all("tolerated")
    }

    static func mutationCount(for fixture: Fixture) -> Int {
        let files = fixture.folder == "invalid" ? Fixture.invalidFiles().count : Fixture.all(fixture.folder).count
        return (mutationsPerFolder + files - 1) / max(files, 1)
    }

    @Test("random byte mutations", .cpuBound, arguments: fixtures())
    func randomMutations(_ fixture: Fixture) throws {
        let original = try fixture.bytes()
        let fixtureSeed = PropertySeed.base &+ Self.fnv1a(fixture.testDescription)
        for index in 0..<Self.mutationCount(for: fixture) {
            let seed = fixtureSeed &+ UInt64(index)
            var mutator = Mutator(seed: seed)
            let mutated = mutator.mutate(original)
            Self.check(mutated, "\(fixture.testDescription), mutation seed \(seed) (HEADWATER_SEED=\(PropertySeed.base))")
            Self.checkTolerant(mutated, "\(fixture.testDescription), mutation seed \(seed) (HEADWATER_SEED=\(PropertySeed.base))")
        }
    }

    @Test("truncation at every line boundary, with and without the line break", arguments: fixtures())
    func truncations(_ fixture: Fixture) throws {
        let original = try fixture.bytes()
        for (index, byte) in original.enumerated() where byte == 10 {
            Self.check(Array(original[..<index]), "\(fixture.testDescription) cut before byte \(index)")
            Self.check(Array(original[...index]), "\(fixture.testDescription) cut after byte \(index)")
        }
    }

    @Test("random mutations of 1,000 generated playlists")
    func generatedMutations() {
        for seed in PropertySeed.seeds(1_000) {
            var generator = PlaylistGenerator(seed: seed)
            let text =
                seed % 3 == 0
                ? PlaylistSerializer.serialize(generator.multivariantPlaylist())
                : PlaylistSerializer.serialize(generator.mediaPlaylist(maxSegments: 6))
            var mutator = Mutator(seed: seed)
            let mutated = mutator.mutate(text)
            Self.check(mutated, "generated playlist and mutation seed \(seed) (HEADWATER_SEED=\(seed))")
            Self.checkTolerant(mutated, "generated playlist and mutation seed \(seed) (HEADWATER_SEED=\(seed))")
        }
    }

    /// The tolerant parse must throw or succeed, accept whatever the strict parse accepts, and write
    /// what it accepts canonically: text the strict parse reads.
    static func checkTolerant(_ bytes: [UInt8], _ context: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
        let parsed: Playlist
        do throws(PlaylistParseError) {
            parsed = try PlaylistParser().parseTolerating(bytes).playlist
        } catch {
            let lineCount = bytes.reduce(1) { $1 == 10 ? $0 + 1 : $0 }
            #expect((1...lineCount).contains(error.line), "\(context()): \(error)", sourceLocation: sourceLocation)
            #expect((try? PlaylistParser().parse(bytes)) == nil, "\(context()): the strict parse accepts what the tolerant one refuses: \(error)", sourceLocation: sourceLocation)
            return
        }
        let written = PlaylistSerializer.serialize(parsed)
        do {
            _ = try PlaylistParser().parse(written)
        } catch {
            guard !KnownIssues.hasUnwritableValue(parsed) else { return }
            Issue.record(
                "\(context()): the tolerant parse's output does not parse strictly: \(error)\n\(String(decoding: written, as: UTF8.self))",
                sourceLocation: sourceLocation)
        }
    }

    /// Parse must throw or succeed; an accepted document must round-trip.
    static func check(_ bytes: [UInt8], _ context: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
        let parsed: Playlist
        do throws(PlaylistParseError) {
            parsed = try PlaylistParser().parse(bytes)
        } catch {
            let lineCount = bytes.reduce(1) { $1 == 10 ? $0 + 1 : $0 }
            #expect((1...lineCount).contains(error.line), "\(context()): \(error) (the document has \(lineCount) lines)", sourceLocation: sourceLocation)
            return
        }
        let written = PlaylistSerializer.serialize(parsed)
        let reparsed: Playlist
        do {
            reparsed = try PlaylistParser().parse(written)
        } catch {
            guard !KnownIssues.hasUnwritableValue(parsed) else { return }
            Issue.record(
                "\(context()): the serialized text does not parse: \(error)\n\(String(decoding: written, as: UTF8.self))",
                sourceLocation: sourceLocation)
            return
        }
        guard reparsed != parsed, !KnownIssues.explains(parsed, reparsed) else { return }
        let difference = PlaylistDiff.describe(expected: parsed, actual: reparsed)
        let input = String(decoding: bytes, as: UTF8.self)
        Issue.record("\(context()): serialize → parse changed the value: \(difference)\ninput:\n\(input)", sourceLocation: sourceLocation)
    }

    static func fnv1a(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}

/// Round-trip differences caused by library bugs that have their own failing tests; the mutation
/// tests tolerate exactly these so that they keep finding new ones. Each check compares the values
/// with the known effect undone, so anything else still fails.
enum KnownIssues {
    static func explains(_ parsed: Playlist, _ reparsed: Playlist) -> Bool {
        guard case .media(let a) = parsed, case .media(let b) = reparsed else { return false }
        return integerExtinfBelowVersion3(a, b) || unknownTagsMovedToHeader(a, b)
    }

    /// `HLSDurationTests.acceptedTextIsWritable` and `ProgramDateTimeTests.acceptedTextIsWritable`:
    /// rounding carries a value past what the parser accepts (13 integer digits, year 10000).
    static func hasUnwritableValue(_ playlist: Playlist) -> Bool {
        guard case .media(let p) = playlist else { return false }
        let tags = p.segments.map(\.tags) + [p.trailingTags]
        return p.segments.contains { $0.duration.microseconds >= 1_000_000_000_000_000_000 }
            || tags.contains { $0.programDateTime.map { ProgramDateTime(iso8601: $0.description) == nil } ?? false }
    }

    /// `SerializerTests.fractionalExtinfBelowVersion3`: EXTINF is rounded when VERSION < 3.
    static func integerExtinfBelowVersion3(_ a: MediaPlaylist, _ b: MediaPlaylist) -> Bool {
        guard (a.version ?? 3) < 3 else { return false }
        var rounded = a
        for index in rounded.segments.indices {
            rounded.segments[index].duration = .seconds(max(0, rounded.segments[index].duration.roundedSeconds))
        }
        return rounded == b || unknownTagsMovedToHeader(rounded, b)
    }

    /// `SerializerTests.unknownTagOnFirstSegment`: unknown tags of the first segment (or of the
    /// trailing tags when there is no segment) are read back as header tags.
    static func unknownTagsMovedToHeader(_ a: MediaPlaylist, _ b: MediaPlaylist) -> Bool {
        var moved = a
        if moved.segments.isEmpty {
            moved.headerUnknownTags += moved.trailingTags.unknownTags
            moved.trailingTags.unknownTags = []
        } else {
            moved.headerUnknownTags += moved.segments[0].tags.unknownTags
            moved.segments[0].tags.unknownTags = []
        }
        return moved == b
    }
}

/// Byte-level mutations, 1–3 per document.
struct Mutator {
    var random: SeededRandom

    init(seed: UInt64) { self.random = SeededRandom(seed: seed) }

    static let interestingBytes: [UInt8] = [
        UInt8(ascii: "\""), UInt8(ascii: ","), UInt8(ascii: "="), UInt8(ascii: "#"), 10, 13, 0x00, 0xFF, UInt8(ascii: "@"),
        UInt8(ascii: ":"), UInt8(ascii: " "), 9, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "x"), 0x80, 0xC2, 0xEF,
    ]

    static let interestingNumbers = [
        "0", "1", "2", "-1", "18446744073709551615", "18446744073709551616", "999999999999.9999995", "0.0000005", "86401",
        "9999-12-31T23:59:60.9999Z",
    ]

    /// Whole lines worth inserting: they change the document's structure, not just its bytes.
    static let interestingLines = [
        "#EXTM3U", "#EXTINF:1,", "#EXTINF:6.006,title", "seg.ts", "#EXT-X-VERSION:2", "#EXT-X-TARGETDURATION:6", "#EXT-X-ENDLIST",
        "#EXT-X-DISCONTINUITY", "#EXT-X-GAP", "#EXT-X-BITRATE:1", "#EXT-X-BYTERANGE:10", "#EXT-X-BYTERANGE:10@0",
        #"#EXT-X-PART:DURATION=1,URI="p.mp4""#, "#EXT-X-SKIP:SKIPPED-SEGMENTS=1", "#EXT-X-STREAM-INF:BANDWIDTH=1",
        #"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="a""#, "#EXT-X-VENDOR", "# comment", "#EXT-X-CUE-OUT:30", "#EXT-X-CUE-IN",
        "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00Z", #"#EXT-X-KEY:METHOD=AES-128,URI="k""#, #"#EXT-X-MAP:URI="i.mp4""#,
        #"#EXT-X-DATERANGE:ID="x",START-DATE="2026-11-21T17:36:00Z""#, "",
    ]

    mutating func mutate(_ input: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0..<random.int(1...3) { mutateOnce(&bytes) }
        return bytes
    }

    private mutating func mutateOnce(_ bytes: inout [UInt8]) {
        guard !bytes.isEmpty else {
            bytes = Array("#EXTM3U\n".utf8)
            return
        }
        let position = random.int(0...(bytes.count - 1))
        switch random.int(0...9) {
        case 0:  // flip one bit
            bytes[position] ^= 1 << UInt8(random.int(0...7))
        case 1:  // overwrite with an interesting byte
            bytes[position] = random.pick(Self.interestingBytes)
        case 2:  // insert interesting bytes
            bytes.insert(contentsOf: (0..<random.int(1...3)).map { _ in random.pick(Self.interestingBytes) }, at: position)
        case 3:  // delete a byte or a short run
            bytes.removeSubrange(position..<min(bytes.count, position + random.int(1...16)))
        case 4:  // duplicate a line
            let line = lineRange(containing: position, in: bytes)
            bytes.insert(contentsOf: bytes[line], at: random.chance(0.5) ? line.upperBound : lineStart(random.int(0...(bytes.count - 1)), in: bytes))
        case 5:  // move a line
            let line = lineRange(containing: position, in: bytes)
            let moved = Array(bytes[line])
            bytes.removeSubrange(line)
            bytes.insert(contentsOf: moved, at: bytes.isEmpty ? 0 : lineStart(random.int(0...(bytes.count - 1)), in: bytes))
        case 6:  // truncate
            bytes.removeSubrange(position...)
        case 7:  // replace a run of digits with an interesting number
            guard let digits = digitRun(near: position, in: bytes) else { return }
            bytes.replaceSubrange(digits, with: Array(random.pick(Self.interestingNumbers).utf8))
        case 8:  // insert a structural line
            bytes.insert(contentsOf: Array((random.pick(Self.interestingLines) + "\n").utf8), at: lineStart(position, in: bytes))
        default:  // turn LF into CRLF or CR
            guard let lf = bytes[position...].firstIndex(of: 10) else { return }
            if random.chance(0.7) { bytes.insert(13, at: lf) } else { bytes[lf] = 13 }
        }
    }

    private func lineStart(_ position: Int, in bytes: [UInt8]) -> Int {
        var start = position
        while start > 0, bytes[start - 1] != 10 { start -= 1 }
        return start
    }

    /// The line around `position`, including its line feed.
    private func lineRange(containing position: Int, in bytes: [UInt8]) -> Range<Int> {
        let start = lineStart(position, in: bytes)
        var end = position
        while end < bytes.count, bytes[end] != 10 { end += 1 }
        return start..<min(bytes.count, end + 1)
    }

    private func digitRun(near position: Int, in bytes: [UInt8]) -> Range<Int>? {
        guard let first = bytes[position...].firstIndex(where: { $0 >= 48 && $0 <= 57 }) else { return nil }
        var end = first
        while end < bytes.count, (bytes[end] >= 48 && bytes[end] <= 57) || bytes[end] == UInt8(ascii: ".") { end += 1 }
        return first..<end
    }
}
