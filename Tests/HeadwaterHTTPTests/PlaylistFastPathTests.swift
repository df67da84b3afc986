import HeadwaterHLS
@testable import HeadwaterHTTP
import HeadwaterRuntime
import HeadwaterTesting
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization
import Testing

/// `OriginFastPath`: plain `GET`/`HEAD`s of shared playlists answered from pre-encoded bytes (with
/// delivery directives, from the responder's rendering), everything else by the full path, never reordered, and both paths answering alike.
@Suite("Playlist fast path")
struct PlaylistFastPathTests {
    private func get(_ path: String, _ extra: String = "") -> String {
        "GET \(path) HTTP/1.1\r\nHost: origin\r\n\(extra)\r\n"
    }

    /// A condition that always holds makes the full path answer the same request with a 200.
    private static let forceFullPath = "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n"

    @Test(arguments: [false, true])
    func bothPathsSendTheSameResponse(cors: Bool) throws {
        let harness = try PipelineHarness(cors: cors)
        defer { harness.finish() }
        let variants: [(String, String, Bool)] = [
            ("/live/demo/v1.m3u8", "", false),
            ("/live/demo/v1.m3u8", "Accept-Encoding: gzip, deflate, br\r\n", false),
            ("/live/demo/master.m3u8", "Accept-Encoding: gzip\r\n", false),
            ("/live/shaky/v1.m3u8", "User-Agent: test\r\n", false),
            // Delivery directives: the responder's own rendering, written by the fast path.
            ("/live/demo/v1.m3u8?_HLS_msn=3", "Accept-Encoding: gzip\r\n", false),
        ]
        for (path, extra, _) in variants {
            for method in ["GET", "HEAD"] {
                let request = "\(method) \(path) HTTP/1.1\r\nHost: origin\r\n\(extra)\r\n"
                let full = try harness.exchange(
                    "\(method) \(path) HTTP/1.1\r\nHost: origin\r\n\(extra)\(Self.forceFullPath)\r\n",
                    bodiless: { _ in method == "HEAD" })
                let finishedBefore = harness.fullPath.responsesFinished
                let fast = try harness.exchange(request, bodiless: { _ in method == "HEAD" })
                #expect(harness.fullPath.responsesFinished == finishedBefore, "\(method) \(path) \(extra) took the full path")
                try #require(fast.count == 1 && full.count == 1)
                #expect(fast[0].status == 200)
                #expect(fast[0].headers.map { "\($0.0): \($0.1)" } == full[0].headers.map { "\($0.0): \($0.1)" }, "\(method) \(path)")
                #expect(fast[0].body == full[0].body)
            }
        }
    }

    @Test func everythingElseTakesTheFullPath() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let requests = [
            get("/live/demo/v1.m3u8", "If-None-Match: \"demo-v1-v1\"\r\n"),  // 304
            get("/live/demo/v1.m3u8", "Range: bytes=0-9\r\n"),
            get("/live/demo/v9.m3u8"),  // 404
            get("/live/slow/v1.m3u8"),  // 503 while starting
            get("/healthz"),
            "OPTIONS /live/demo/v1.m3u8 HTTP/1.1\r\nHost: origin\r\n\r\n",
        ]
        for (index, request) in requests.enumerated() {
            _ = try harness.exchange(request)
            #expect(harness.fullPath.responsesFinished == index + 1, "\(request)")
        }
        // Back at a request boundary with nothing outstanding: the fast path answers again.
        let fast = try harness.send(get("/live/demo/v1.m3u8"))
        #expect(fast.status == 200 && fast.text == Fixture.mediaText)
        #expect(harness.fullPath.responsesFinished == requests.count)
    }

    @Test func pipelinedRequestsStayInOrderAcrossBothPaths() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let responses = try harness.exchange(
            get("/live/demo/v1.m3u8") + get("/healthz") + get("/live/demo/master.m3u8") + get("/live/demo/v1.m3u8", "Accept-Encoding: gzip\r\n")
        )
        #expect(responses.map(\.status) == [200, 200, 200, 200])
        #expect(responses[0].text == Fixture.mediaText)
        #expect(responses[1].text.hasPrefix("{"))
        #expect(responses[2].text == Fixture.masterText)
        #expect(responses[3].header("Content-Encoding") == "gzip")
        // The first was the fast path's; the full path took the connection from the second on.
        #expect(harness.fullPath.responsesFinished == 3)
    }

    @Test func aHeadSplitAcrossReadsIsAnsweredOnceWhole() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let request = get("/live/demo/v1.m3u8", "Accept-Encoding: gzip\r\n")
        let cut = request.utf8.count / 2
        #expect(try harness.exchange(String(request.prefix(cut))).isEmpty)
        let responses = try harness.exchange(String(request.dropFirst(cut)))
        #expect(responses.map(\.status) == [200])
        #expect(responses.first?.header("Content-Encoding") == "gzip")
        #expect(harness.fullPath.responsesFinished == 0)
    }

    @Test func aNewVersionOrANewSecondIsEncodedAgain() throws {
        let content = MutableContent(Fixture.content())
        let clock = Mutex<Int64>(Fixture.publishedAt + 100)
        let harness = try PipelineHarness(content: content, now: { clock.withLock { $0 } })
        defer { harness.finish() }
        let first = try harness.send(get("/live/demo/v1.m3u8"))
        #expect(first.header("ETag") == "\"demo-v1-v1\"")

        let newer = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:8\n#EXTINF:6.000,\nv1/seg8.ts\n"
        content.replace("demo") { $0.mediaPlaylists["v1"] = Fixture.playlist(newer, tag: "demo-v1-v2", targetDuration: 6) }
        let second = try harness.send(get("/live/demo/v1.m3u8"))
        #expect(second.header("ETag") == "\"demo-v1-v2\"")
        #expect(second.text == newer)
        #expect(second.header("Date") == first.header("Date"))

        clock.withLock { $0 += 1 }
        let third = try harness.send(get("/live/demo/v1.m3u8"))
        #expect(third.header("Date") == HTTPDate.format(unixSeconds: Fixture.publishedAt + 101))
        #expect(third.header("Expires") == HTTPDate.format(unixSeconds: Fixture.publishedAt + 101 + 3))
        #expect(harness.fullPath.responsesFinished == 0)
    }
}

