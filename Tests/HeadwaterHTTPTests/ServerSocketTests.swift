import AsyncHTTPClient
import HeadwaterHTTP
import HeadwaterTesting
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import ServiceLifecycle
import Testing

/// `OriginServer` on a real socket (127.0.0.1, ephemeral port) with AsyncHTTPClient and a raw
/// TCP client: `sendfile` segments, ranges, conditional requests, keep-alive, ingest, shutdown.
@Suite("Server over sockets")
struct ServerSocketTests {
    /// A temp directory with `seg1.ts` (10 000 bytes) and `big.ts` (2 MB), and content listing them.
    struct Segments {
        let directory: TemporaryDirectory
        let small: [UInt8]
        let big: [UInt8]
        let content: FakeContent

        init() throws {
            directory = try TemporaryDirectory()
            small = patternBytes(count: 10_000)
            big = patternBytes(count: 2 * 1024 * 1024, seed: 7)
            let smallPath = try directory.write("v1/seg1.ts", small)
            let bigPath = try directory.write("v1/big.ts", big)
            let ghostPath = directory.path + "/v1/ghost.ts"  // listed, never written
            content = Fixture.content(segments: [
                "seg1.ts": segmentFile(path: smallPath, length: small.count, tag: "seg-1"),
                "big.ts": segmentFile(path: bigPath, length: big.count, tag: "seg-big"),
                "ghost.ts": segmentFile(path: ghostPath, length: 100, tag: "seg-ghost"),
            ])
        }
    }

    private static func withClient<T>(
        decompression: Bool = false,
        _ body: (HTTPClient) async throws -> T
    ) async throws -> T {
        try await withHTTPClient(decompression: decompression, body)
    }

