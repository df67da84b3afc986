import HeadwaterRuntime
import NIOCore
import Testing

@Suite("gzip per response")
struct GzipPerResponseTests {
    @Test("pooled deflate states (small window and hash) give valid gzip for every body, one after another and concurrently")
    func pooledStatesRoundTrip() async throws {
        let bodies: [[UInt8]] = (0..<40).map { index in
            Array("#EXTM3U\n#EXT-X-TARGETDURATION:2\n".utf8) + (0..<(index * 7)).flatMap { Array("#EXTINF:2.000,\n/live/demo/v1/\($0).ts\n".utf8) }
        }
        for body in bodies {
            let compressed = try #require(Gzip.compressPerResponse(body))
            #expect(Gzip.decompress(compressed) == body)
        }
        let results = await withTaskGroup(of: Bool.self) { group in
            for body in bodies + bodies {
                group.addTask { Gzip.compressPerResponse(body).flatMap { Gzip.decompress($0) } == body }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 80 && results.allSatisfy { $0 })
        #expect(Gzip.decompress(try #require(Gzip.compressPerResponse([]))) == [])
        // A body far beyond the 4 KB window still round-trips.
        let large = (0..<5_000).flatMap { Array("#EXTINF:2.000,\n/live/demo/v1/\($0 % 97).ts\n".utf8) }
        #expect(Gzip.decompress(try #require(Gzip.compressPerResponse(large))) == large)
    }

    /// One composed member from `parts` (`true`: compressed ahead; `false`: stored per response).
    static func composed(_ parts: [([UInt8], Bool)]) throws -> ByteBuffer {
        var composer = Gzip.Composer(capacity: 64)
        for (bytes, deflated) in parts {
            if deflated {
                composer.append(try #require(Gzip.DeflatedPiece(bytes)))
            } else {
                composer.appendStored { $0.writeBytes(bytes) }
            }
        }
        return composer.finish()
    }

    @Test("gzip composed from pieces compressed ahead and bytes stored per response inflates with zlib to their concatenation")
    func composedMembersInflate() throws {
        var generator = SystemRandomNumberGenerator()
        let words = ["#EXTINF:2.000,\n", "/ads/ad1/v1/0.ts\n", "X-TRACKING-IMPRESSION=\"http://t.example/i?s=", "é", "\u{0}", "\n"]
        for _ in 0..<200 {
            let parts: [([UInt8], Bool)] = (0..<Int.random(in: 0...8, using: &generator)).map { _ in
                let text = (0..<Int.random(in: 1...300, using: &generator)).map { _ in words.randomElement(using: &generator)! }.joined()
                return (Array(text.utf8), Bool.random(using: &generator))
            }
            let member = try Self.composed(parts)
            let expected = parts.flatMap(\.0)
            #expect(Gzip.decompress(Array(buffer: member)) == expected, "\(parts.map { ($0.0.count, $0.1) })")
            #expect(try Self.composed(parts) == member, "the same parts give the same bytes")
        }
        // Nothing at all, an empty stored part, and a stored part beyond one block (64 KB).
        #expect(Gzip.decompress(Array(buffer: try Self.composed([]))) == [])
        #expect(Gzip.decompress(Array(buffer: try Self.composed([([], false), (Array("x".utf8), true)]))) == Array("x".utf8))
        let big = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let parts: [([UInt8], Bool)] = [(Array("head".utf8), true), (big, false), (Array("tail".utf8), true)]
        #expect(Gzip.decompress(Array(buffer: try Self.composed(parts))) == Array("head".utf8) + big + Array("tail".utf8))
    }

    @Test("the composed member is what zlib's gzip reader expects: header, final block, CRC-32 and length")
    func composedMemberLayout() throws {
        let body = Array("#EXTM3U\n".utf8)
        let member = Array(buffer: try Self.composed([(body, true)]))
        #expect(Array(member.prefix(4)) == [0x1F, 0x8B, 8, 0])
        #expect(Array(member.suffix(4)) == [UInt8(body.count), 0, 0, 0], "ISIZE")
        // A corrupted CRC is refused by inflate: the trailer is checked.
        var corrupt = member
        corrupt[corrupt.count - 8] ^= 1
        #expect(Gzip.decompress(corrupt) == nil)
    }
}
