import HeadwaterCore
import Testing

@Suite("gzip per response")
struct GzipPerResponseTests {
    @Test("pooled deflate states give valid gzip for every body, one after another and concurrently")
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
    }
}
