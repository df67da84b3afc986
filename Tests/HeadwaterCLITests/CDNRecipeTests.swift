import Foundation
import Testing

extension RealClients {
    /// `Config/cdn/nginx-edge.conf`, as shipped, in Debian's nginx in front of two `headwater serve`
    /// origins (``CDNEdge``): what a CDN tier must do for a live HLS origin. Without nginx these
    /// tests fail and say what to install, rather than skipping.
    @Suite("CDN recipe (nginx edge)", .serialized)
    struct CDNRecipeTests {
        /// nginx keeps a playlist until `fetch time + max-age` in whole seconds (its clock is
        /// `time(2)`), and the copy stays fresh through the last second of that: with `max-age=1`, a
        /// copy fetched at 10.0 s or at 10.9 s is served until 12.0 s, 2 s or 1.1 s later. So the
        /// edge's copy is at most max-age + 1 s old, and it lags the origin's by less than that: it was
        /// the origin's current version when fetched. On top of that, ``slack`` covers scheduling on
        /// a busy two-core machine (a poll's own latency, an event loop that wakes late). The lag is
        /// measured against when the test first saw each version at the origin, so it reads short of
        /// the true lag by at most one poll interval.
        static let slack = 0.25
        static let pollInterval = 0.05
        static let pollSeconds = 20.0

