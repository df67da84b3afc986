import Foundation
import NIOHTTP1
import Testing

@testable import HeadwaterHTTP

/// Every framing reads the same request fields (``OriginRequest/Field``): the fast HTTP/1 scanner
/// by byte matching, NIO's decoders and HTTP/2 from `HTTPHeaders`. A field declared for a decision
/// and missed by one framing would make the two paths answer differently.
@Suite struct RequestFieldParityTests {
    private static func scan(_ text: String) -> FastRequestScan {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { FastRequestScan.scan($0) }
    }

    @Test(arguments: OriginRequest.Field.allCases)
    func theScannerRecognisesEveryDeclaredField(_ field: OriginRequest.Field) {
        for spelling in [field.name, field.name.uppercased(), field.name.capitalized] {
            let bytes = Array(spelling.utf8)
            let recognised = bytes.withUnsafeBufferPointer { FastRequestScan.Field($0, 0..<bytes.count) }
            #expect(recognised == .request(field), "\(spelling)")
        }
    }

    /// A request with one of each field the fast path answers with: the fields it keeps are those
    /// NIO's headers give, value for value.
    @Test func theFastScannerKeepsWhatTheDecoderKeeps() throws {
        let fields: [(String, String)] = [
            ("Accept-Encoding", "br, gzip;q=0.5"), ("Range", "bytes=0-99"), ("Authorization", "Bearer abc"),
            ("Referer", "https://player.example/"), ("User-Agent", "AppleCoreMedia/1.0"),
            ("X-Playback-Session-Id", "8D7A-11"), ("Accept", "*/*"),
        ]
        let text = "GET /live/demo/v1.m3u8 HTTP/1.1\r\nHost: x\r\n" + fields.map { "\($0): \($1)\r\n" }.joined() + "\r\n"
        guard case .fast(let head) = Self.scan(text) else {
            Issue.record("not answered on the fast path")
            return
        }
        let bytes = Array(text.utf8)
        let fast = head.fields { range in range.map { String(decoding: bytes[$0], as: UTF8.self) } }
        #expect(fast == OriginRequest.Fields(HTTPHeaders(fields)))
    }

    /// Fields the fast scanner does not keep (conditions) and repeated ones send the request to the
    /// full path, where NIO's decoder joins or picks them.
    @Test(arguments: [
        "If-None-Match: \"a\"", "If-Modified-Since: Sat, 01 Jan 2000 00:00:00 GMT", "If-Range: \"a\"", "If-Match: *",
        "If-Unmodified-Since: Sat, 01 Jan 2000 00:00:00 GMT", "Range: bytes=0-1\r\nRange: bytes=2-3",
        "Accept-Encoding: gzip\r\nAccept-Encoding: br", "User-Agent: a\r\nUser-Agent: b",
    ])
    func conditionsAndRepeatsGoToTheFullPath(_ extra: String) {
        let text = "GET /live/demo/v1.m3u8 HTTP/1.1\r\nHost: x\r\n\(extra)\r\n\r\n"
        #expect(Self.scan(text) == .full(length: text.utf8.count, mayHaveBody: false))
    }
}
