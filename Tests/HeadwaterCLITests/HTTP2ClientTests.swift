import Foundation
import HeadwaterTesting
import Testing

extension RealClients {
    /// HTTP/2 and TLS as real clients speak them (issue 16): curl (`--http2` over TLS, h2c with
    /// `--http2-prior-knowledge`, `--http1.1` over TLS), nghttp and h2load (nghttp2-client), and
    /// `openssl s_client`, against `headwater serve` with a TLS listener whose certificate a CA made
    /// for the test signed (``TLSServerFixture``). What comes back over HTTP/2 must be what plain
    /// HTTP/1.1 gives for the same request: status, body byte for byte, and the header fields apart
    /// from connection-specific ones and the clock's (Date, Expires, Age).
    /// `Tests/tools/install-test-clients.sh` installs curl, nghttp2-client and openssl; without them
    /// these tests fail and say so.
    @Suite("HTTP/2 and TLS with real clients", .serialized)
    struct HTTP2ClientTests {
        typealias Serve = ServeCommandTests

        static func tool(_ name: String, package: String) throws -> String {
            try #require(Serve.which(name), "\(name) is required (\(package)): run Tests/tools/install-test-clients.sh")
        }

        // MARK: curl against plain HTTP/1.1

        /// How curl reaches the server in one of the compared modes.
        enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
            /// `--http2` to the TLS listener: h2 by ALPN.
            case h2
            /// `--http2-prior-knowledge` to the plain listener: h2c.
            case h2c
            /// `--http1.1` to the TLS listener: http/1.1 by ALPN.
            case http11OverTLS

            var testDescription: String {
                switch self {
                case .h2: "h2 over TLS (curl --http2)"
                case .h2c: "h2c with prior knowledge (curl --http2-prior-knowledge)"
                case .http11OverTLS: "HTTP/1.1 over TLS (curl --http1.1)"
                }
            }

            /// curl's `%{http_version}` for it.
            var version: String { self == .http11OverTLS ? "1.1" : "2" }

            func arguments(_ server: TLSServerFixture) -> [String] {
                switch self {
                case .h2: ["--http2"] + server.curlTrust
                case .h2c: ["--http2-prior-knowledge"]
                case .http11OverTLS: ["--http1.1"] + server.curlTrust
                }
            }

            func origin(_ server: TLSServerFixture) -> String {
                self == .h2c ? server.plainOrigin : server.httpsOrigin
            }
        }

        /// A response as curl received it.
        struct CurlResponse {
            /// `%{http_version}`: `2`, `1.1`.
            var version: String
            var status: Int
            /// Header fields in the order received, names as received.
            var fields: [(name: String, value: String)]
            var body: [UInt8]

            func header(_ name: String) -> String? {
                fields.first { $0.name.lowercased() == name.lowercased() }?.value
            }

            /// Fields that belong to one connection (RFC 9113 §8.2.2 forbids them in HTTP/2).
            static let connectionSpecific: Set<String> = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]
            /// Fields whose values follow the clock.
            static let clock: Set<String> = ["date", "expires", "age"]