        @Test("a live playlist through the edge lags the origin's by at most max-age + 1 s; the origin sees one request per expiry")
        func livePlaylistStaleness() throws {
            let edge = try CDNEdge()
            defer { edge.stop() }
            let path = "/live/demo/v1.m3u8"
            let first = try #require(HTTPProbe.get(port: edge.primary.port, path: path, userAgent: HTTPProbe.directAgent), "origin answers")
            let maxAge = try #require(first.maxAge, "origin Cache-Control: \(first.header("cache-control") ?? "none")")
            #expect(maxAge >= 1)
            let bound = Double(maxAge) + 1 + Self.slack

            // The origin and the edge side by side: when the origin first showed each media sequence
            // number, and what the edge showed when.
            var originFirstSeen: [Int: Double] = [:]
            var edgeSamples: [(time: Double, sequence: Int, cache: String)] = []
            let clock = TestClock()
            while clock.seconds < Self.pollSeconds {
                let asked = clock.seconds
                if let sequence = HTTPProbe.get(port: edge.primary.port, path: path, userAgent: HTTPProbe.directAgent)?.mediaSequence,
                    originFirstSeen[sequence] == nil
                {
                    originFirstSeen[sequence] = asked
                }
                let response = try #require(HTTPProbe.get(port: edge.port, path: path), "edge answers")
                #expect(response.status == 200, "\(response.head)")
                let sequence = try #require(response.mediaSequence, "a media playlist: \(response.text.prefix(300))")
                edgeSamples.append((clock.seconds, sequence, response.header("x-cache-status") ?? "none"))
                Thread.sleep(forTimeInterval: Self.pollInterval)
            }

            // An edge sample's lag: how long before it the origin had already moved past its version.
            let lags = edgeSamples.map { sample -> Double in
                let newer = originFirstSeen.filter { $0.key > sample.sequence }.map(\.value).min()
                return newer.map { max(0, sample.time - $0) } ?? 0
            }.sorted()
            let p50 = lags[lags.count / 2]
            let p90 = lags[lags.count * 9 / 10]
            let maxLag = lags.last ?? 0
            let statuses = Dictionary(grouping: edgeSamples.map(\.cache), by: { $0 }).mapValues(\.count)
            print(
                "CDN edge staleness: \(path) max-age=\(maxAge); \(edgeSamples.count) edge polls every \(Self.pollInterval) s over \(Self.pollSeconds) s;"
                    + " lag behind the origin max \(format(maxLag)) s, p90 \(format(p90)) s, p50 \(format(p50)) s (bound \(format(bound)) s);"
                    + " X-Cache-Status \(statuses.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
            #expect(maxLag <= bound, "lags: \(lags.suffix(10).map(format))")
            // The edge did follow the live edge, and did cache: most polls were hits.
            let sequences = Set(edgeSamples.map(\.sequence))
            #expect(sequences.count >= Int(Self.pollSeconds / 2) - 2, "the edge's playlist advanced: \(sequences.sorted())")
            #expect(statuses["HIT", default: 0] * 2 > edgeSamples.count, "\(statuses)")
            #expect(!edgeSamples.contains { $0.cache == "STALE" || $0.cache == "UPDATING" }, "no stale live playlist: \(statuses)")
            // The origin got about one request per expiry (at most one per second, plus the first),
            // not one per poll: the cache collapsed them.
            let originRequests = edge.primary.accessLogLines(containing: "\"GET \(path) HTTP/1.1\"", userAgent: HTTPProbe.userAgent).count
            #expect(originRequests >= 5 && Double(originRequests) <= Self.pollSeconds + 2, "origin requests from the edge: \(originRequests)")
        }

        @Test("segments are a MISS, then HITs, byte-identical to the origin's; ranges are exact on MISS and on HIT")
        func segmentsAndRanges() throws {
            let edge = try CDNEdge()
            defer { edge.stop() }
            let playlist = try #require(HTTPProbe.get(port: edge.port, path: "/live/demo/v1.m3u8"))
            let segments = playlist.segmentPaths(under: "/live/demo/")
            try #require(segments.count >= 3, "\(playlist.text)")
            let whole = segments[segments.count - 2]
            let ranged = segments[segments.count - 3]

            let origin = try #require(HTTPProbe.get(port: edge.primary.port, path: whole, userAgent: HTTPProbe.directAgent))
            #expect(origin.status == 200 && origin.body.count > 1_000)
            let miss = try #require(HTTPProbe.get(port: edge.port, path: whole))
            #expect(miss.status == 200 && miss.header("x-cache-status") == "MISS", "\(miss.head)")
            #expect(miss.body == origin.body, "edge MISS: \(miss.body.count) bytes, origin \(origin.body.count)")
            for _ in 0..<2 {
                let hit = try #require(HTTPProbe.get(port: edge.port, path: whole))
                #expect(hit.status == 200 && hit.header("x-cache-status") == "HIT", "\(hit.head)")
                #expect(hit.body == origin.body)
            }

            let bytes = try #require(HTTPProbe.get(port: edge.primary.port, path: ranged, userAgent: HTTPProbe.directAgent)).body
            try #require(bytes.count > 2_000)
            let cases: [(range: String, slice: Range<Int>, cache: String)] = [
                ("bytes=188-1315", 188..<1316, "MISS"),  // the first request for it: fetched whole, cut
                ("bytes=1000-1999", 1000..<2000, "HIT"),
                ("bytes=-500", (bytes.count - 500)..<bytes.count, "HIT"),
                ("bytes=\(bytes.count - 10)-", (bytes.count - 10)..<bytes.count, "HIT"),
            ]
            for (range, slice, cache) in cases {
                let response = try #require(HTTPProbe.get(port: edge.port, path: ranged, headers: [("Range", range)]))
                #expect(response.status == 206, "\(range): \(response.head)")
                #expect(response.header("x-cache-status") == cache, "\(range): \(response.head)")
                #expect(
                    response.header("content-range") == "bytes \(slice.lowerBound)-\(slice.upperBound - 1)/\(bytes.count)",
                    "\(range): \(response.head)")
                #expect(response.body == Array(bytes[slice]), "\(range): \(response.body.count) bytes")
            }
            // One origin request per segment, whatever the ranges and repeats.
            for path in [whole, ranged] {
                let requests = edge.primary.accessLogLines(containing: "\"GET \(path) HTTP/1.1\"", userAgent: HTTPProbe.userAgent)
                #expect(requests.count == 1, "\(requests)")
                #expect(requests.allSatisfy { $0.contains("\" 200 ") }, "the edge asked for the whole segment: \(requests)")
            }
        }