extension PlaylistFastPathTests {
    /// The server's own content counts publishes, so the fast path skips fetching a snapshot while
    /// nothing was published; the next publish must still show on the next request.
    @Test func aPublishOnTheRegistryShowsOnTheNextRequest() throws {
        let registry = ChannelRegistry()
        var demo = try #require(Fixture.content().snapshot(of: "demo"))
        registry.publish(demo)
        let harness = try PipelineHarness(content: registry)
        defer { harness.finish() }
        #expect(try harness.send(get("/live/demo/v1.m3u8")).header("ETag") == "\"demo-v1-v1\"")
        #expect(try harness.send(get("/live/demo/v1.m3u8")).header("ETag") == "\"demo-v1-v1\"")
        demo.mediaPlaylists["v1"] = Fixture.playlist("#EXTM3U\n", tag: "demo-v1-v2", targetDuration: 6)
        registry.publish(demo)
        let after = try harness.send(get("/live/demo/v1.m3u8"))
        #expect(after.header("ETag") == "\"demo-v1-v2\"" && after.text == "#EXTM3U\n")
        registry.remove("demo")
        #expect(try harness.send(get("/live/demo/v1.m3u8")).status == 404)
        #expect(harness.fullPath.responsesFinished == 1)
    }
}

/// Content whose snapshots a test can replace.
final class MutableContent: OriginContent {
    private let channels: Mutex<[String: ChannelSnapshot]>

    init(_ content: FakeContent) {
        var channels: [String: ChannelSnapshot] = [:]
        for name in content.channelNames { channels[name] = content.snapshot(of: name) }
        self.channels = Mutex(channels)
    }

    func snapshot(of channel: String) -> ChannelSnapshot? { channels.withLock { $0[channel] } }
    var channelNames: [String] { channels.withLock { $0.keys.sorted() } }

    func replace(_ channel: String, _ change: (inout ChannelSnapshot) -> Void) {
        channels.withLock { channels in
            if var snapshot = channels[channel] {
                change(&snapshot)
                channels[channel] = snapshot
            }
        }
    }
}

/// `FastRequestScan` against NIO's own HTTP/1 decoder on generated heads: whatever the scanner lets
/// the fast path answer, NIO parses the same way (method, target, version, keep-alive, gzip), and
/// carries none of the fields that would change the answer.
@Suite("Fast request scan")
struct FastRequestScanTests {
    private func scan(_ text: String) -> FastRequestScan {
        Array(text.utf8).withUnsafeBufferPointer { FastRequestScan.scan($0) }
    }

