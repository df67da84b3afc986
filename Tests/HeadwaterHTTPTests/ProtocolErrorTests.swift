import Foundation
@testable import HeadwaterHTTP
import HeadwaterRuntime
import HeadwaterTesting
import NIOCore
import NIOHTTP1
import Testing

/// What HTTP refuses before any route decides: a method nobody implements (501), a request-target
/// over 8 KiB (414), a head over the head limit (431), a head the decoder cannot read (400) — each
/// with its one-line reason, on the fast and the full HTTP/1 path alike, logged and counted. (The
/// three framings are compared on them in `FramingDifferentialTests+Refusals.swift`.)
@Suite("Protocol errors: 501, 414, 431 and 400 with a reason", .serialized)
struct ProtocolErrorTests {
    static func body(_ status: Int, _ phrase: String, _ reason: String) -> String { "\(status) \(phrase): \(reason)\n" }

    static let notImplemented = body(
        501, "Not Implemented", "the request method is not one this server implements (GET, HEAD, OPTIONS, PUT, POST, DELETE)")
    static let headTooLarge = body(
        431, "Request Header Fields Too Large", "the request head (request line and header fields) is larger than 16384 bytes")
    static let uriTooLong = body(414, "URI Too Long", "the request-target is longer than 8192 bytes")

