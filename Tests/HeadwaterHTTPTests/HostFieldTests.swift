import Foundation
@testable import HeadwaterHTTP
import HeadwaterRuntime
import HeadwaterTesting
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// RFC 9112 §3.2: an HTTP/1.1 request without `Host`, and any request with two `Host` lines or an
/// invalid `Host` value, is answered 400 with its reason and the connection closed — on the fast
/// path (which leaves such a request to the full path) as on the full one; HTTP/1.0 may omit it.
@Suite("Host field (RFC 9112 §3.2)", .serialized)
struct HostFieldTests {
    // MARK: - The decision

    private static func scan(_ text: String) -> FastRequestScan {
        Array(text.utf8).withUnsafeBufferPointer { FastRequestScan.scan($0) }
    }

    @Test("the fast scanner answers only a request with exactly one valid Host; the rest go to the full path")
    func scannerVerdicts() {
        let target = "GET /live/demo/v1.m3u8 HTTP/1.1\r\n"
        for fields in ["Host: a\r\n", "host: origin.example:8080\r\n", "HOST: [::1]:80\r\n", "Host:\r\n", "Host: a.b_c-d~%41\r\n"] {
            guard case .fast = Self.scan(target + fields + "\r\n") else {
                Issue.record("\(fields.debugDescription): not fast")
                continue
            }
        }
        for fields in ["", "Accept: */*\r\n", "Host: a\r\nHost: a\r\n", "Host: a\r\nhost: b\r\n", "Host: a b\r\n", "Host: a/b\r\n",
            "Host: user@a\r\n", "Host: \u{e9}\r\n"]
        {
            let text = target + fields + "\r\n"
            #expect(Self.scan(text) == .full(length: text.utf8.count, mayHaveBody: false), "\(fields.debugDescription)")
        }
        // HTTP/1.0 goes to the full path in any case, with or without Host.
        #expect(Self.scan("GET / HTTP/1.0\r\n\r\n") == .full(length: 18, mayHaveBody: false))
    }

    @Test("the full path's check on NIO's heads: missing (HTTP/1.1 only), repeated (any version), invalid")
    func headVerdicts() {
        func head(_ version: HTTPVersion, _ fields: [(String, String)]) -> HTTPRequestHead {
            HTTPRequestHead(version: version, method: .GET, uri: "/", headers: HTTPHeaders(fields))
        }
        #expect(HostField.problem(head(.http1_1, [("Host", "a")])) == nil)
        #expect(HostField.problem(head(.http1_1, [("Host", " a ")])) == nil, "optional whitespace around the value")
        #expect(HostField.problem(head(.http1_1, [("Host", "")])) == nil, "an empty Host is valid")
        #expect(HostField.problem(head(.http1_1, [])) == .missing)
        #expect(HostField.problem(head(.http1_1, [("Accept", "*/*")])) == .missing)
        #expect(HostField.problem(head(.http1_0, [])) == nil)
        #expect(HostField.problem(head(.http1_1, [("Host", "a"), ("HOST", "a")])) == .repeated)
        #expect(HostField.problem(head(.http1_0, [("host", "a"), ("Host", "b")])) == .repeated)
        #expect(HostField.problem(head(.http1_1, [("Host", "a b")])) == .invalid)
        #expect(HostField.problem(head(.http1_1, [("Host", "a,b")])) == nil, "a comma is a sub-delim")
        #expect(HostField.problem(head(.http1_1, [("Host", "a\"b")])) == .invalid)
    }

    /// The same bytes, read by the fast scanner and by NIO's decoder then ``HostField/problem(_:)``:
    /// the scanner answers exactly the requests the full path would not refuse for their `Host`.
    @Test("the fast scanner and the full path's check agree on every Host spelling")
    func scannerAndDecoderAgree() throws {
        let spellings = [
            "", "Host: a\r\n", "Host:  a  \r\n", "Host:\ta\t\r\n", "Host: a\tb\r\n", "Host: a b\r\n", "Host:\r\n",
            "Host: a:8080\r\n", "Host: [::1]\r\n", "Host: a\r\nHost: a\r\n", "host: a\r\nX: y\r\nHOST: b\r\n",
            "Host: a@b\r\n", "Host: a/b\r\n", "Host: a?b\r\n", "Host: a#b\r\n", "Host: %41\r\n", "Host: a\"b\r\n",
            "Host: \u{e9}\r\n", "Host: a{b}\r\n", "X-Host: a\r\n", "Hosts: a\r\n",
        ]
        var fast = 0
        for spelling in spellings {
            let text = "GET /live/demo/v1.m3u8 HTTP/1.1\r\n\(spelling)\r\n"
            let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
            defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
            try channel.writeInbound(ByteBuffer(string: text))
            guard case .head(let head) = try channel.readInbound(as: HTTPServerRequestPart.self) else {
                Issue.record("NIO did not read \(spelling.debugDescription)")
                continue
            }
            let scannedFast = if case .fast = Self.scan(text) { true } else { false }
            #expect(scannedFast == (HostField.problem(head) == nil), "\(spelling.debugDescription)")
            if scannedFast { fast += 1 }
        }
        #expect(fast == 7, "the seven valid spellings are answered on the fast path")
    }

    // MARK: - Over real sockets