        @Test("Accept-Encoding is gzip or not: six spellings, two variants of a playlist, two origin requests")
        func acceptEncodingVariants() throws {
            let edge = try CDNEdge()
            defer { edge.stop() }
            let path = "/live/demo/master.m3u8"  // max-age=3: the six requests fall well within it
            let cases: [(acceptEncoding: String?, gzip: Bool, cache: String)] = [
                ("gzip, deflate, br", true, "MISS"),
                ("br;q=1.0, gzip;q=0.8", true, "HIT"),
                (nil, false, "MISS"),
                ("identity", false, "HIT"),
                ("gzip;q=0, br", false, "HIT"),
                ("x-gzip", true, "HIT"),
            ]
            for (acceptEncoding, gzip, cache) in cases {
                let response = try #require(
                    HTTPProbe.get(port: edge.port, path: path, headers: acceptEncoding.map { [("Accept-Encoding", $0)] } ?? []))
                let label = acceptEncoding ?? "no Accept-Encoding"
                #expect(response.status == 200, "\(label): \(response.head)")
                #expect(response.header("content-encoding") == (gzip ? "gzip" : nil), "\(label): \(response.head)")
                #expect(response.header("x-cache-status") == cache, "\(label): \(response.head)")
                #expect(response.header("vary") == "Accept-Encoding", "downstream caches still see Vary: \(response.head)")
                if !gzip { #expect(response.text.hasPrefix("#EXTM3U"), "\(label)") }
            }
            let requests = edge.primary.accessLogLines(containing: "\"GET \(path) HTTP/1.1\"", userAgent: HTTPProbe.userAgent)
            #expect(requests.count == 2, "\(requests)")
            #expect(requests.filter { $0.hasSuffix(" enc=gzip") }.count == 1, "\(requests)")
        }

        /// The danger with a caching edge is the session-starting URL: every TV viewer asks for the
        /// same `/ssai/demo/master.m3u8?device=tv`, and a cached answer would hand all of them the
        /// first viewer's session.
        @Test("stitched playlists are never cached: two viewers on one URL get two sessions; their headers reach the origin")
        func stitchedPlaylistsBypassTheCache() throws {
            let edge = try CDNEdge()
            defer { edge.stop() }
            let start = "/ssai/demo/master.m3u8?device=tv"
            var stitchedPaths: [String] = []
            for viewer in 0..<2 {
                let sessionID = "cdn-test-session-\(viewer)-\(UUID())"
                let userAgent = "cdn-test-edge AppleTV/\(viewer)"
                let master = try #require(
                    HTTPProbe.get(port: edge.port, path: start, headers: [("X-Playback-Session-Id", sessionID)], userAgent: userAgent))
                #expect(master.status == 200, "\(master.head)")
                #expect(master.header("x-cache-status") == nil, "never looked up in the cache: \(master.head)")
                #expect(master.header("cache-control") == "private, no-store")
                let variant = try #require(
                    master.text.split(separator: "\n").first { $0.hasPrefix("v1.m3u8?session=") }, "\(master.text)")
                stitchedPaths.append("/ssai/demo/\(variant)")
                // The origin saw this viewer's own request and headers (ad targeting, session seed).
                let lines = edge.primary.accessLogLines(containing: "\"GET \(start) HTTP/1.1\" 200 ", userAgent: userAgent)
                #expect(lines.count == 1, "\(lines)")
                #expect(lines.first?.contains(" sid=\(sessionID) ") == true, "\(lines)")
            }
            #expect(Set(stitchedPaths).count == 2, "two viewers, two session tokens: \(stitchedPaths)")