    @Test(
        "501 for unknown methods (known to the decoder or not), 405 with Allow for a known one a route does not take, 414, 431 and a reasoned 400",
        arguments: [true, false])
    func refusalsOverSockets(fastPath: Bool) async throws {
        let log = LogRecorder()
        let metrics = OriginMetrics()
        try await withServer(
            configure: {
                $0.fastPathAnswers = fastPath
                $0.metrics = metrics
            }, accessLogger: log.logger
        ) { port in
            let longTarget = "/live/demo/" + String(repeating: "a", count: 10 * 1024) + ".m3u8"
            let bigField = "X-Big: " + String(repeating: "b", count: 20 * 1024) + "\r\n"
            let cases: [(request: String, status: Int, body: String?, closes: Bool)] = [
                ("FOO /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 501, Self.notImplemented, true),
                ("PROPFIND /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 501, Self.notImplemented, false),
                ("PATCH /live/demo/v1.m3u8 HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", 501, Self.notImplemented, false),
                ("DELETE /live/demo/v1.m3u8 HTTP/1.1\r\nHost: a\r\n\r\n", 405, nil, false),
                ("GET \(longTarget) HTTP/1.1\r\nHost: a\r\n\r\n", 414, Self.uriTooLong, false),
                ("GET /live/demo/v1.m3u8 HTTP/1.1\r\nHost: a\r\n\(bigField)\r\n", 431, Self.headTooLarge, true),
                ("GET /healthz HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n", 400,
                    Self.body(400, "Bad Request", "malformed request: invalid header field syntax"), true),
                ("GET /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n", 400,
                    Self.body(400, "Bad Request", "malformed request: invalid Content-Length"), true),
                // No request line at all (the start of a TLS ClientHello, a method with a non-token
                // byte): 400, not 501.
                ("\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\r\n\r\n", 400, Self.body(400, "Bad Request", "malformed request: not an HTTP/1 request"), true),
                ("G@T /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 400, Self.body(400, "Bad Request", "malformed request: not an HTTP/1 request"), true),
            ]
            for (request, status, body, closes) in cases {
                let label = "\(String(request.prefix(60)).debugDescription) (fast path \(fastPath))"
                let (responses, closed) = try await HostFieldTests.exchange(request, port: port)
                try #require(responses.count == 1, "\(label): \(responses.count) responses")
                #expect(responses[0].status == status, "\(label)")
                if let body { #expect(HostFieldTests.text(responses[0]) == body, "\(label)") }
                #expect(closed == closes, "\(label): closed \(closed)")
                #expect(responses[0].header("content-type") == "text/plain; charset=utf-8", "\(label)")
                if status == 405 { #expect(responses[0].header("allow") == "GET, HEAD, OPTIONS", "\(label)") }
            }
            for _ in 0..<200 where log.snapshot.count < cases.count { try await Task.sleep(for: .milliseconds(5)) }
            let lines = log.snapshot.map(\.message)
            #expect(lines.count == cases.count, "one access line each: \(lines)")
            // A head the decoder could not read is logged as nginx logs one: no method, no target.
            #expect(lines.contains { $0.contains("] \"- - HTTP/1.1\" 431 ") }, "\(lines)")
            #expect(lines.contains { $0.contains("] \"- - HTTP/1.1\" 501 ") }, "\(lines)")
            #expect(lines.contains { $0.contains("] \"PROPFIND /healthz HTTP/1.1\" 501 ") }, "\(lines)")
            let exposition = String(decoding: metrics.exposition(channels: []), as: UTF8.self)
            for series in [
                #"headwater_http_protocol_errors_total{reason="header_too_large"} 1"#,
                #"headwater_http_protocol_errors_total{reason="unknown_method"} 1"#,
                #"headwater_http_protocol_errors_total{reason="malformed"} 4"#,
                #"headwater_http_protocol_errors_total{reason="missing_host"} 0"#,
                // Methods outside the standard set are counted as `_OTHER` (OpenTelemetry's rule).
                #"headwater_http_requests_total{route="invalid",method="_OTHER",status="431"} 1"#,
                #"headwater_http_requests_total{route="invalid",method="_OTHER",status="501"} 1"#,
                #"headwater_http_requests_total{route="invalid",method="_OTHER",status="400"} 4"#,
                #"headwater_http_requests_total{route="invalid",method="GET",status="414"} 1"#,
                #"headwater_http_requests_total{route="/healthz",method="_OTHER",status="501"} 1"#,
            ] {
                #expect(exposition.contains(series), "\(series) in\n\(exposition)")
            }
        }
    }

    @Test("an unknown method is told from bytes that are no request line by the first line's shape")
    func methodOrGarbage() {
        for (start, error) in [
            ("FOO / HTTP/1.1\r\n", HTTPParserError.invalidMethod), ("M-SEARCH * HTTP/1.1", .invalidMethod),
            ("G@T / HTTP/1.1\r\n", .invalidConstant), (" GET /", .invalidConstant), ("\u{16}\u{03}\u{01}", .invalidConstant),
            (String(repeating: "A", count: 100) + " /", .invalidConstant), ("", .invalidConstant),
        ] {
            #expect(HTTP1RequestDecoder.methodError(startOf: ByteBuffer(string: start)) == error, "\(start.debugDescription)")
        }
    }

    /// A whole head over the limit, read at once, is not the fast path's to answer: the decoder
    /// decides (and refuses it), as on a server without the fast path.
    @Test("the fast scanner leaves a whole head over the limit to the full path")
    func scannerLeavesLargeHeads() {
        let text = "GET /live/demo/v1.m3u8 HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "b", count: 20 * 1024) + "\r\n\r\n"
        let scan = Array(text.utf8).withUnsafeBufferPointer { FastRequestScan.scan($0, maxHeadBytes: 16 * 1024) }
        #expect(scan == .full(length: text.utf8.count, mayHaveBody: false))
        let small = Array(text.utf8).withUnsafeBufferPointer { FastRequestScan.scan($0, maxHeadBytes: 32 * 1024) }
        guard case .fast = small else {
            Issue.record("under the limit: \(small)")
            return
        }
    }

    /// The fast path hands a head that grows past the limit, still without its end, to the
    /// decoder, which refuses it: 431 whether the bytes came in one piece or many.
    @Test("a head sent in pieces that passes the limit gets 431 before it ends")
    func oversizedHeadInPieces() async throws {
        try await withServer { port in
            try await RawClient.connect(port: port).run { inbound, outbound in
                var inbound = inbound
                try await outbound.write(ByteBuffer(string: "GET /live/demo/v1.m3u8 HTTP/1.1\r\nHost: a\r\n"))
                for _ in 0..<20 {
                    try await outbound.write(ByteBuffer(string: "X-Filler: " + String(repeating: "f", count: 1000) + "\r\n"))
                }
                var bytes: [UInt8] = []
                try await inbound.readToEnd(into: &bytes)
                let responses = RawResponse.parseAll(bytes).0
                #expect(responses.count == 1 && responses.first?.status == 431, "\(String(decoding: bytes, as: UTF8.self))")
                #expect(HostFieldTests.text(responses.first) == Self.headTooLarge)
            }
        }
    }

    /// A client still sending when it is refused reads the answer: the server closes its output
    /// and drops what keeps coming instead of closing with unread bytes, which would reset the
    /// connection and could destroy the answer before the client reads it.
    @Test("a client still sending a huge head when refused gets the 431, not a reset")
    func refusedWhileStillSending() async throws {
        try await withServer { port in
            for _ in 0..<5 {
                try await RawClient.connect(port: port).run { inbound, outbound in
                    var inbound = inbound
                    let filler = "X-Filler: " + String(repeating: "f", count: 1000) + "\r\n"
                    var head = "GET /live/demo/v1.m3u8 HTTP/1.1\r\nHost: a\r\n"
                    for _ in 0..<512 { head += filler }
                    // Half a megabyte in one write: the server refuses after 16 KiB of it.
                    try? await outbound.write(ByteBuffer(string: head))
                    var bytes: [UInt8] = []
                    do {
                        try await inbound.readToEnd(into: &bytes)
                    } catch {
                        Issue.record("reading the answer: \(error) after \(bytes.count) bytes")
                    }
                    let responses = RawResponse.parseAll(bytes).0
                    #expect(responses.first?.status == 431, "\(String(decoding: bytes.prefix(200), as: UTF8.self))")
                }
            }
        }
    }

    @Test("curl: a 20 KB header gets 431 with its reason, a 10 KB URI 414, a FOO request 501")
    func withCurl() async throws {
        try await withServer { port in
            let format = ["--write-out", "%{response_code}"]
            let big = try ProtocolListenerTests.curl(
                format + ["-H", "X-Big: " + String(repeating: "b", count: 20 * 1024), "http://127.0.0.1:\(port)/healthz"])
            #expect(big.output == Self.headTooLarge + "431", "\(big)")
            let long = try ProtocolListenerTests.curl(
                format + ["http://127.0.0.1:\(port)/" + String(repeating: "u", count: 10 * 1024)])
            #expect(long.output == Self.uriTooLong + "414", "\(long)")
            let foo = try ProtocolListenerTests.curl(format + ["-X", "FOO", "http://127.0.0.1:\(port)/healthz"])
            #expect(foo.output == Self.notImplemented + "501", "\(foo)")
        }
    }
}