    /// Sends `request` on a new connection and reads until the server closes (or one response came,
    /// when it keeps the connection): the responses and whether the server closed.
    static func exchange(_ request: String, port: Int, head: Bool = false) async throws -> (responses: [RawResponse], closed: Bool) {
        try await RawClient.connect(port: port).run { inbound, outbound in
            var inbound = inbound
            try await outbound.write(ByteBuffer(string: request))
            var bytes: [UInt8] = []
            let first = try await inbound.readResponses(1, into: &bytes, bodiless: { _ in head })
            guard first.first?.header("connection")?.lowercased() == "close" else { return (first, false) }
            try await inbound.readToEnd(into: &bytes)
            return (RawResponse.parseAll(bytes, bodiless: { _ in head }).0, true)
        }
    }

    static func text(_ response: RawResponse?) -> String { String(decoding: response?.body ?? [], as: UTF8.self) }

    @Test(
        "no Host, two Hosts and an invalid Host get 400 with the reason and a close, on the fast and the full path; HTTP/1.0 without Host gets 200",
        arguments: [true, false])
    func refusedOverSockets(fastPath: Bool) async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        try files.write("app.js", Array("console.log(1)\n".utf8))
        let log = LogRecorder()
        let metrics = OriginMetrics()
        let tally = FastPathTally()
        try await withServer(
            configure: {
                $0.publicDirectory = files.path
                $0.fastPathAnswers = fastPath
                $0.fastPathTally = tally
                $0.metrics = metrics
            }, accessLogger: log.logger
        ) { port in
            let cases: [(request: String, reason: String)] = [
                ("GET /app.js HTTP/1.1\r\n\r\n", "missing Host field (HTTP/1.1 requires one)"),
                ("GET /live/demo/v1.m3u8 HTTP/1.1\r\nUser-Agent: x\r\n\r\n", "missing Host field (HTTP/1.1 requires one)"),
                ("GET /app.js HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "more than one Host field"),
                ("HEAD /app.js HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", "more than one Host field"),
                ("GET /app.js HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", "more than one Host field"),
                ("GET /healthz HTTP/1.1\r\nHost: bad host\r\n\r\n", "invalid Host field value"),
                // A body after a refused head is read and dropped, not taken for a request.
                ("PUT /ingest/demo/v1/a.ts HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", "missing Host field (HTTP/1.1 requires one)"),
            ]
            for (request, reason) in cases {
                let isHead = request.hasPrefix("HEAD")
                let (responses, closed) = try await Self.exchange(request, port: port, head: isHead)
                let label = "\(request.debugDescription) (fast path \(fastPath))"
                try #require(responses.count == 1, "\(label): \(responses.count) responses")
                #expect(responses[0].status == 400, "\(label)")
                #expect(responses[0].header("connection") == "close", "\(label)")
                #expect(responses[0].header("content-type") == "text/plain; charset=utf-8", "\(label)")
                #expect(responses[0].header("content-length") == "\("400 Bad Request: \(reason)\n".utf8.count)", "\(label)")
                if !isHead { #expect(Self.text(responses[0]) == "400 Bad Request: \(reason)\n", "\(label)") }
                #expect(closed, "\(label): the server closes the connection")
            }
            // HTTP/1.0 may omit Host; HTTP/1.1 with one valid Host is answered (by the fast path when on).
            let old = try await Self.exchange("GET /app.js HTTP/1.0\r\n\r\n", port: port)
            #expect(old.responses.first?.status == 200 && Self.text(old.responses.first) == "console.log(1)\n")
            let before = tally.count
            let good = try await Self.exchange("GET /app.js HTTP/1.1\r\nHost: origin\r\n\r\n", port: port)
            #expect(good.responses.first?.status == 200 && !good.closed)
            #expect(tally.count == before + (fastPath ? 1 : 0), "the fast path answered the good request")

            // Each refusal has its access line and counters.
            for _ in 0..<200 where log.count("\" 400 ") < 7 { try await Task.sleep(for: .milliseconds(5)) }
            let lines = log.snapshot.map(\.message)
            #expect(lines.filter { $0.contains("\"GET /app.js HTTP/1.1\" 400 ") }.count == 2, "\(lines)")
            #expect(lines.contains { $0.contains("\"PUT /ingest/demo/v1/a.ts HTTP/1.1\" 400 ") }, "\(lines)")
            #expect(lines.contains { $0.contains("\"GET /app.js HTTP/1.0\" 400 ") }, "\(lines)")
            let exposition = String(decoding: metrics.exposition(channels: []), as: UTF8.self)
            #expect(exposition.contains(#"headwater_http_protocol_errors_total{reason="missing_host"} 3"#), "\(exposition)")
            #expect(exposition.contains(#"headwater_http_protocol_errors_total{reason="duplicate_host"} 3"#))
            #expect(exposition.contains(#"headwater_http_protocol_errors_total{reason="invalid_host"} 1"#))
            #expect(exposition.contains(#"headwater_http_requests_total{route="/{file}",method="GET",status="400"} 3"#), "\(exposition)")
        }
    }

    @Test("curl without a Host field (-H 'Host:') gets 400; with its own, 200")
    func curlWithoutHost() async throws {
        try await withServer { port in
            let url = "http://127.0.0.1:\(port)/healthz"
            let format = ["--write-out", "\n%{response_code}"]
            let without = try ProtocolListenerTests.curl(format + ["--http1.1", "-H", "Host:", url])
            #expect(without.output == "400 Bad Request: missing Host field (HTTP/1.1 requires one)\n\n400", "\(without)")
            let with = try ProtocolListenerTests.curl(format + ["--http1.1", url])
            #expect(with.output.hasSuffix("\n200"), "\(with)")
        }
    }
}
