@testable import HeadwaterHTTP
import HeadwaterRuntime
import HeadwaterTesting
import Logging
import NIOCore
import NIOEmbedded
import Testing

/// The assembled connection pipeline (NIO's HTTP/1.1 server handlers + ours) on an
/// `EmbeddedChannel`: raw request bytes in, raw response bytes out.
@Suite("Server pipeline")
struct ServerPipelineTests {
    private func get(_ path: String, _ extra: String = "") -> String {
        "GET \(path) HTTP/1.1\r\nHost: origin\r\n\(extra)\r\n"
    }

    @Test func mediaPlaylistIdentity() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let response = try harness.send(get("/live/demo/v1.m3u8"))
        #expect(response.status == 200)
        #expect(response.text == Fixture.mediaText)
        #expect(response.header("Content-Type") == "application/vnd.apple.mpegurl")
        #expect(response.header("Content-Encoding") == nil)
        #expect(response.header("Vary") == "Accept-Encoding")
        #expect(response.header("ETag") == "\"demo-v1-v1\"")
        #expect(response.header("Cache-Control") == "public, max-age=3")  // ½ × TD 6
        #expect(response.header("Expires") == HTTPDate.format(unixSeconds: Fixture.publishedAt + 100 + 3))
        #expect(response.header("Date") == HTTPDate.format(unixSeconds: Fixture.publishedAt + 100))
        #expect(response.header("Last-Modified") == HTTPDate.format(unixSeconds: Fixture.publishedAt))
        #expect(response.header("Content-Length") == String(Fixture.mediaText.utf8.count))
        #expect(response.header("Server") == "headwater")
        #expect(response.header("Connection") == nil)
        #expect(harness.isActive)
    }

    @Test func mediaPlaylistGzipWhenAccepted() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let response = try harness.send(get("/live/demo/v1.m3u8", "Accept-Encoding: br;q=1, gzip;q=0.8\r\n"))
        let expected = Gzip.stored(Array(Fixture.mediaText.utf8))
        #expect(response.status == 200)
        #expect(response.body == expected)
        #expect(Array(response.body.prefix(2)) == [0x1F, 0x8B])
        #expect(response.header("Content-Encoding") == "gzip")
        #expect(response.header("ETag") == "\"demo-v1-v1-gz\"")
        #expect(response.header("Vary") == "Accept-Encoding")
        #expect(response.header("Content-Length") == String(expected.count))
    }

    @Test func gzipRefusedByQZero() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let response = try harness.send(get("/live/demo/v1.m3u8", "Accept-Encoding: gzip;q=0, *\r\n"))
        #expect(response.header("Content-Encoding") == nil)
        #expect(response.text == Fixture.mediaText)
    }

    @Test func multivariantPlaylistCachePolicy() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let response = try harness.send(get("/live/demo/master.m3u8"))
        #expect(response.status == 200)
        #expect(response.text == Fixture.masterText)
        #expect(response.header("Cache-Control") == "public, max-age=3")
        #expect(response.header("ETag") == "\"demo-master-v1\"")
    }

    @Test func ifNoneMatchGives304WithTheMatchingRepresentationsTag() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let gzip = try harness.send(
            get("/live/demo/v1.m3u8", "Accept-Encoding: gzip\r\nIf-None-Match: \"demo-v1-v1-gz\"\r\n")
        )
        #expect(gzip.status == 304)
        #expect(gzip.body.isEmpty)
        #expect(gzip.header("ETag") == "\"demo-v1-v1-gz\"")
        #expect(gzip.header("Vary") == "Accept-Encoding")
        #expect(gzip.header("Cache-Control") == "public, max-age=3")
        #expect(gzip.header("Content-Length") == nil)
        #expect(gzip.header("Content-Type") == nil)
        #expect(gzip.header("Content-Encoding") == nil)

        let identity = try harness.send(get("/live/demo/v1.m3u8", "If-None-Match: W/\"x\", \"demo-v1-v1\"\r\n"))
        #expect(identity.status == 304)
        #expect(identity.header("ETag") == "\"demo-v1-v1\"")

        // The identity tag does not match the gzip representation: full response.
        let other = try harness.send(
            get("/live/demo/v1.m3u8", "Accept-Encoding: gzip\r\nIf-None-Match: \"demo-v1-v1\"\r\n")
        )
        #expect(other.status == 200)
        #expect(other.header("Content-Encoding") == "gzip")
    }

    @Test func headHasTheHeadersOfGetAndNoBody() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let getResponse = try harness.send(get("/live/demo/v1.m3u8", "Accept-Encoding: gzip\r\n"))
        let head = try harness.send(
            "HEAD /live/demo/v1.m3u8 HTTP/1.1\r\nHost: o\r\nAccept-Encoding: gzip\r\n\r\n",
            head: true
        )
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        for name in [
            "Content-Length", "Content-Type", "Content-Encoding", "ETag", "Vary", "Cache-Control", "Last-Modified",
        ] {
            #expect(head.header(name) == getResponse.header(name), "\(name)")
        }
        // Nothing but the head was written: the next request parses cleanly.
        #expect(try harness.send(get("/healthz")).status == 200)
    }

    @Test func degradedChannelStillServes() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        #expect(try harness.send(get("/live/shaky/v1.m3u8")).status == 200)
    }

    @Test func errorsAreOneLineWithStatusAndReason() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let cases: [(request: String, status: Int, body: String)] = [
            (get("/live/nope/master.m3u8"), 404, "404 Not Found: no channel \"nope\"\n"),
            (get("/live/demo/v9.m3u8"), 404, "404 Not Found: channel \"demo\" has no rendition \"v9\"\n"),
            (get("/live/demo/v9/seg1.ts"), 404, "404 Not Found: channel \"demo\" has no rendition \"v9\"\n"),
            (
                get("/live/demo/v1/seg99.ts"), 404,
                "404 Not Found: segment \"seg99.ts\" of \"demo\"/\"v1\" is not available\n"
            ),
            (
                get("/live/slow/master.m3u8"), 503,
                "503 Service Unavailable: channel \"slow\" is starting and has no playlist yet\n"
            ),
            (
                get("/live/slow/v1.m3u8"), 503,
                "503 Service Unavailable: channel \"slow\" is starting and has no playlist yet\n"
            ),
            (get("/live/%2e%2e/master.m3u8"), 400, "400 Bad Request: request path contains a '.' or '..' segment\n"),
            (get("/live/demo/v1.m3u8?_HLS_part=2"), 400, "400 Bad Request: _HLS_part requires _HLS_msn\n"),
            (get("/index.html"), 404, "404 Not Found: no such file\n"),
            (get("/ingest/demo/v1.m3u8"), 404, "404 Not Found: ingest is not enabled on this server\n"),
            (
                "POST /live/demo/master.m3u8 HTTP/1.1\r\nHost: o\r\nContent-Length: 0\r\n\r\n", 405,
                "405 Method Not Allowed: POST is not allowed here; use GET, HEAD, OPTIONS\n"
            ),
        ]
        for (request, status, body) in cases {
            let response = try harness.send(request)
            #expect(response.status == status, "\(request)")
            #expect(response.text == body)
            #expect(response.text.filter { $0 == "\n" }.count == 1)
            #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
            #expect(response.header("X-Content-Type-Options") == "nosniff")
        }
        #expect(harness.isActive)
    }

    @Test func errorFieldsAndCacheLifetimes() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let starting = try harness.send(get("/live/slow/master.m3u8"))
        #expect(starting.header("Cache-Control") == "public, max-age=4")  // 1 × TD 4
        #expect(starting.header("Retry-After") == "4")
        let missingSegment = try harness.send(get("/live/demo/v1/seg99.ts"))
        #expect(missingSegment.header("Cache-Control") == "public, max-age=1")
        let wrongMethod = try harness.send("DELETE /healthz HTTP/1.1\r\nHost: o\r\n\r\n")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow") == "GET, HEAD, OPTIONS")
    }

    @Test func health() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let response = try harness.send(get("/healthz"))
        #expect(response.status == 200)
        // Liveness: 200 even though two channels are not ready; the body says which and why.
        #expect(
            response.text
                == #"{"status":"degraded","channels":{"#
                + #""demo":{"state":"live","liveEdgeAgeSeconds":2.000,"targetDuration":6,"ready":true},"#
                + #""shaky":{"state":"degraded","reason":"source stalled","liveEdgeAgeSeconds":2.000,"#
                + #""targetDuration":6,"ready":false},"#
                + #""slow":{"state":"starting","liveEdgeAgeSeconds":null,"targetDuration":4,"ready":false}}}"# + "\n"
        )
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.header("Cache-Control") == "no-store")
        #expect(response.header("Expires") == nil)
    }

    @Test func corsHeadersAndPreflight() throws {
        let harness = try PipelineHarness(cors: true)
        defer { harness.finish() }
        let response = try harness.send(get("/live/demo/v1.m3u8", "Origin: https://player.example\r\n"))
        #expect(response.header("Access-Control-Allow-Origin") == "*")
        let exposed = try #require(response.header("Access-Control-Expose-Headers"))
        for name in ["Content-Length", "Content-Range", "ETag", "Date", "Age"] {
            #expect(exposed.contains(name))
        }
        let error = try harness.send(get("/live/nope/master.m3u8"))
        #expect(error.header("Access-Control-Allow-Origin") == "*")

        let preflight = try harness.send(
            "OPTIONS /live/demo/v1/seg1.ts HTTP/1.1\r\nHost: o\r\nOrigin: https://player.example\r\n"
                + "Access-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: range\r\n\r\n"
        )
        #expect(preflight.status == 204)
        #expect(preflight.body.isEmpty)
        #expect(preflight.header("Access-Control-Allow-Origin") == "*")
        #expect(preflight.header("Access-Control-Allow-Methods") == "GET, HEAD, OPTIONS")
        let allowed = try #require(preflight.header("Access-Control-Allow-Headers"))
        for name in ["Range", "If-None-Match", "Authorization", "Content-Type"] {
            #expect(allowed.contains(name))
        }
        #expect(preflight.header("Access-Control-Max-Age") == "86400")

        let asterisk = try harness.send("OPTIONS * HTTP/1.1\r\nHost: o\r\n\r\n")
        #expect(asterisk.status == 204)
        #expect(asterisk.header("Allow") == "OPTIONS")
    }

    @Test func noCORSHeadersWhenOff() throws {
        let harness = try PipelineHarness(cors: false)
        defer { harness.finish() }
        let response = try harness.send(get("/live/demo/v1.m3u8", "Origin: https://player.example\r\n"))
        #expect(response.header("Access-Control-Allow-Origin") == nil)
        let options = try harness.send("OPTIONS /live/demo/v1.m3u8 HTTP/1.1\r\nHost: o\r\n\r\n")
        #expect(options.status == 204)
        #expect(options.header("Allow") == "GET, HEAD, OPTIONS")
        #expect(options.header("Access-Control-Allow-Methods") == nil)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let responses = try harness.exchange(
            get("/live/demo/master.m3u8") + "HEAD /live/demo/v1.m3u8 HTTP/1.1\r\nHost: o\r\n\r\n" + get("/live/nope/x.m3u8")
                + get("/healthz") + get("/live/demo/v1.m3u8"),
            bodiless: { $0 == 1 }
        )
        #expect(responses.map(\.status) == [200, 200, 404, 200, 200])
        #expect(responses[0].text == Fixture.masterText)
        #expect(responses[1].body.isEmpty)
        #expect(responses[1].header("Content-Length") == String(Fixture.mediaText.utf8.count))
        #expect(responses[3].text.hasPrefix(#"{"status":"degraded","channels":{"demo":"#))
        #expect(responses[4].text == Fixture.mediaText)
    }

    @Test func http10ClosesUnlessKeepAlive() throws {
        let keepAlive = try PipelineHarness()
        defer { keepAlive.finish() }
        let kept = try keepAlive.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(kept.header("Connection") == "keep-alive")
        #expect(keepAlive.isActive)

        let plain = try PipelineHarness()
        let closed = try plain.send("GET /healthz HTTP/1.0\r\n\r\n")
        #expect(closed.status == 200)
        #expect(closed.header("Connection") == "close")
        #expect(!plain.isActive)

        let http11 = try PipelineHarness()
        let asked = try http11.send("GET /healthz HTTP/1.1\r\nHost: o\r\nConnection: close\r\n\r\n")
        #expect(asked.header("Connection") == "close")
        #expect(!http11.isActive)
    }

    @Test func malformedRequestGets400AndClose() throws {
        let harness = try PipelineHarness()
        let response = try harness.send("GET /healthz HTTP/1.1\r\nHost: o\r\nBad Header\r\n\r\n")
        #expect(response.status == 400)
        #expect(response.header("Connection") == "close")
        #expect(!harness.isActive)
    }

    @Test func accessLogLine() throws {
        let recorder = LogRecorder()
        let harness = try PipelineHarness(logger: recorder.logger)
        defer { harness.finish() }
        _ = try harness.send(get("/live/demo/v1.m3u8?x=1", "X-Playback-Session-Id: 1F2E-33\r\n"))
        let lines = recorder.snapshot.filter { $0.level == .info }
        try #require(lines.count == 1)
        let metadata = lines[0].metadata
        #expect(metadata["http.request.method"] == "GET")
        #expect(metadata["url.path"] == "/live/demo/v1.m3u8")
        #expect(metadata["http.route"] == "/live/{channel}/{rendition}.m3u8")
        #expect(metadata["http.response.status_code"] == "200")
        #expect(metadata["http.response.body.size"] == String(Fixture.mediaText.utf8.count))
        #expect(metadata["http.request.header.x-playback-session-id"] == "1F2E-33")
        #expect(metadata["http.server.request.duration_us"].flatMap { Int($0) } != nil)
    }

    @Test func ingestRefusedWithoutCredentials() throws {
        let sink = RecordingSink()
        let harness = try PipelineHarness(ingest: sink)
        defer { harness.finish() }
        let response = try harness.send("DELETE /ingest/demo/v1/seg1.ts HTTP/1.1\r\nHost: o\r\n\r\n")
        #expect(response.status == 401)
        #expect(response.text == "401 Unauthorized: missing or wrong credentials for channel \"demo\"\n")
        #expect(response.header("WWW-Authenticate") == "Bearer realm=\"headwater\"")
        #expect(response.header("Cache-Control") == "no-store")
        #expect(harness.isActive)  // no body was coming: the connection stays usable
        #expect(sink.snapshot.isEmpty)
    }

    @Test func ingestDelete() throws {
        let sink = RecordingSink()
        let harness = try PipelineHarness(ingest: sink)
        defer { harness.finish() }
        let response = try harness.send(
            "DELETE /ingest/demo/v1/seg1.ts HTTP/1.1\r\nHost: o\r\nAuthorization: Bearer secret\r\n\r\n"
        )
        #expect(response.status == 204)
        #expect(
            sink.snapshot == [
                .begin(channel: "demo", path: ["v1", "seg1.ts"], method: .delete, contentLength: 0), .finish,
            ]
        )
    }

    @Test func ingestPutWithContentLength() throws {
        let sink = RecordingSink()
        let harness = try PipelineHarness(ingest: sink)
        defer { harness.finish() }
        let response = try harness.send(
            "PUT /ingest/demo/v1.m3u8 HTTP/1.1\r\nHost: o\r\nAuthorization: Bearer secret\r\nContent-Length: 11\r\n\r\nhello world"
        )
        #expect(response.status == 201)
        #expect(sink.body == Array("hello world".utf8))
        #expect(sink.snapshot.first == .begin(channel: "demo", path: ["v1.m3u8"], method: .put, contentLength: 11))
        #expect(sink.snapshot.last == .finish)
    }

    @Test func ingestExpectContinue() throws {
        let sink = RecordingSink()
        let harness = try PipelineHarness(ingest: sink)
        defer { harness.finish() }
        try harness.channel.writeInbound(
            ByteBuffer(
                string:
                    "PUT /ingest/demo/a.ts HTTP/1.1\r\nHost: o\r\nAuthorization: Bearer secret\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"
            )
        )
        let interim = try #require(try harness.channel.readOutbound(as: IOData.self))
        guard case .byteBuffer(let buffer) = interim else { throw CancellationError() }
        #expect(String(buffer: buffer).hasPrefix("HTTP/1.1 100 Continue\r\n"))
        let response = try harness.send("abc")
        #expect(response.status == 201)
        #expect(sink.body == Array("abc".utf8))
    }
}