            /// Lower-cased names to values, without connection-specific fields; the clock's fields
            /// are kept by name with their value left out.
            var comparable: [String: [String]] {
                var result: [String: [String]] = [:]
                for (name, value) in fields {
                    let key = name.lowercased()
                    if Self.connectionSpecific.contains(key) { continue }
                    result[key, default: []].append(Self.clock.contains(key) ? "…" : value)
                }
                return result
            }
        }

        /// One request, made the same way over each transport.
        struct Probe: CustomStringConvertible {
            var path: String
            var headers: [String] = []
            var head = false
            var status: Int
            var description: String { "\(head ? "HEAD" : "GET") \(path) \(headers)" }
        }

        /// Runs curl once: `arguments` (transport and trust), then `probe` on `origin`.
        static func curl(_ curl: String, _ arguments: [String], origin: String, _ probe: Probe) throws -> CurlResponse {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-curl-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let head = directory.appendingPathComponent("head")
            let body = directory.appendingPathComponent("body")
            var command = ["-sS", "--max-time", "10", "-D", head.path, "-o", body.path, "-w", "%{http_version} %{http_code}"] + arguments
            command += probe.headers.flatMap { ["-H", $0] }
            if probe.head { command.append("--head") }
            command.append(origin + probe.path)
            let run = try ToolRun.run(curl, command, timeout: 15)
            try #require(run.status == 0 && !run.timedOut, "curl \(command.joined(separator: " ")) exited \(run.status): \(run.stderr)")
            let written = run.text.split(separator: " ")
            let headText = (try? String(contentsOf: head, encoding: .utf8)) ?? ""
            let lines = headText.components(separatedBy: "\r\n").filter { !$0.isEmpty }
            let fields = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            return CurlResponse(
                version: written.first.map(String.init) ?? "", status: written.dropFirst().first.flatMap { Int($0) } ?? 0,
                fields: fields, body: probe.head ? [] : Array((try? Data(contentsOf: body)) ?? Data()))
        }

        /// `probe` over `transport` and over plain HTTP/1.1 as reference, fetched reference, candidate,
        /// reference until both references are the same version (a live playlist changes every
        /// segment, 2 s on the demo channel): the candidate and the reference around it.
        static func fetchPair(
            _ curlPath: String, _ server: TLSServerFixture, _ transport: Transport, _ probe: Probe
        ) throws -> (candidate: CurlResponse, reference: CurlResponse) {
            let plain = ["--http1.1"]
            var attempt = 0
            while true {
                attempt += 1
                let before = try curl(curlPath, plain, origin: server.plainOrigin, probe)
                let candidate = try curl(curlPath, transport.arguments(server), origin: transport.origin(server), probe)
                let after = try curl(curlPath, plain, origin: server.plainOrigin, probe)
                // The same version all three times: the candidate's differences are then the
                // transport's (a body that differs under the same ETag still fails).
                let sameVersion = before.header("etag") == after.header("etag") && before.body == after.body
                    && before.header("last-modified") == after.header("last-modified")
                    && candidate.header("etag") == before.header("etag")
                // A low-latency playlist has a new version every part (0.4 s): three fetches fit
                // between two publishes often enough, but not always on the first tries.
                if sameVersion || attempt == 20 { return (candidate, before) }
            }
        }

        /// What differs between `candidate` (over `transport`) and `reference` (plain HTTP/1.1).
        static func differences(_ candidate: CurlResponse, _ reference: CurlResponse, over transport: Transport) -> [String] {
            var problems: [String] = []
            if candidate.version != transport.version { problems.append("HTTP version \(candidate.version), not \(transport.version)") }
            if reference.version != "1.1" { problems.append("the reference came over HTTP \(reference.version)") }
            // Every response carries Date: without it in either, curl's header dump was not read.
            if candidate.header("date") == nil || reference.header("date") == nil { problems.append("no Date field read from curl's dump") }
            if candidate.status != reference.status { problems.append("status \(candidate.status), over HTTP/1.1 \(reference.status)") }
            if candidate.body != reference.body {
                problems.append("body: \(candidate.body.count) bytes, over HTTP/1.1 \(reference.body.count) bytes, or other bytes")
            }
            let (mine, theirs) = (candidate.comparable, reference.comparable)
            for name in Set(mine.keys).union(theirs.keys).sorted() where mine[name] != theirs[name] {
                problems.append("\(name): \(mine[name] ?? ["absent"]), over HTTP/1.1 \(theirs[name] ?? ["absent"])")
            }
            if transport.version == "2" {
                let upper = candidate.fields.map(\.name).filter { $0 != $0.lowercased() }
                if !upper.isEmpty { problems.append("HTTP/2 field names not lower-case: \(upper)") }
                let forbidden = candidate.fields.map(\.name).filter { CurlResponse.connectionSpecific.contains($0.lowercased()) }
                if !forbidden.isEmpty { problems.append("connection-specific fields over HTTP/2: \(forbidden)") }
            }
            return problems
        }

        @Test(
            "curl gets the same statuses, bodies and header fields as plain HTTP/1.1: playlists (gzip too), a segment, a range, a 304, a HEAD, a 404, a static file",
            arguments: Transport.allCases)
        func sameResponsesAsPlainHTTP1(over transport: Transport) throws {
            let curl = try Self.tool("curl", package: "curl")
            let server = try TLSServerFixture()
            defer { server.stop() }
            let media = try Self.curl(curl, ["--http1.1"], origin: server.plainOrigin, Probe(path: "/live/demo/v1.m3u8", status: 200))
            let uris = String(decoding: media.body, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
            try #require(uris.count >= 3, "the demo channel is live: \(String(decoding: media.body, as: UTF8.self))")
            // A segment in the middle of the window: it stays listed, and served, for the whole test.
            let segment = "/live/demo/\(uris[uris.count / 2])"
            let full = try Self.curl(curl, ["--http1.1"], origin: server.plainOrigin, Probe(path: segment, status: 200))
            let etag = try #require(full.header("etag"), "a segment has an ETag: \(full.fields)")
            try #require(full.body.count > 5_000, "segment \(segment): \(full.body.count) bytes")

            let probes = [
                Probe(path: "/live/demo/master.m3u8", status: 200),
                Probe(path: "/live/demo/v1.m3u8", status: 200),
                Probe(path: "/live/demo/v1.m3u8", headers: ["Accept-Encoding: gzip"], status: 200),
                Probe(path: "/live/demo/v1.iframes.m3u8", status: 200),
                Probe(path: segment, status: 200),
                Probe(path: segment, headers: ["Range: bytes=1000-4999"], status: 206),
                Probe(path: segment, headers: ["If-None-Match: \(etag)"], status: 304),
                Probe(path: segment, head: true, status: 200),
                Probe(path: "/live/demo/v1/1.ts", status: 404),
                Probe(path: "/ads/ad1/master.m3u8", status: 200),  // a static file of server.public
            ]
            for probe in probes {
                let (candidate, reference) = try Self.fetchPair(curl, server, transport, probe)
                #expect(candidate.status == probe.status, "\(probe): \(candidate.status) \(candidate.fields)")
                let problems = Self.differences(candidate, reference, over: transport)
                #expect(problems.isEmpty, "\(probe) over \(transport.rawValue): \(problems)")
            }
            // The range is those bytes of the segment, and gzip was given when asked for.
            let range = try Self.curl(
                curl, transport.arguments(server), origin: transport.origin(server),
                Probe(path: segment, headers: ["Range: bytes=1000-4999"], status: 206))
            #expect(range.body == Array(full.body[1000..<5000]), "the range's bytes")
            #expect(range.header("content-range") == "bytes 1000-4999/\(full.body.count)", "\(range.fields)")
            let gzip = try Self.curl(
                curl, transport.arguments(server), origin: transport.origin(server),
                Probe(path: "/live/demo/v1.m3u8", headers: ["Accept-Encoding: gzip"], status: 200))
            #expect(gzip.header("content-encoding") == "gzip", "\(gzip.fields)")
            #expect(gzip.body.starts(with: [0x1F, 0x8B]), "a gzip member")
        }

        // MARK: nghttp and h2load

        @Test("nghttp -nv fetches a playlist over h2 (ALPN) and over h2c (prior knowledge): 200, the whole gzip body, no GOAWAY error")
        func nghttpFetches() throws {
            let nghttp = try Self.tool("nghttp", package: "nghttp2-client")
            let curl = try Self.tool("curl", package: "curl")
            let server = try TLSServerFixture()
            defer { server.stop() }
            // nghttp asks for gzip: the reference is the gzip body over plain HTTP/1.1.
            let reference = try Self.curl(
                curl, ["--http1.1"], origin: server.plainOrigin,
                Probe(path: "/live/demo/master.m3u8", headers: ["Accept-Encoding: gzip, deflate"], status: 200))
            let length = reference.body.count
            try #require(reference.status == 200 && reference.header("content-encoding") == "gzip" && length > 0, "\(reference.fields)")
            for origin in ["https://127.0.0.1:\(server.tlsPort)", server.plainOrigin] {
                let run = try ToolRun.run(nghttp, ["-nv", "-t", "10", "\(origin)/live/demo/master.m3u8"], timeout: 20)
                let text = run.text + run.stderr
                #expect(run.status == 0 && !run.timedOut, "nghttp \(origin): exit \(run.status)\n\(text.suffix(2000))")
                if origin.hasPrefix("https") {
                    #expect(text.contains("The negotiated protocol: h2"), "ALPN: \(text.prefix(1500))")
                }
                #expect(text.contains(":status: 200"), "\(origin): \(text.suffix(2000))")
                #expect(text.contains("content-encoding: gzip") && text.contains("content-length: \(length)\n"), "\(origin): \(text.suffix(2000))")
                #expect(text.contains("recv DATA frame <length=\(length),"), "the whole body in one DATA frame: \(origin): \(text.suffix(2000))")
                #expect(text.contains("recv DATA frame <length=") && text.contains("END_STREAM"), "\(origin): \(text.suffix(2000))")
                // The connection ends with the client's GOAWAY; the server sent none with an error.
                let serverGoaways = text.components(separatedBy: "recv GOAWAY frame").dropFirst()
                #expect(serverGoaways.allSatisfy { $0.contains("error_code=NO_ERROR") }, "\(origin): \(text.suffix(2000))")
            }
        }

        /// One stream as `nghttp -v` showed it: the path it asked for, the status, the DATA bytes
        /// received and whether a frame ended it.
        struct NghttpStream {
            var path = ""
            var status = ""
            var dataBytes = 0
            var ended = false
        }

        /// The streams in `nghttp -v` output, by stream id.
        static func nghttpStreams(_ text: String) -> [Int: NghttpStream] {
            func number(after key: String, in line: Substring, radix: Int = 10) -> Int? {
                guard let range = line.range(of: key) else { return nil }
                return Int(line[range.upperBound...].prefix { $0.isHexDigit }, radix: radix)
            }
            var streams: [Int: NghttpStream] = [:]
            var sending: Int?
            for line in text.split(separator: "\n") {
                if line.contains("send HEADERS frame") {
                    sending = number(after: "stream_id=", in: line)
                } else if line.hasPrefix("          :path: "), let id = sending {
                    streams[id, default: NghttpStream()].path = String(line.dropFirst("          :path: ".count))
                } else if line.contains("] send ") || line.contains("] recv ") {
                    sending = nil
                }
                if line.contains("] recv ("), line.contains(") :status: "), let id = number(after: "stream_id=", in: line) {
                    streams[id, default: NghttpStream()].status = String(line.split(separator: " ").last ?? "")
                }
                if line.contains("] recv DATA frame") || line.contains("] recv HEADERS frame"),
                    let id = number(after: "stream_id=", in: line), let flags = number(after: "flags=0x", in: line, radix: 16)
                {
                    if line.contains("DATA"), let length = number(after: "length=", in: line) {
                        streams[id, default: NghttpStream()].dataBytes += length
                    }
                    if flags & 0x01 != 0 { streams[id, default: NghttpStream()].ended = true }
                }
            }
            return streams
        }

        /// A segment is larger than a 4 KiB stream window, so the server must wait for WINDOW_UPDATEs
        /// many times per segment, on several streams at once.
        @Test("nghttp with 4 KiB stream windows gets three renditions' segments at once on one h2 connection, every byte of each (flow control)")
        func nghttpFlowControl() throws {
            let nghttp = try Self.tool("nghttp", package: "nghttp2-client")
            let curl = try Self.tool("curl", package: "curl")
            let server = try TLSServerFixture()
            defer { server.stop() }
            var expected: [String: Int] = [:]
            for rendition in ["v0", "v1", "v2"] {
                let media = try Self.curl(curl, ["--http1.1"], origin: server.plainOrigin, Probe(path: "/live/demo/\(rendition).m3u8", status: 200))
                let uris = String(decoding: media.body, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
                try #require(uris.count >= 3, "\(rendition) is live")
                let path = "/live/demo/\(uris[uris.count / 2])"
                expected[path] = try Self.curl(curl, ["--http1.1"], origin: server.plainOrigin, Probe(path: path, status: 200)).body.count
            }
            try #require(expected.values.allSatisfy { $0 > 16_384 }, "segments larger than the windows: \(expected)")
            for origin in ["https://127.0.0.1:\(server.tlsPort)", server.plainOrigin] {
                let run = try ToolRun.run(nghttp, ["-nv", "-t", "20", "-w", "12", "-W", "14"] + expected.keys.sorted().map { origin + $0 }, timeout: 30)
                let text = run.text + run.stderr
                #expect(run.status == 0 && !run.timedOut, "nghttp \(origin): exit \(run.status)\n\(text.suffix(1500))")
                let streams = Self.nghttpStreams(run.text)
                for (path, length) in expected {
                    let stream = streams.values.first { $0.path == path }
                    #expect(
                        stream?.status == "200" && stream?.dataBytes == length && stream?.ended == true,
                        "\(origin)\(path): \(String(describing: stream)), expected \(length) bytes")
                }
                #expect(text.contains("recv WINDOW_UPDATE") || text.contains("send WINDOW_UPDATE"), "flow control was exercised")
            }
        }

        /// h2load's summary, e.g. `requests: 200 total, 200 started, 200 done, 200 succeeded, 0 failed, 0 errored, 0 timeout`
        /// and `status codes: 200 2xx, 0 3xx, 0 4xx, 0 5xx`: count by name.
        static func h2loadCounts(_ text: String, line prefix: String) -> [String: Int] {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return [:] }
            var counts: [String: Int] = [:]
            for item in line.dropFirst(prefix.count).split(separator: ",") {
                let words = item.split(separator: " ")
                if words.count == 2, let count = Int(words[0]) { counts[String(words[1])] = count }
            }
            return counts
        }

        @Test("h2load -n 200 -c 4 -m 10 on the shared media playlist: h2 and h2c, 200 of 200 succeeded, 0 errors, all 2xx")
        func h2loadAllSucceed() throws {
            let h2load = try Self.tool("h2load", package: "nghttp2-client")
            let server = try TLSServerFixture()
            defer { server.stop() }
            for origin in ["https://127.0.0.1:\(server.tlsPort)", server.plainOrigin] {
                let run = try ToolRun.run(h2load, ["-n", "200", "-c", "4", "-m", "10", "\(origin)/live/demo/v1.m3u8"], timeout: 60)
                let text = run.text
                #expect(run.status == 0 && !run.timedOut, "h2load \(origin): exit \(run.status)\n\(text)\n\(run.stderr)")
                let requests = Self.h2loadCounts(text, line: "requests: ")
                #expect(requests["total"] == 200 && requests["done"] == 200 && requests["succeeded"] == 200, "\(origin): \(text)")
                #expect(requests["failed"] == 0 && requests["errored"] == 0 && requests["timeout"] == 0, "\(origin): \(text)")
                let statuses = Self.h2loadCounts(text, line: "status codes: ")
                #expect(statuses["2xx"] == 200, "\(origin): \(text)")
                // h2load names h2 by ALPN `h2`, and HTTP/2 with prior knowledge over TCP `h2c`.
                let protocolName = origin.hasPrefix("https") ? "h2" : "h2c"
                #expect(text.contains("Application protocol: \(protocolName)\n"), "\(origin): \(text)")
            }
            #expect(Serve.get(port: server.plainPort, path: "/healthz").hasPrefix("HTTP/1.1 200"), "still serving")
        }

        // MARK: what no client should send

        /// A TLS 1.2 ClientHello as a browser starts one: SNI `serverName`, ALPN h2 and http/1.1,
        /// P-256 and ECDSA, two AEAD suites. Hand-made, so the test controls every byte.
        ///
        /// The plain listener reads it as an HTTP/1.1 request line, which ends at the first LF: the
        /// supported_groups extension's type (0x000A), present in every ECDHE ClientHello, is one, so
        /// the server answers 400 at once. (Bytes with no LF at all are a request line still
        /// arriving, held like any other until the idle timeout.)
        static func clientHello(serverName: String) -> [UInt8] {
            func u16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
            func u24(_ value: Int) -> [UInt8] { [UInt8(value >> 16 & 0xFF)] + u16(value) }
            func vector16(_ bytes: [UInt8]) -> [UInt8] { u16(bytes.count) + bytes }
            func ext(_ type: Int, _ data: [UInt8]) -> [UInt8] { u16(type) + vector16(data) }
            let name = Array(serverName.utf8)
            let sni = ext(0x0000, vector16([0] + vector16(name)))
            let alpn = ext(0x0010, vector16(["h2", "http/1.1"].flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }))
            let groups = ext(0x000A, vector16(u16(0x0017)))  // secp256r1
            let pointFormats = ext(0x000B, [1, 0])  // uncompressed
            let signatures = ext(0x000D, vector16(u16(0x0403) + u16(0x0804)))  // ecdsa_secp256r1_sha256, rsa_pss_rsae_sha256
            let extensions = sni + alpn + groups + pointFormats + signatures
            let random = (0..<32).map { _ in UInt8.random(in: 0...255) }
            let suites = u16(0xC02B) + u16(0xC02F)  // ECDHE-ECDSA/RSA-AES128-GCM-SHA256
            let hello = u16(0x0303) + random + [0] + vector16(suites) + [1, 0] + vector16(extensions)
            let handshake = [1] + u24(hello.count) + hello
            return [0x16, 0x03, 0x01] + vector16(handshake)
        }

        @Test("a plaintext HTTP/1.1 request to the TLS port is refused within 5 s (closed, a TLS alert or a 4xx; never a 200); the server stays up")
        func plaintextToTLSPortIsRefused() throws {
            let curl = try Self.tool("curl", package: "curl")
            let server = try TLSServerFixture()
            defer { server.stop() }
            let request = Array("GET /live/demo/master.m3u8 HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
            let exchange = try #require(LoopbackSocket.exchange(port: server.tlsPort, bytes: request, timeout: 5), "the TLS port accepts")
            #expect(exchange.closed, "the server closed the connection within 5 s (after \(exchange.elapsed) s; got \(exchange.received.prefix(64)))")
            #expect(!exchange.text.contains("#EXTM3U") && !exchange.text.hasPrefix("HTTP/1.1 2"), "served in clear: \(exchange.text.prefix(300))")
            // What it may send: a TLS alert record (type 21), or an HTTP/1.x 4xx that says why.
            let alert = exchange.received.first == 0x15
            let refusal = exchange.text.hasPrefix("HTTP/1.1 4") || exchange.text.hasPrefix("HTTP/1.0 4")
            #expect(exchange.received.isEmpty || alert || refusal, "neither nothing, an alert nor a 4xx: \(exchange.received.prefix(64))")

            let after = try Self.curl(curl, ["--http2"] + server.curlTrust, origin: server.httpsOrigin, Probe(path: "/healthz", status: 200))
            #expect(after.status == 200 && after.version == "2", "a following h2 request: \(after.status) over \(after.version)")
        }

        @Test("a TLS ClientHello to the plain port gets a 400 or a close within 5 s, not a hang and not HTTP/2; the same bytes get a ServerHello on the TLS port")
        func clientHelloToPlainPort() throws {
            let curl = try Self.tool("curl", package: "curl")
            let server = try TLSServerFixture()
            defer { server.stop() }
            let hello = Self.clientHello(serverName: "localhost")
            // The bytes are a real ClientHello: the TLS listener answers them with a ServerHello
            // (a handshake record whose first message is of type 2).
            let answered = try #require(LoopbackSocket.exchange(port: server.tlsPort, bytes: hello, timeout: 2), "the TLS port accepts")
            #expect(
                answered.received.count > 5 && Array(answered.received.prefix(3)) == [0x16, 0x03, 0x03] && answered.received[5] == 0x02,
                "ServerHello: \(answered.received.prefix(16))")

            let exchange = try #require(LoopbackSocket.exchange(port: server.plainPort, bytes: hello, timeout: 5), "the plain port accepts")
            #expect(exchange.closed, "closed within 5 s (after \(exchange.elapsed) s; got \(exchange.text.prefix(200)))")
            let badRequest = exchange.text.hasPrefix("HTTP/1.1 400") || exchange.text.hasPrefix("HTTP/1.0 400")
            #expect(exchange.received.isEmpty || badRequest, "a 400 or nothing: \(exchange.received.prefix(64)) \(exchange.text.prefix(200))")

            let after = try Self.curl(curl, ["--http2-prior-knowledge"], origin: server.plainOrigin, Probe(path: "/healthz", status: 200))
            #expect(after.status == 200 && after.version == "2", "a following h2c request: \(after.status) over \(after.version)")
        }

        /// The error codes of the GOAWAY frames among the HTTP/2 frames a server sent (`bytes` from
        /// its first frame on): `1` is PROTOCOL_ERROR.
        static func goawayErrorCodes(_ bytes: [UInt8]) -> [UInt32] {
            var codes: [UInt32] = []
            var index = 0
            while index + 9 <= bytes.count {
                let length = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
                let payload = index + 9
                guard payload + length <= bytes.count else { break }
                if bytes[index + 3] == 0x07, length >= 8 {
                    codes.append(bytes[(payload + 4)..<(payload + 8)].reduce(0) { $0 << 8 | UInt32($1) })
                }
                index = payload + length
            }
            return codes
        }

        /// RFC 9113 §5.4.1: after the GOAWAY for a connection error the endpoint MUST close the TCP
        /// connection. A client that says h2 by ALPN and then sends HTTP/1.1, or sends the h2c
        /// preface and then a frame other than SETTINGS, commits one (§3.4).
        @Test("an HTTP/2 connection error (HTTP/1.1 text after ALPN h2; a HEADERS frame on stream 0 after the h2c preface) gets GOAWAY PROTOCOL_ERROR and the connection closed within 5 s")
        func connectionErrorClosesTheConnection() throws {
            let openssl = try Self.tool("openssl", package: "openssl")
            let curl = try Self.tool("curl", package: "curl")
            let server = try TLSServerFixture()
            defer { server.stop() }
            let request = Array("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
            let tls = try ToolRun.run(
                openssl,
                [
                    "s_client", "-connect", "127.0.0.1:\(server.tlsPort)", "-servername", "localhost",
                    "-CAfile", server.authority.caCertificate, "-verify_return_error", "-alpn", "h2", "-quiet",
                ], stdin: request, timeout: 5)
            #expect(Self.goawayErrorCodes(tls.stdout) == [1], "h2: a GOAWAY with PROTOCOL_ERROR: \(tls.stdout.prefix(80)) \(tls.stderr.suffix(300))")
            #expect(!tls.timedOut, "h2: the server closed the connection within 5 s of its GOAWAY")

            let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
            let headersOnStreamZero: [UInt8] = [0, 0, 4, 0x01, 0x05, 0, 0, 0, 0] + Array("junk".utf8)
            let h2c = try #require(
                LoopbackSocket.exchange(port: server.plainPort, bytes: preface + headersOnStreamZero, timeout: 5), "the plain port accepts")
            #expect(Self.goawayErrorCodes(h2c.received) == [1], "h2c: a GOAWAY with PROTOCOL_ERROR: \(h2c.received.prefix(80))")
            #expect(h2c.closed, "h2c: the server closed the connection within 5 s of its GOAWAY")

            let after = try Self.curl(curl, ["--http2"] + server.curlTrust, origin: server.httpsOrigin, Probe(path: "/healthz", status: 200))
            #expect(after.status == 200 && after.version == "2", "a following h2 request: \(after.status) over \(after.version)")
        }

        /// `openssl s_client` offering `alpn` (nil: no ALPN extension): with `request`, it sends an
        /// HTTP/1.1 request once the handshake is done and reads until the server closes; without, it
        /// closes after the handshake. What it printed.
        static func sClient(_ openssl: String, _ server: TLSServerFixture, alpn: String?, request: Bool = true) throws -> String {
            var arguments = [
                "s_client", "-connect", "127.0.0.1:\(server.tlsPort)", "-servername", "localhost",
                "-CAfile", server.authority.caCertificate, "-verify_hostname", "localhost", "-verify_return_error",
            ]
            if let alpn { arguments += ["-alpn", alpn] }
            if request { arguments.append("-ign_eof") }
            let bytes = Array("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8)
            let run = try ToolRun.run(openssl, arguments, stdin: request ? bytes : [], timeout: 10)
            #expect(!run.timedOut, "openssl s_client \(alpn ?? "without ALPN") did not finish within 10 s")
            return run.text + "\n" + run.stderr
        }

        @Test("TLS versions and suites (openssl s_client): TLS 1.3 and TLS 1.2 AEAD suites are taken; a TLS 1.2 CBC suite and TLS 1.1 are refused")
        func tlsVersionsAndSuites() throws {
            let openssl = try Self.tool("openssl", package: "openssl")
            let server = try TLSServerFixture()
            defer { server.stop() }
            func handshake(_ options: [String]) throws -> ToolRun {
                try ToolRun.run(
                    openssl,
                    ["s_client", "-connect", "127.0.0.1:\(server.tlsPort)", "-servername", "localhost", "-CAfile", server.authority.caCertificate]
                        + options, stdin: [], timeout: 10)
            }
            let tls13 = try handshake(["-tls1_3"])
            #expect(tls13.status == 0 && tls13.text.contains("New, TLSv1.3, Cipher is TLS_"), "TLS 1.3: \(tls13.text.suffix(1500))")
            for suite in ["ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305"] {
                let run = try handshake(["-tls1_2", "-cipher", suite])
                #expect(run.status == 0 && run.text.contains("New, TLSv1.2, Cipher is \(suite)"), "\(suite): \(run.text.suffix(1500))")
                #expect(run.text.contains("Verify return code: 0 (ok)"), "\(suite): \(run.text.suffix(1500))")
            }
            // Offered by the client (security level 0 lets OpenSSL 3 offer them), refused by the server.
            for (name, options) in [
                ("TLS 1.2 CBC", ["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES128-SHA"]),
                ("TLS 1.1", ["-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"]),
            ] {
                let run = try handshake(options)
                #expect(run.status != 0 && !run.timedOut, "\(name) refused: exit \(run.status)\n\(run.text.suffix(800))")
                #expect(!run.text.contains("Verify return code: 0 (ok)") || run.text.contains("Cipher is (NONE)"), "\(name): \(run.text.suffix(800))")
                #expect(run.stderr.contains("alert") || run.stderr.contains("handshake failure"), "\(name): \(run.stderr.suffix(800))")
            }
            #expect(Serve.get(port: server.plainPort, path: "/healthz").hasPrefix("HTTP/1.1 200"), "still serving")
        }

        @Test("ALPN (openssl s_client): h2 and http/1.1 are chosen as offered; spdy/3 only or no ALPN get HTTP/1.1 with no protocol; the chain verifies for localhost")
        func alpnNegotiation() throws {
            let openssl = try Self.tool("openssl", package: "openssl")
            let curl = try Self.tool("curl", package: "curl")
            let server = try TLSServerFixture()
            defer { server.stop() }

            let h2 = try Self.sClient(openssl, server, alpn: "h2", request: false)
            #expect(h2.contains("ALPN protocol: h2"), "\(h2.suffix(2500))")
            #expect(h2.contains("Verify return code: 0 (ok)"), "\(h2.suffix(2500))")
            let preferred = try Self.sClient(openssl, server, alpn: "http/1.1,h2", request: false)
            #expect(preferred.contains("ALPN protocol: h2"), "the server's preference, h2, wins: \(preferred.suffix(2500))")

            for offer in ["http/1.1", "spdy/3,http/1.1"] {
                let text = try Self.sClient(openssl, server, alpn: offer)
                #expect(text.contains("ALPN protocol: http/1.1"), "\(offer): \(text.suffix(2500))")
                #expect(text.contains("HTTP/1.1 200"), "\(offer): \(text.suffix(2500))")
            }
            // No protocol in common, or no ALPN at all: the server selects none (no alert) and
            // speaks HTTP/1.1, as a client without ALPN expects.
            for offer in ["spdy/3", nil] {
                let text = try Self.sClient(openssl, server, alpn: offer)
                #expect(text.contains("No ALPN negotiated"), "\(offer ?? "no ALPN"): \(text.suffix(2500))")
                #expect(text.contains("Verify return code: 0 (ok)"), "\(offer ?? "no ALPN"): \(text.suffix(2500))")
                #expect(text.contains("HTTP/1.1 200"), "\(offer ?? "no ALPN"): \(text.suffix(2500))")
            }

            let after = try Self.curl(curl, ["--http2"] + server.curlTrust, origin: server.httpsOrigin, Probe(path: "/healthz", status: 200))
            #expect(after.status == 200 && after.version == "2", "a following h2 request: \(after.status) over \(after.version)")
        }
    }
}