            for _ in 0..<3 {
                for path in stitchedPaths {
                    let response = try #require(HTTPProbe.get(port: edge.port, path: path))
                    #expect(response.status == 200, "\(response.head)")
                    #expect(response.header("x-cache-status") == nil, "never looked up in the cache: \(response.head)")
                    #expect(response.header("cache-control") == "private, no-store")
                    #expect(response.text.contains("#EXTINF"))
                }
            }
            // Every request went to the origin. (Its log keeps a token's payload and writes the
            // signature as `-`.)
            for path in stitchedPaths {
                let token = try #require(path.range(of: "session=")).upperBound
                let signature = try #require(path[token...].firstIndex(of: "."))
                let lines = edge.primary.accessLogLines(containing: "\"GET \(path[..<signature]).- HTTP/1.1\" 200 ")
                #expect(lines.count == 3, "\(path): \(lines.count) origin requests for 3 at the edge")
            }
            let stored = FileManager.default.enumerator(atPath: edge.cacheDirectory.path)?.allObjects.count ?? 0
            #expect(stored == 0, "nothing stored in the cache: \(stored) entries")
        }

        @Test("ingest, cue now and metrics are not exposed at the edge; health and the status page pass through")
        func operatorPathsStayAtTheOrigin() throws {
            let edge = try CDNEdge()
            defer { edge.stop() }
            for path in ["/metrics", "/admin/channels/demo/breaks?duration=10", "/ingest/demo/stream.m3u8"] {
                let response = try #require(HTTPProbe.get(port: edge.port, path: path))
                #expect(response.status == 404, "\(path): \(response.head)")
            }
            #expect(edge.primary.accessLogLines(containing: "\"GET /metrics ").isEmpty, "answered by the edge itself")
            for path in ["/healthz", "/api/status", "/"] {
                let response = try #require(HTTPProbe.get(port: edge.port, path: path))
                #expect(response.status == 200, "\(path): \(response.head)")
            }
        }

        @Test("SIGKILL of the primary origin mid-traffic: no failed request at the edge, the backup takes over")
        func failoverWithoutFailedRequests() throws {
            let edge = try CDNEdge()
            defer { edge.stop() }
            // The demo loop channel numbers its segments from the wall clock: both origins serve the
            // same playlist and the same bytes under each URI, so either can fill the cache.
            try edge.expectOriginsAgree()

            var failures: [String] = []
            var requests = 0
            var afterKill = 0
            var sequences: [Int] = []
            var killed = false
            let clock = TestClock()
            while clock.seconds < 7 {
                if !killed, clock.seconds >= 2 {
                    kill(edge.primary.process.processIdentifier, SIGKILL)
                    killed = true
                }
                for path in ["/live/demo/master.m3u8", "/live/demo/v1.m3u8"] {
                    let response = HTTPProbe.get(port: edge.port, path: path)
                    requests += 1
                    if killed { afterKill += 1 }
                    guard let response, response.status == 200 else {
                        failures.append("\(format(clock.seconds)) s \(path): \(response?.head ?? "no response")")
                        continue
                    }
                    if let sequence = response.mediaSequence { sequences.append(sequence) }
                    for segment in response.segmentPaths(under: "/live/demo/").suffix(1) {
                        let body = HTTPProbe.get(port: edge.port, path: segment)
                        requests += 1
                        if killed { afterKill += 1 }
                        if body?.status != 200 || (body?.body.count ?? 0) == 0 {
                            failures.append("\(format(clock.seconds)) s \(segment): \(body?.head ?? "no response")")
                        }
                    }
                }
                Thread.sleep(forTimeInterval: 0.02)
            }
            #expect(killed && !edge.primary.process.isRunning, "the primary was killed")
            #expect(failures.isEmpty, "\(failures.count) of \(requests) requests failed: \(failures.prefix(5))")
            #expect(afterKill >= 100, "\(afterKill) requests after the kill")
            #expect(sequences == sequences.sorted(), "the edge's media sequence never went back: \(sequences)")
            #expect(Set(sequences).count >= 3, "the live edge moved on across the kill: \(Set(sequences).sorted())")
            let served = edge.backup.accessLogLines(containing: "\"GET /live/demo/v1.m3u8 HTTP/1.1\" 200 ", userAgent: HTTPProbe.userAgent)
            #expect(!served.isEmpty, "the backup served the edge after the kill")
        }
    }
}

private func format(_ seconds: Double) -> String { String(format: "%.3f", seconds) }

/// Seconds since it was made, on the monotonic clock.
private struct TestClock {
    let start = ContinuousClock.now
    var seconds: Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

/// Two `headwater serve` origins (the shipped demo configuration, one session key, so either can
/// serve a session the other started) behind nginx running `Config/cdn/nginx-edge.conf` as
/// shipped: only its addresses and cache path are replaced, in a main `nginx.conf` of the test's own
/// (foreground, logs and temporary files in a temporary directory). `stop()` ends all three.
private struct CDNEdge {
    static let recipe = RealClients.ServeCommandTests.repository.appendingPathComponent("Config/cdn/nginx-edge.conf")
    static let sessionKey = "cdn-test-session-key-0123456789"

    let directory: URL
    let primary: TestServer
    let backup: TestServer
    let nginx: Process
    /// The edge's port on 127.0.0.1.
    let port: Int
    var cacheDirectory: URL { directory.appendingPathComponent("cache") }