    private static func fetch(
        _ client: HTTPClient,
        _ url: String,
        method: HTTPMethod = .GET,
        headers: [(String, String)] = []
    ) async throws -> (HTTPClientResponse, [UInt8]) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 64 << 20)
        return (response, Array(body.readableBytesView))
    }

    @Test func segmentsRangesAndConditionals() async throws {
        let segments = try Segments()
        defer { segments.directory.remove() }
        let small = segments.small
        try await withServer(content: segments.content) { port in
            try await Self.withClient { client in
                let url = "http://127.0.0.1:\(port)/live/demo/v1/seg1.ts"

                let (full, fullBody) = try await Self.fetch(client, url)
                #expect(full.status == .ok)
                #expect(fullBody == small)
                #expect(full.headers.first(name: "Content-Type") == "video/mp2t")
                #expect(full.headers.first(name: "Accept-Ranges") == "bytes")
                #expect(full.headers.first(name: "ETag") == "\"seg-1\"")
                #expect(full.headers.first(name: "Cache-Control") == "public, max-age=1209600, immutable")
                #expect(full.headers.first(name: "Expires") != nil)
                #expect(full.headers.first(name: "Last-Modified") == HTTPDate.format(unixSeconds: Fixture.publishedAt))
                #expect(full.headers.first(name: "Content-Encoding") == nil)

                let (head, headBody) = try await Self.fetch(client, url, method: .HEAD)
                #expect(head.status == .ok)
                #expect(headBody.isEmpty)
                #expect(head.headers.first(name: "Content-Length") == "10000")

                let ranges: [(String, Int, Int)] = [
                    ("bytes=0-99", 0, 99), ("bytes=-500", 9500, 9999), ("bytes=100-", 100, 9999),
                ]
                for (range, first, last) in ranges {
                    let (partial, body) = try await Self.fetch(client, url, headers: [("Range", range)])
                    #expect(partial.status == .partialContent, "\(range)")
                    #expect(partial.headers.first(name: "Content-Range") == "bytes \(first)-\(last)/10000")
                    #expect(body == Array(small[first...last]), "\(range)")
                }

                let (unsatisfiable, message) = try await Self.fetch(client, url, headers: [("Range", "bytes=10000-")])
                #expect(unsatisfiable.status == .rangeNotSatisfiable)
                #expect(unsatisfiable.headers.first(name: "Content-Range") == "bytes */10000")
                #expect(String(decoding: message, as: UTF8.self).hasPrefix("416 Range Not Satisfiable: "))

                let (ifRangeMatch, matchBody) = try await Self.fetch(
                    client,
                    url,
                    headers: [("Range", "bytes=0-9"), ("If-Range", "\"seg-1\"")]
                )
                #expect(ifRangeMatch.status == .partialContent)
                #expect(matchBody == Array(small[0...9]))
                let (ifRangeStale, staleBody) = try await Self.fetch(
                    client,
                    url,
                    headers: [("Range", "bytes=0-9"), ("If-Range", "\"seg-0\"")]
                )
                #expect(ifRangeStale.status == .ok)
                #expect(staleBody == small)

                let (notModified, empty) = try await Self.fetch(client, url, headers: [("If-None-Match", "\"seg-1\"")])
                #expect(notModified.status == .notModified)
                #expect(empty.isEmpty)
                #expect(notModified.headers.first(name: "ETag") == "\"seg-1\"")
                let (failed, _) = try await Self.fetch(client, url, headers: [("If-Match", "\"seg-0\"")])
                #expect(failed.status == .preconditionFailed)

                let (ghost, ghostBody) = try await Self.fetch(client, "http://127.0.0.1:\(port)/live/demo/v1/ghost.ts")
                #expect(ghost.status == .notFound)
                #expect(String(decoding: ghostBody, as: UTF8.self).contains("no longer available"))
            }
        }
    }

    @Test func twoMegabyteSegment() async throws {
        let segments = try Segments()
        defer { segments.directory.remove() }
        let big = segments.big
        try await withServer(content: segments.content) { port in
            try await Self.withClient { client in
                let url = "http://127.0.0.1:\(port)/live/demo/v1/big.ts"
                let (response, body) = try await Self.fetch(client, url)
                #expect(response.status == .ok)
                #expect(body.count == big.count)
                #expect(sameBytes(body, big))
                let (tail, tailBody) = try await Self.fetch(client, url, headers: [("Range", "bytes=1048576-")])
                #expect(tail.status == .partialContent)
                #expect(sameBytes(tailBody, Array(big[1_048_576...])))
            }
        }
    }

    /// File bodies go out as the head plus up to 16 KiB read into the same write, the rest by
    /// `sendfile`, corked above 256 KiB: sizes around both edges, whole and in ranges, by the fast
    /// path and by the full one (an `If-None-Match` that does not match sends a request there).
    @Test func fileBodiesAroundTheSmallBodyAndCorkEdgesArriveIntact() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sizes = [0, 1, 16_383, 16_384, 16_385, 262_144, 262_145, 300_000]
        let files = Dictionary(uniqueKeysWithValues: sizes.map { ($0, patternBytes(count: $0, seed: UInt64($0))) })
        for (size, bytes) in files { try directory.write("f/\(size).bin", bytes) }
        try await withServer(configure: { $0.publicDirectory = directory.path }) { port in
            try await Self.withClient { client in
                for size in sizes {
                    let bytes = files[size]!
                    let url = "http://127.0.0.1:\(port)/f/\(size).bin"
                    for path in [[], [("If-None-Match", "\"other\"")]] {
                        let (whole, body) = try await Self.fetch(client, url, headers: path)
                        #expect(whole.status == .ok, "\(size) \(path)")
                        #expect(sameBytes(body, bytes), "\(size) bytes whole, \(path)")
                        guard size > 100 else { continue }
                        let (part, partBody) = try await Self.fetch(client, url, headers: path + [("Range", "bytes=100-")])
                        #expect(part.status == .partialContent, "\(size) \(path)")
                        #expect(sameBytes(partBody, Array(bytes[100...])), "\(size) bytes from 100, \(path)")
                    }
                }
            }
        }
    }

    @Test func gzipPlaylistDecodesInARealClient() async throws {
        try await withServer { port in
            try await Self.withClient(decompression: true) { client in
                let (response, body) = try await Self.fetch(
                    client,
                    "http://127.0.0.1:\(port)/live/demo/v1.m3u8",
                    headers: [("Accept-Encoding", "gzip")]
                )
                #expect(response.status == .ok)
                #expect(response.headers.first(name: "Content-Encoding") == "gzip")
                #expect(String(decoding: body, as: UTF8.self) == Fixture.mediaText)
            }
        }
    }

    @Test func staticFiles() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("index.html", Array("<h1>headwater</h1>".utf8))
        try directory.write("js/app.js", Array("console.log(1)".utf8))
        try directory.write(".secret", Array("no".utf8))
        try await withServer(configure: { $0.publicDirectory = directory.path }) { port in
            try await Self.withClient { client in
                let base = "http://127.0.0.1:\(port)"
                let (index, indexBody) = try await Self.fetch(client, base + "/")
                #expect(index.status == .ok)
                #expect(String(decoding: indexBody, as: UTF8.self) == "<h1>headwater</h1>")
                #expect(index.headers.first(name: "Content-Type") == "text/html; charset=utf-8")
                #expect(index.headers.first(name: "Cache-Control") == "public, max-age=60")
                let etag = try #require(index.headers.first(name: "ETag"))

                let (again, _) = try await Self.fetch(client, base + "/index.html", headers: [("If-None-Match", etag)])
                #expect(again.status == .notModified)
                let (script, scriptBody) = try await Self.fetch(
                    client,
                    base + "/js/app.js",
                    headers: [("Range", "bytes=0-6")]
                )
                #expect(script.status == .partialContent)
                #expect(String(decoding: scriptBody, as: UTF8.self) == "console")
                #expect(script.headers.first(name: "Content-Type") == "text/javascript; charset=utf-8")

                for path in ["/js", "/js/", "/.secret", "/missing.html"] {
                    let (response, _) = try await Self.fetch(client, base + path)
                    #expect(response.status == .notFound, "\(path)")
                }
            }
        }
    }

    @Test func keepAliveReusesOneConnection() async throws {
        try await withServer { port in
            let client = try await RawClient.connect(port: port)
            try await client.run { inbound, outbound in
                var inbound = inbound
                var bytes: [UInt8] = []
                try await outbound.write(ByteBuffer(string: "GET /live/demo/master.m3u8 HTTP/1.1\r\nHost: o\r\n\r\n"))
                let first = try await inbound.readResponses(1, into: &bytes)
                #expect(first.first?.text == Fixture.masterText)
                try await outbound.write(ByteBuffer(string: "GET /healthz HTTP/1.1\r\nHost: o\r\n\r\n"))
                let both = try await inbound.readResponses(2, into: &bytes)
                #expect(both.map(\.status) == [200, 200])
                #expect(both.allSatisfy { $0.header("Connection") == nil })
            }
        }
    }

    @Test func pipelinedFileResponsesStayInOrder() async throws {
        let segments = try Segments()
        defer { segments.directory.remove() }
        let small = segments.small
        try await withServer(content: segments.content) { port in
            let client = try await RawClient.connect(port: port)
            try await client.run { inbound, outbound in
                var inbound = inbound
                let segment = "/live/demo/v1/seg1.ts"
                try await outbound.write(
                    ByteBuffer(
                        string:
                            "GET \(segment) HTTP/1.1\r\nHost: o\r\nRange: bytes=0-99\r\n\r\n" + "HEAD \(segment) HTTP/1.1\r\nHost: o\r\n\r\n"
                            + "GET \(segment) HTTP/1.1\r\nHost: o\r\n\r\n" + "GET /live/demo/master.m3u8 HTTP/1.1\r\nHost: o\r\n\r\n"
                            + "GET /live/demo/v1/big.ts HTTP/1.1\r\nHost: o\r\nRange: bytes=-10\r\n\r\n"
                    )
                )
                var bytes: [UInt8] = []
                let responses = try await inbound.readResponses(5, into: &bytes, bodiless: { $0 == 1 })
                #expect(responses.map(\.status) == [206, 200, 200, 200, 206])
                #expect(responses[0].body == Array(small[0..<100]))
                #expect(responses[1].body.isEmpty && responses[1].header("Content-Length") == "10000")
                #expect(responses[2].body == small)
                #expect(responses[3].text == Fixture.masterText)
                #expect(responses[4].body == Array(segments.big.suffix(10)))
            }
        }
    }

    @Test(.timeLimit(.minutes(2)))  // a connection never closed would hang in `readToEnd`
    func idleKeepAliveConnectionsAreClosedButSlowDownloadsAreNot() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let big = patternBytes(count: 24 * 1024 * 1024, seed: 5)
        let path = try directory.write("huge.ts", big)
        let content = Fixture.content(segments: ["huge.ts": segmentFile(path: path, length: big.count, tag: "huge")])
        // The server may close a connection before a request written right after connecting
        // reaches it, when a loaded CI machine stalls this task past the idle timeout: that is the
        // behaviour under test, not a failure, so such an attempt is retried on a new connection.
        try await withServer(content: content, configure: { $0.idleTimeout = .seconds(2) }) { port in
            // Silent from the start, or after a response: closed once idle.
            let silent = try await RawClient.connect(port: port)
            let started = ContinuousClock.now
            // `/healthz` goes to the full path; the playlist is the fast path's alone (a connection
            // it never hands over, so it closes it itself).
            for request in ["GET /healthz HTTP/1.1\r\nHost: o\r\n\r\n", "GET /live/demo/v1.m3u8 HTTP/1.1\r\nHost: o\r\n\r\n"] {
                try await RawClient.retryingWhenClosedBeforeRequest(port: port) { inbound, outbound in
                    var inbound = inbound
                    var bytes: [UInt8] = []
                    try await outbound.write(ByteBuffer(string: request))
                    let responses = try await inbound.readResponses(1, into: &bytes)
                    if bytes.isEmpty { throw RawClient.ClosedBeforeResponse() }
                    #expect(responses.first?.status == 200, "\(request)")
                    try await inbound.readToEnd(into: &bytes)
                }
            }
            try await silent.run { inbound, _ in
                var inbound = inbound
                var bytes: [UInt8] = []
                try await inbound.readToEnd(into: &bytes)
                #expect(bytes.isEmpty)
            }
            // Closed by the server, not by the test giving up; generous, as a full parallel test run
            // can starve this task of the cooperative pool for many seconds.
            #expect(ContinuousClock.now - started < .seconds(60))

            // A reader that pauses longer than the idle timeout mid-response still gets it all.
            try await RawClient.retryingWhenClosedBeforeRequest(port: port) { inbound, outbound in
                var inbound = inbound
                try await outbound.write(ByteBuffer(string: "GET /live/demo/v1/huge.ts HTTP/1.1\r\nHost: o\r\n\r\n"))
                var bytes: [UInt8] = []
                guard let first = try await inbound.next() else { throw RawClient.ClosedBeforeResponse() }
                bytes.append(first)
                try await Task.sleep(for: .milliseconds(4_500))  // well past the 2 s idle timeout
                let responses = try await inbound.readResponses(1, into: &bytes)
                #expect(responses.first?.body.count == big.count)
                #expect(sameBytes(responses.first?.body, big))
            }
        }
    }

    @Test("a connection whose requests come more often than the idle timeout stays open", .timeLimit(.minutes(2)))
    func busyConnectionsAreNotIdle() async throws {
        let timeout = Duration.seconds(2)
        try await withServer(configure: { $0.idleTimeout = .seconds(2) }) { port in
            // Requests every 0.4 s for 3.2 s, on one connection, answered by the fast path: the
            // idle timer must count each one (it used to be a handler of NIO's own).
            // An attempt whose gaps a starved test task stretched near the timeout proves
            // nothing and is repeated, up to six times (a full parallel run starved three in a row).
            for attempt in 1...6 {
                let (answered, longestGap) = try await RawClient.connect(port: port).run { inbound, outbound in
                    var inbound = inbound
                    var answered = 0
                    var longestGap = Duration.zero
                    var last = ContinuousClock.now
                    for _ in 0..<9 {
                        try await Task.sleep(for: .milliseconds(400))
                        longestGap = max(longestGap, ContinuousClock.now - last)
                        last = .now
                        do {
                            try await outbound.write(ByteBuffer(string: "GET /live/demo/v1.m3u8 HTTP/1.1\r\nHost: o\r\n\r\n"))
                            var bytes: [UInt8] = []
                            let responses = try await inbound.readResponses(1, into: &bytes)
                            guard responses.first?.status == 200 else { break }
                        } catch {
                            // Closed: a failure below, unless a starved test task let the gap before
                            // this request reach the timeout (then the attempt is repeated).
                            break
                        }
                        answered += 1
                    }
                    return (answered, longestGap)
                }
                // Nothing answered at all: the time between the server's accept (when its idle timer
                // starts) and the first request is not in `longestGap`, and a starved task can spend
                // the whole timeout there (a clean-clone CI run did, with ffmpeg tests beside it).
                if longestGap > timeout - .milliseconds(500) || answered == 0, attempt < 6 { continue }
                #expect(answered == 9, "every request answered on the one connection (longest gap \(longestGap))")
                return
            }
        }
    }

    @Test func bindFailureIsReported() async throws {
        try await withServer { port in
            let second = OriginServer(
                configuration: OriginServerConfiguration(port: port),
                content: Fixture.content(),
                ingest: nil,
                logger: quietLogger
            )
            await #expect(throws: (any Error).self) { try await second.run() }
            await #expect(throws: (any Error).self) { _ = try await second.waitUntilListening() }
        }
    }

    @Test func ingestChunkedPutReachesTheSinkInOrder() async throws {
        let sink = RecordingSink()
        let chunks = (0..<20).map { patternBytes(count: 3000 + $0, seed: UInt64($0)) }
        try await withServer(ingest: sink) { port in
            try await Self.withClient { client in
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/ingest/demo/v1/seg9.ts")
                request.method = .PUT
                request.headers.add(name: "Authorization", value: "Bearer secret")
                let stream = AsyncStream<ByteBuffer> { continuation in
                    for chunk in chunks { continuation.yield(ByteBuffer(bytes: chunk)) }
                    continuation.finish()
                }
                request.body = .stream(stream, length: .unknown)
                let response = try await client.execute(request, timeout: .seconds(10))
                #expect(response.status == .created)
                _ = try await response.body.collect(upTo: 1024)
            }
        }
        let events = sink.snapshot
        #expect(events.first == .begin(channel: "demo", path: ["v1", "seg9.ts"], method: .put, contentLength: nil))
        #expect(events.last == .finish)
        #expect(!events.contains(.abort))
        #expect(sink.body == chunks.flatMap { $0 })
    }

    @Test func unauthorizedIngest() async throws {
        let sink = RecordingSink()
        try await withServer(ingest: sink) { port in
            try await Self.withClient { client in
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/ingest/demo/v1.m3u8")
                request.method = .PUT
                request.body = .bytes(ByteBuffer(string: "#EXTM3U\n"))
                let response = try await client.execute(request, timeout: .seconds(10))
                let body = try await response.body.collect(upTo: 1024)
                #expect(response.status == .unauthorized)
                #expect(String(buffer: body) == "401 Unauthorized: missing or wrong credentials for channel \"demo\"\n")
                #expect(response.headers.first(name: "WWW-Authenticate") == "Bearer realm=\"headwater\"")
            }
        }
        #expect(sink.snapshot.isEmpty)
    }

    @Test func oversizedUploadGets413AndAborts() async throws {
        let sink = RecordingSink()
        try await withServer(ingest: sink, configure: { $0.maxIngestBodyBytes = 10_000 }) { port in
            // Chunked, so the limit is found mid-body.
            let client = try await RawClient.connect(port: port)
            let response: RawResponse? = try await client.run { inbound, outbound in
                var inbound = inbound
                try await outbound.write(
                    ByteBuffer(
                        string:
                            "PUT /ingest/demo/v1/seg1.ts HTTP/1.1\r\nHost: o\r\nAuthorization: Bearer secret\r\nTransfer-Encoding: chunked\r\n\r\n"
                    )
                )
                let chunk = patternBytes(count: 4096)
                for _ in 0..<4 {
                    var buffer = ByteBuffer(string: String(chunk.count, radix: 16) + "\r\n")
                    buffer.writeBytes(chunk)
                    buffer.writeString("\r\n")
                    try await outbound.write(buffer)
                }
                var bytes: [UInt8] = []
                try await inbound.readToEnd(into: &bytes)  // the server closes after answering
                return RawResponse.parseAll(bytes).0.first
            }
            let answer = try #require(response)
            #expect(answer.status == 413)
            #expect(answer.text == "413 Payload Too Large: the body is larger than 10000 bytes\n")
            #expect(answer.header("Connection") == "close")

            // Declared too large up front: refused before the sink is asked.
            let second = try await RawClient.connect(port: port)
            let early: RawResponse? = try await second.run { inbound, outbound in
                var inbound = inbound
                try await outbound.write(
                    ByteBuffer(
                        string:
                            "PUT /ingest/demo/v1/seg2.ts HTTP/1.1\r\nHost: o\r\nAuthorization: Bearer secret\r\nContent-Length: 20000\r\n\r\n"
                    )
                )
                var bytes: [UInt8] = []
                return try await inbound.readResponses(1, into: &bytes).first
            }
            #expect(early?.status == 413)
        }
        let events = sink.snapshot
        #expect(events.filter { if case .begin = $0 { true } else { false } }.count == 1)
        #expect(events.last == .abort)
        #expect(!events.contains(.finish))
        #expect(sink.body.count <= 10_000)
    }

    @Test func truncatedUploadAborts() async throws {
        let sink = RecordingSink()
        try await withServer(ingest: sink) { port in
            let client = try await RawClient.connect(port: port)
            try await client.run { _, outbound in
                try await outbound.write(
                    ByteBuffer(
                        string:
                            "PUT /ingest/demo/v1/seg1.ts HTTP/1.1\r\nHost: o\r\nAuthorization: Bearer secret\r\nContent-Length: 1000\r\n\r\n"
                            + String(repeating: "x", count: 100)
                    )
                )
                try await sink.waitFor { $0 == .chunk(Array(repeating: UInt8(ascii: "x"), count: 100)) }
            }  // closes mid-body
            try await sink.waitFor { $0 == .abort }
        }
        #expect(!sink.snapshot.contains(.finish))
    }

    /// ffmpeg's HTTP `PUT` sends the last chunk and closes without reading the answer: the upload
    /// is complete, so it is finished (published), not aborted, and its access line is logged.
    @Test func completeUploadWhoseClientLeavesBeforeTheAnswerFinishes() async throws {
        let sink = RecordingSink(finishTakes: .milliseconds(300))
        let log = LogRecorder()
        try await withServer(ingest: sink, accessLogger: log.logger) { port in
            let client = try await RawClient.connect(port: port)
            try await client.run { _, outbound in
                try await outbound.write(
                    ByteBuffer(
                        string:
                            "PUT /ingest/demo/v1/seg1.ts HTTP/1.1\r\nHost: o\r\nAuthorization: Bearer secret\r\n"
                            + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"))
                try await sink.waitFor { if case .begin = $0 { true } else { false } }
            }  // closes without reading
            try await sink.waitFor { $0 == .finish }
            for _ in 0..<100 where log.count("PUT /ingest/demo/v1/seg1.ts") == 0 {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        #expect(!sink.snapshot.contains(.abort))
        #expect(sink.body == Array("hello".utf8) as [UInt8])
        #expect(log.lines.contains { $0.contains("\"PUT /ingest/demo/v1/seg1.ts HTTP/1.1\" 201 0 ") }, "\(log.lines)")
    }

    @Test func gracefulShutdownFinishesDownloadsAndRefusesNewConnections() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let big = patternBytes(count: 24 * 1024 * 1024, seed: 3)
        let path = try directory.write("huge.ts", big)
        let content = Fixture.content(segments: ["huge.ts": segmentFile(path: path, length: big.count, tag: "huge")])
        let server = OriginServer(
            configuration: OriginServerConfiguration(port: 0, shutdownGracePeriod: .seconds(15)),
            content: content,
            ingest: nil,
            logger: quietLogger
        )
        let group = ServiceGroup(services: [server], logger: quietLogger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let port = try #require(try await server.waitUntilListening().port)

            let idle = try await RawClient.connect(port: port)
            let download = try await RawClient.connect(port: port)
            try await download.run { inbound, outbound in
                var inbound = inbound
                try await outbound.write(ByteBuffer(string: "GET /live/demo/v1/huge.ts HTTP/1.1\r\nHost: o\r\n\r\n"))
                var bytes: [UInt8] = []
                guard let first = try await inbound.next() else { throw CancellationError() }
                bytes.append(first)

                await group.triggerGracefulShutdown()
                try await Task.sleep(for: .milliseconds(200))  // a slow reader: the server is blocked on us

                await #expect(throws: (any Error).self) { _ = try await RawClient.connect(port: port) }
                // The idle keep-alive connection was closed.
                try await idle.run { idleInbound, _ in
                    var idleInbound = idleInbound
                    let next = try? await idleInbound.next()  // EOF, or a reset if never accepted
                    #expect(next == nil)
                }

                try await inbound.readToEnd(into: &bytes)  // the server closes once the response is done
                let (responses, consumed) = RawResponse.parseAll(bytes)
                #expect(responses.count == 1)
                #expect(responses.first?.status == 200)
                #expect(responses.first?.body.count == big.count)
                #expect(sameBytes(responses.first?.body, big))
                #expect(consumed == bytes.count)
            }
            try await tasks.waitForAll()  // run() returned
        }
        #expect(server.localAddress == nil)
    }
}