    @Test func verdicts() {
        let plain = "GET /live/demo/v1.m3u8 HTTP/1.1\r\nHost: a\r\nAccept-Encoding: br;q=1, GZIP;q=0.5\r\nUser-Agent: x y\r\n\r\n"
        guard case .fast(let head) = scan(plain) else {
            Issue.record("not fast: \(scan(plain))")
            return
        }
        #expect(head.method == .get && head.acceptsGzip && head.length == plain.utf8.count)
        #expect(head.target == 4..<22)
        #expect(head.userAgent != nil && head.referer == nil)
        #expect(scan("HEAD /x HTTP/1.1\r\nHost: a\r\n\r\n") == .fast(.init(method: .head, target: 5..<7, acceptsGzip: false, length: 29)))
        #expect(scan("GET /x HTTP/1.1\r\nHost: a\r\n") == .incomplete)
        #expect(scan("GET /x HTTP/1.1\r\nHost: a\r\n\r") == .incomplete)
        #expect(scan("GET /x HTTP/1.1\nHost: a\n\n") == .unrecognized)
        #expect(scan("GET /x HTTP/1.1\r\n folded\r\n\r\n") == .unrecognized)
        #expect(scan("GET /x HTTP/2.0\r\n\r\n") == .unrecognized)
        #expect(scan("GET /x HTTP/1.0\r\n\r\n") == .full(length: 19, mayHaveBody: false))
        #expect(scan("GET /x?a=1 HTTP/1.1\r\nHost: a\r\n\r\n") == .fast(.init(method: .get, target: 4..<10, acceptsGzip: false, length: 32)))
        #expect(scan("PUT /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc") == .full(length: 38, mayHaveBody: true))
        #expect(scan("GET /x HTTP/1.1\r\nConnection: close\r\n\r\n") == .full(length: 38, mayHaveBody: false))
        #expect(scan("GET /x HTTP/1.1\r\nIf-None-Match: \"a\"\r\n\r\n") == .full(length: 39, mayHaveBody: false))
        #expect(scan("GET /x HTTP/1.1\r\nA: b\u{1}c\r\n\r\n") == .unrecognized)
        #expect(scan("GET /x HTTP/1.1\r\nBad Name: b\r\n\r\n") == .unrecognized)
    }

    @Test func agreesWithNIOsDecoder() throws {
        var r = SeededRandom(seed: 0xFA57)
        let methods = ["GET", "GET", "GET", "HEAD", "PUT", "OPTIONS", "get"]
        let targets = ["/live/demo/v1.m3u8", "/live/demo/master.m3u8", "/a%20b", "/x?y=1", "*", "/live/d/v1.m3u8#f"]
        let versions = ["HTTP/1.1", "HTTP/1.1", "HTTP/1.1", "HTTP/1.0"]
        let fields = [
            "Accept-Encoding: gzip", "accept-encoding: br, gzip;q=0", "ACCEPT-ENCODING: *;q=0.3",
            "Accept-Encoding: identity", "Accept-Encoding: x-gzip;q=0.001", "Connection: keep-alive", "Connection: close",
            "connection: Keep-Alive", "Range: bytes=0-1", "If-None-Match: \"x\"", "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT",
            "Content-Length: 0", "Transfer-Encoding: chunked", "User-Agent: Lavf/59", "Referer: http://a/b", "X-Playback-Session-Id: 1",
            "Expect: 100-continue", "X-Other:  spaced  ", "X-Empty:",
        ]
        var fastCount = 0
        for _ in 0..<600 {
            var text = "\(r.pick(methods)) \(r.pick(targets)) \(r.pick(versions))\r\nHost: origin\r\n"
            for _ in 0..<r.int(0...5) { text += r.pick(fields) + "\r\n" }
            text += "\r\n"
            let verdict = scan(text)
            guard case .fast(let head) = verdict else { continue }
            fastCount += 1
            let parsed = try #require(try Self.decodeWithNIO(text), "NIO rejects a head the scanner accepts: \(text)")
            #expect(parsed.method == (head.method == .get ? .GET : .HEAD), "\(text)")
            #expect(parsed.uri == String(decoding: Array(text.utf8)[head.target], as: UTF8.self), "\(text)")
            #expect(parsed.version == .http1_1 && parsed.isKeepAlive, "\(text)")
            #expect(AcceptEncoding.acceptsGzip(parsed.headers.joinedValues("accept-encoding")) == head.acceptsGzip, "\(text)")
            #expect(parsed.headers["range"].first == head.range.map { String(decoding: Array(text.utf8)[$0], as: UTF8.self) }, "\(text)")
            for name in ["if-none-match", "if-modified-since", "content-length", "transfer-encoding", "expect"] {
                #expect(!parsed.headers.contains(name: name), "\(name) in \(text)")
            }
            #expect(head.length == text.utf8.count)
        }
        #expect(fastCount > 60)  // the generator reaches the fast case often enough to mean something
    }

    /// The head NIO's `HTTPRequestDecoder` makes of `text`, or `nil` if it rejects it.
    private static func decodeWithNIO(_ text: String) throws -> HTTPRequestHead? {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        do {
            try channel.writeInbound(ByteBuffer(string: text))
        } catch {
            return nil
        }
        guard case .head(let head) = try channel.readInbound(as: HTTPServerRequestPart.self) else { return nil }
        return head
    }
}

extension HTTPHeaders {
    fileprivate func joinedValues(_ name: String) -> String? {
        let values = self[name]
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}