    init() throws {
        let executable = try #require(
            Self.nginxExecutable(),
            "nginx is required (apt-get install -y nginx-light; Tests/tools/install-test-clients.sh installs it)")
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-cdn-\(UUID())")
        // 0755: nginx's workers run as nobody when the tests run as root, and read the temp files.
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("temp"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        let environment = ["HEADWATER_SESSION_KEY": Self.sessionKey]
        let primary = try TestServer(config: nil, environment: environment)
        let backup: TestServer
        do {
            backup = try TestServer(config: nil, environment: environment)
        } catch {
            primary.stop()
            throw error
        }
        self.primary = primary
        self.backup = backup
        do {
            port = try RealClients.ServeCommandTests.freePort()
            nginx = try Self.startNginx(executable, in: directory, origins: (primary.port, backup.port), port: port)
        } catch {
            primary.stop()
            backup.stop()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        var ready = false
        for _ in 0..<100 where !ready && nginx.isRunning {  // a config nginx rejects ends it at once
            ready = HTTPProbe.get(port: port, path: "/healthz")?.status == 200
            if !ready { Thread.sleep(forTimeInterval: 0.1) }
        }
        if !ready {
            let log = (try? String(contentsOf: directory.appendingPathComponent("nginx.out"), encoding: .utf8)) ?? ""
            let errors = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            stop()
            throw EdgeNotReady(description: "nginx did not answer /healthz through the edge: \(log.suffix(800)) \(errors.suffix(800))")
        }
    }

    /// nginx in the foreground on `port`, with the recipe templated into `directory`.
    private static func startNginx(
        _ executable: String, in directory: URL, origins: (primary: Int, backup: Int), port: Int
    ) throws -> Process {
        let edgeConfig = try Self.templated(
            String(contentsOf: Self.recipe, encoding: .utf8),
            [
                "192.0.2.11:8080": "127.0.0.1:\(origins.primary)",
                "192.0.2.12:8080": "127.0.0.1:\(origins.backup)",
                "listen 80;": "listen 127.0.0.1:\(port);",
                "/var/cache/nginx-headwater": directory.appendingPathComponent("cache").path,
            ])
        try edgeConfig.write(to: directory.appendingPathComponent("edge.conf"), atomically: true, encoding: .utf8)
        let temp = directory.appendingPathComponent("temp").path
        try """
            daemon off;
            worker_processes 1;
            pid \(directory.path)/nginx.pid;
            error_log \(directory.path)/error.log notice;
            events { worker_connections 1024; }
            http {
                access_log \(directory.path)/access.log;
                client_body_temp_path \(temp)/body;
                proxy_temp_path \(temp)/proxy;
                fastcgi_temp_path \(temp)/fastcgi;
                uwsgi_temp_path \(temp)/uwsgi;
                scgi_temp_path \(temp)/scgi;
                include \(directory.path)/edge.conf;
            }
            """.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)

        let nginx = Process()
        nginx.executableURL = URL(fileURLWithPath: executable)
        nginx.arguments = ["-p", directory.path + "/", "-c", directory.appendingPathComponent("nginx.conf").path]
        let output = directory.appendingPathComponent("nginx.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        nginx.standardOutput = handle
        nginx.standardError = handle
        try nginx.run()
        return nginx
    }

    struct EdgeNotReady: Error, CustomStringConvertible {
        let description: String
    }

    func stop() {
        if nginx.isRunning {
            nginx.terminate()  // SIGTERM: fast shutdown, the worker goes with the master
            nginx.waitUntilExit()
        }
        primary.stop()
        backup.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// nginx on PATH, or Debian's /usr/sbin/nginx (not on a non-root user's PATH).
    static func nginxExecutable() -> String? {
        RealClients.ServeCommandTests.which("nginx")
            ?? (FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") ? "/usr/sbin/nginx" : nil)
    }

    /// `text` with each key replaced by its value; each key must occur exactly once, so the test
    /// notices when the recipe changes shape instead of testing something else.
    static func templated(_ text: String, _ replacements: KeyValuePairs<String, String>) throws -> String {
        var text = text
        for (key, value) in replacements {
            let occurrences = text.components(separatedBy: key).count - 1
            try #require(occurrences == 1, "\(recipe.path) must contain \"\(key)\" exactly once (found \(occurrences))")
            text = text.replacingOccurrences(of: key, with: value)
        }
        return text
    }

    /// Both origins serve the same live playlist and the same bytes under a segment's URI (checked
    /// away from a segment boundary: a second try if the two answers straddle one).
    func expectOriginsAgree() throws {
        var playlists: (HTTPProbe.Response, HTTPProbe.Response)?
        for _ in 0..<3 {
            let a = try #require(HTTPProbe.get(port: primary.port, path: "/live/demo/v1.m3u8", userAgent: HTTPProbe.directAgent))
            let b = try #require(HTTPProbe.get(port: backup.port, path: "/live/demo/v1.m3u8", userAgent: HTTPProbe.directAgent))
            if a.mediaSequence == b.mediaSequence {
                playlists = (a, b)
                break
            }
            Thread.sleep(forTimeInterval: 0.3)
        }
        let (a, b) = try #require(playlists, "the two origins number the demo's segments alike")
        #expect(a.segmentPaths(under: "/live/demo/") == b.segmentPaths(under: "/live/demo/"))
        let segment = try #require(a.segmentPaths(under: "/live/demo/").first)
        let bytesA = try #require(HTTPProbe.get(port: primary.port, path: segment, userAgent: HTTPProbe.directAgent)).body
        let bytesB = try #require(HTTPProbe.get(port: backup.port, path: segment, userAgent: HTTPProbe.directAgent)).body
        #expect(!bytesA.isEmpty && bytesA == bytesB, "\(segment): the same bytes on both origins")
    }
}

extension TestServer {
    /// The access-log lines that contain `text` (and that came from `userAgent`, if given).
    fileprivate func accessLogLines(containing text: String, userAgent: String? = nil) -> [String] {
        Thread.sleep(forTimeInterval: 0.2)  // lines are written once per event-loop wake-up
        let contents = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return contents.split(separator: "\n").map(String.init).filter { line in
            line.contains(text) && userAgent.map { line.contains("\"\($0)\" rt=") } != false
        }
    }
}

/// A plain HTTP/1.0 client over a loopback socket, with `Connection: close` semantics: the whole
/// response as bytes, head parsed. Bounded in time (5 s without data ends the read).
private enum HTTPProbe {
    struct Response {
        var status: Int
        var head: String
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        /// The last field called `name` (case-insensitive).
        func header(_ name: String) -> String? {
            headers.last { $0.name.lowercased() == name.lowercased() }?.value
        }
        var text: String { String(decoding: body, as: UTF8.self) }
        /// `max-age` of `Cache-Control`.
        var maxAge: Int? {
            header("cache-control")?.split(separator: ",").lazy
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .first { $0.hasPrefix("max-age=") }
                .flatMap { Int($0.dropFirst("max-age=".count)) }
        }
        /// `EXT-X-MEDIA-SEQUENCE` of a media playlist.
        var mediaSequence: Int? {
            text.split(separator: "\n").first { $0.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") }
                .flatMap { Int($0.dropFirst("#EXT-X-MEDIA-SEQUENCE:".count)) }
        }
        /// The media playlist's segment URIs, as paths (relative URIs resolved against `base`).
        func segmentPaths(under base: String) -> [String] {
            text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
                .map { $0.hasPrefix("/") ? String($0) : base + $0 }
        }
    }

    /// The `User-Agent` of requests to the edge, and of the requests it forwards…
    static let userAgent = "cdn-test-edge"
    /// …and of the test's own requests straight to an origin, so that origin logs tell them apart.
    static let directAgent = "cdn-test-direct"

    /// `GET path` from 127.0.0.1:`port`; `nil` when the connection failed, the response was
    /// malformed or shorter than its `Content-Length`.
    static func get(port: Int, path: String, headers: [(String, String)] = [], userAgent: String = userAgent) -> Response? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        let fields = ([("Host", "127.0.0.1"), ("User-Agent", userAgent)] + headers).map { "\($0.0): \($0.1)\r\n" }.joined()
        let request = Array("GET \(path) HTTP/1.0\r\n\(fields)\r\n".utf8)
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            sent += count
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 { return nil }  // timeout or reset
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        return parse(bytes)
    }

    static func parse(_ bytes: [UInt8]) -> Response? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let body = Array(bytes[(end + separator.count)...])
        let response = Response(status: status, head: head, headers: headers, body: body)
        if let length = response.header("content-length").flatMap(Int.init), length != body.count { return nil }  // truncated
        return response
    }
}
