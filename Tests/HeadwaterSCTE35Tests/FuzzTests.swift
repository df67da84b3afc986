import HeadwaterSCTE35
import HeadwaterTesting
import Testing

/// Seeded random mutations of every vector: decoding must throw or succeed, never trap, and
/// whatever decodes must re-encode to the same bytes and decode again to an equal value.
@Suite("Random mutations")
struct FuzzTests {
    static let seed: UInt64 = 0x5C7E_35F0_0D15_EA5E
    static let iterations = 20_000

    @Test func randomMutationsNeverTrapAndRoundTrip() {
        var random = SeededRandom(seed: Self.seed)
        let corpus = Vectors.all + Vectors.badCRC
        var decoded = 0
        for iteration in 0..<Self.iterations {
            var bytes = corpus[random.below(corpus.count)].bytes
            for _ in 0..<(1 + random.below(4)) {
                switch random.below(4) {
                case 0 where !bytes.isEmpty:
                    bytes[random.below(bytes.count)] = random.byte()
                case 1 where !bytes.isEmpty:
                    bytes[random.below(bytes.count)] ^= 1 << UInt8(random.below(8))
                case 2:
                    bytes.insert(random.byte(), at: random.below(bytes.count + 1))
                case 3 where !bytes.isEmpty:
                    bytes.remove(at: random.below(bytes.count))
                default:
                    break
                }
            }
            // Mostly repair section_length and CRC_32 so that mutations reach the structural parser.
            if random.below(4) != 0 { bytes = repaired(bytes) }
            if check(bytes, iteration: iteration) { decoded += 1 }
        }
        // The corpus and the repair step must exercise the success path too, not just errors.
        #expect(decoded > Self.iterations / 10)
    }

    /// Returns whether `bytes` decoded (with CRC verification off).
    private func check(_ bytes: [UInt8], iteration: Int) -> Bool {
        let strict = try? SpliceInfoSection(bytes: bytes)
        let section: SpliceInfoSection
        do {
            section = try SpliceInfoSection(bytes: bytes, verifyCRC: false)
        } catch {
            #expect(strict == nil, "iteration \(iteration): decodes only with CRC verification")
            return false
        }
        if let strict { #expect(strict == section, "iteration \(iteration)") }
        do {
            let encoded = try section.encoded()
            #expect(try SpliceInfoSection(bytes: encoded) == section, "iteration \(iteration)")
            // Lossless: only CRC_32 (the 4 bytes before any trailing stuffing) is rewritten.
            let crcEnd = encoded.count - section.trailingStuffingCount
            if encoded.count == bytes.count {
                var withCRC = bytes
                withCRC.replaceSubrange((crcEnd - 4)..<crcEnd, with: encoded[(crcEnd - 4)..<crcEnd])
                #expect(encoded == withCRC, "iteration \(iteration)")
            } else {
                Issue.record("iteration \(iteration): \(bytes.count) bytes re-encode to \(encoded.count)")
            }
        } catch {
            Issue.record("iteration \(iteration): decoded section does not re-encode: \(error)")
        }
        return true
    }
}
