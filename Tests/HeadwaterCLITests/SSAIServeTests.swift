import Foundation
import Testing

extension RealClients {
    /// `/ssai/…` end to end against `headwater serve`: sessions, stitched playlists per device, token
    /// checks, "cue now", two-process determinism, and server-side beacons to a local endpoint.
    @Suite("Ad insertion over HTTP", .serialized)
    struct SSAIServeTests {
        typealias Serve = ServeCommandTests

        /// Starts a session for `query` and returns its media playlist paths by rendition name.
        static func startSession(port: Int, query: String) throws -> [String: String] {
            let response = Serve.get(port: port, path: "/ssai/demo/master.m3u8?\(query)")
            try #require(response.hasPrefix("HTTP/1.1 200"), "\(response.prefix(300))")
            #expect(response.contains("Cache-Control: private, no-store"), "personalized: never shared by a cache")
            var paths: [String: String] = [:]
            for uri in SSAIFixture.mediaURIs(SSAIFixture.body(response)) {
                let name = String(uri.prefix { $0 != "." })
                paths[name] = "/ssai/demo/\(uri)"
            }
            return paths
        }

        /// Polls `path` until its body contains `needle` (at most `seconds`): the last body.
        static func poll(port: Int, path: String, until needle: String, seconds: Double) -> String {
            let deadline = Date().addingTimeInterval(seconds)
            var body = ""
            repeat {
                body = SSAIFixture.body(Serve.get(port: port, path: path))
                if body.contains(needle) { return body }
                Thread.sleep(forTimeInterval: 0.5)
            } while Date() < deadline
            return body
        }

        static func adURIs(_ playlist: String) -> Set<String> {
            Set(playlist.split(separator: "\n").filter { $0.hasPrefix("/ads/") }.map { String($0.split(separator: "/")[1]) })
        }

        @Test("device=tv and device=phone sessions get different pods, with discontinuities, dates and SCTE-35 date ranges")
        func sessionsGetTheirOwnPods() throws {
            let fixture = try SSAIFixture()
            defer { fixture.remove() }
            let server = try TestServer(config: fixture.config.path, environment: SSAIFixture.environment)
            defer { server.stop() }
            let port = server.port
            let tv = try Self.startSession(port: port, query: "device=tv")
            let phone = try Self.startSession(port: port, query: "device=phone")
            #expect(Set(tv.keys) == ["v0", "v1", "v2", "audio-alt"], "\(tv)")
            #expect(tv["v0"] != phone["v0"], "each session has its own token")

            // A break starts within 20 s of any instant; its first ad segment is listed whole once
            // the content it replaces is complete (before that, only its parts).
            let tvPlaylist = Self.poll(port: port, path: tv["v0"]!, until: "\n/ads/", seconds: 40)
            let phonePlaylist = Self.poll(port: port, path: phone["v0"]!, until: "\n/ads/", seconds: 10)
            #expect(Self.adURIs(tvPlaylist) == ["ad1"], "\(tvPlaylist)")
            #expect(!Self.adURIs(phonePlaylist).isEmpty && Self.adURIs(phonePlaylist).isSubset(of: ["ad3", "ad4"]), "\(phonePlaylist)")
            for playlist in [tvPlaylist, phonePlaylist] {
                let lines = playlist.split(separator: "\n").map(String.init)
                let firstAd = try #require(lines.firstIndex { $0.hasPrefix("/ads/") })
                let before = lines[..<firstAd].filter { !$0.hasPrefix("#EXT-X-PART:") }.suffix(6)
                #expect(before.contains("#EXT-X-DISCONTINUITY"), "a discontinuity before the ad: \(before)")
                #expect(before.contains { $0.hasPrefix("#EXT-X-PROGRAM-DATE-TIME:") }, "a date after the discontinuity")
                #expect(playlist.contains("CLASS=\"com.headwater.ad-break\""), "one date range per break")
                #expect(playlist.contains("SCTE35-OUT=0x"), "SCTE35-OUT on the break's date range")
                #expect(playlist.contains("X-AD-ID="), "one date range per ad")
                // Content segments stay the shared, cacheable /live/ URLs.
                #expect(lines.contains { $0.hasPrefix("/live/demo/v0/") }, "content from /live/")
                // The foundation's linter accepts the stitched playlist.
                let lint = try HeadwaterProcess.run(["lint", "-"], stdin: playlist)
                #expect(lint.status == 0, "lint: \(lint.stdout)\(lint.stderr)")
            }
            // The alternate audio of the same session is stitched alike: same breaks, same numbering.
            let audio = SSAIFixture.body(Serve.get(port: port, path: tv["audio-alt"]!))
            #expect(Self.adURIs(audio) == ["ad1"], "\(audio)")

            // Ad segments are shared and cacheable.
            let adPath = try #require(tvPlaylist.split(separator: "\n").first { $0.hasPrefix("/ads/") })
            let adResponse = Serve.get(port: port, path: String(adPath))
            #expect(adResponse.hasPrefix("HTTP/1.1 200"), "\(adResponse.prefix(200))")
            #expect(!adResponse.contains("private"), "ad segments are not personalized")
        }

        @Test("forged, altered and missing session tokens get a one-line 403 or 400; bad targeting a 400")
        func badSessionsAreRefused() throws {
            let fixture = try SSAIFixture()
            defer { fixture.remove() }
            let server = try TestServer(config: fixture.config.path, environment: SSAIFixture.environment)
            defer { server.stop() }
            let port = server.port
            let tv = try Self.startSession(port: port, query: "device=tv")
            let path = try #require(tv["v1"])
            #expect(Serve.get(port: port, path: path).hasPrefix("HTTP/1.1 200"))

            // Flip one character of the token's payload.
            let token = String(path.split(separator: "=", maxSplits: 1)[1])
            let flipped = token.first == "A" ? "B" + token.dropFirst() : "A" + token.dropFirst()
            let forged = Serve.get(port: port, path: "/ssai/demo/v1.m3u8?session=\(flipped)")
            #expect(forged.hasPrefix("HTTP/1.1 403"), "\(forged.prefix(200))")
            #expect(SSAIFixture.body(forged).split(separator: "\n").count == 1, "one line: \(forged)")
            #expect(forged.contains("Cache-Control: private, no-store"))

            let junk = Serve.get(port: port, path: "/ssai/demo/v1.m3u8?session=not-a-token")
            #expect(junk.hasPrefix("HTTP/1.1 403"), "\(junk.prefix(200))")
            let missing = Serve.get(port: port, path: "/ssai/demo/v1.m3u8")
            #expect(missing.hasPrefix("HTTP/1.1 400"), "\(missing.prefix(200))")
            let badTargeting = Serve.get(port: port, path: "/ssai/demo/master.m3u8?channel=other")
            #expect(badTargeting.hasPrefix("HTTP/1.1 400"), "\(badTargeting.prefix(200))")
            let noChannel = Serve.get(port: port, path: "/ssai/nope/master.m3u8")
            #expect(noChannel.hasPrefix("HTTP/1.1 404"), "\(noChannel.prefix(200))")

            // A token signed with another key (another deployment) is refused too.
            let other = try TestServer(config: fixture.config.path, environment: ["HEADWATER_SESSION_KEY": "another-key-another-key-another"])
            defer { other.stop() }
            let otherPort = other.port
            let foreign = Serve.get(port: otherPort, path: path)
            #expect(foreign.hasPrefix("HTTP/1.1 403"), "\(foreign.prefix(200))")
        }

        @Test("two serve processes with the same configuration serve a session byte-identical stitched playlists")
        func twoProcessesAgree() throws {
            let fixture = try SSAIFixture()
            defer { fixture.remove() }
            let first = try TestServer(config: fixture.config.path, environment: SSAIFixture.environment)
            defer { first.stop() }
            let firstPort = first.port
            // The second node starts later: it must reach the same break log from the same content.
            Thread.sleep(forTimeInterval: 3)
            let second = try TestServer(config: fixture.config.path, environment: SSAIFixture.environment)
            defer { second.stop() }
            let secondPort = second.port
            let session = try Self.startSession(port: firstPort, query: "device=phone&geo=fr")
            var compared = 0
            var withAds = 0
            let deadline = Date().addingTimeInterval(45)
            while Date() < deadline, withAds < 2 || compared < 6 {
                for rendition in ["v0", "audio-alt"] {
                    let a = SSAIFixture.body(Serve.get(port: firstPort, path: session[rendition]!))
                    let b = SSAIFixture.body(Serve.get(port: secondPort, path: session[rendition]!))
                    // Both at the same playlist version (not straddling a segment or part boundary:
                    // the same first segment and the same preload hint): identical.
                    guard Self.mediaSequence(a) == Self.mediaSequence(b), Self.hint(a) == Self.hint(b), !a.isEmpty else { continue }
                    #expect(a == b, "node 1:\n\(a)\nnode 2:\n\(b)")
                    compared += 1
                    if a.contains("/ads/") { withAds += 1 }
                }
                Thread.sleep(forTimeInterval: 1)
            }
            #expect(compared >= 6, "compared \(compared) versions")
            #expect(withAds >= 2, "compared \(withAds) versions with ads")
        }

        static func hint(_ playlist: String) -> String? {
            playlist.split(separator: "\n").first { $0.hasPrefix("#EXT-X-PRELOAD-HINT:") }.map(String.init)
        }

        static func mediaSequence(_ playlist: String) -> String? {
            playlist.split(separator: "\n").first { $0.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") }.map(String.init)
        }

        @Test("cue now: POST /admin/channels/demo/breaks needs the admin token and starts a break at the next segment")
        func cueNow() throws {
            // A schedule far apart, so the break seen is the requested one.
            let fixture = try SSAIFixture(every: 3600, duration: 8)
            defer { fixture.remove() }
            let server = try TestServer(config: fixture.config.path, environment: SSAIFixture.environment)
            defer { server.stop() }
            let port = server.port
            func post(_ authorization: String?, _ query: String) -> String {
                let auth = authorization.map { "Authorization: Bearer \($0)\r\n" } ?? ""
                return Serve.exchange(
                    port: port,
                    request: Array("POST /admin/channels/demo/breaks\(query) HTTP/1.0\r\nHost: x\r\n\(auth)Content-Length: 0\r\n\r\n".utf8))
            }
            #expect(post(nil, "?duration=6").hasPrefix("HTTP/1.1 401"))
            #expect(post("wrong", "?duration=6").hasPrefix("HTTP/1.1 401"))
            #expect(post(SSAIFixture.adminToken, "?duration=abc").hasPrefix("HTTP/1.1 400"))
            let tv = try Self.startSession(port: port, query: "device=tv")
            let accepted = post(SSAIFixture.adminToken, "?duration=6")
            try #require(accepted.hasPrefix("HTTP/1.1 202"), "\(accepted)")
            let id = try #require(SSAIFixture.body(accepted).split(separator: "\"").dropFirst(3).first.map(String.init), "\(accepted)")
            // The break's date range is written on its first segment, listed once complete.
            let playlist = Self.poll(port: port, path: tv["v0"]!, until: "\n/ads/ad1/", seconds: 15)
            #expect(playlist.contains("ID=\"\(id)\""), "the requested break is in the playlist: \(playlist)")
            let shared = SSAIFixture.body(Serve.get(port: port, path: "/live/demo/v0.m3u8"))
            #expect(!shared.contains("/ads/"), "the shared playlist carries no ads")
        }

        @Test("server-side beacons reach a local tracking endpoint once per session and ad, however often it reloads")
        func beaconsAreSentOnce() throws {
            let beaconPort = try Serve.freePort()
            let beacons = FileManager.default.temporaryDirectory.appendingPathComponent("hw-beacons-\(beaconPort).log")
            // Python's http.server logs every request line it receives to stderr.
            let endpoint = Process()
            endpoint.executableURL = URL(fileURLWithPath: try #require(Serve.which("python3")))
            endpoint.arguments = ["-u", "-m", "http.server", "--bind", "127.0.0.1", "\(beaconPort)"]
            endpoint.currentDirectoryURL = FileManager.default.temporaryDirectory
            _ = FileManager.default.createFile(atPath: beacons.path, contents: nil)
            endpoint.standardError = try FileHandle(forWritingTo: beacons)
            endpoint.standardOutput = FileHandle.nullDevice
            try endpoint.run()
            defer {
                // SIGKILL: Python installs no SIGTERM handler, and it inherits this thread's signal
                // mask, in which SIGTERM is blocked; `terminate()` left it running after the test.
                kill(endpoint.processIdentifier, SIGKILL)
                endpoint.waitUntilExit()
                try? FileManager.default.removeItem(at: beacons)
            }
            let fixture = try SSAIFixture(beaconPort: beaconPort)
            defer { fixture.remove() }
            let server = try TestServer(config: fixture.config.path, environment: SSAIFixture.environment)
            defer { server.stop() }
            let port = server.port
            let tv = try Self.startSession(port: port, query: "device=tv")
            // Reload like a player until the whole of ad1 (3 segments) has been listed, then a bit more.
            _ = Self.poll(port: port, path: tv["v0"]!, until: "/ads/ad1/v0/seg-00002.ts", seconds: 45)
            for _ in 0..<6 {
                _ = Serve.get(port: port, path: tv["v0"]!)
                _ = Serve.get(port: port, path: tv["v1"]!)
                Thread.sleep(forTimeInterval: 0.5)
            }
            Thread.sleep(forTimeInterval: 1)
            let received = ((try? String(contentsOf: beacons, encoding: .utf8)) ?? "").split(separator: "\n")
            for event in ["impression", "midpoint", "complete"] {
                let lines = received.filter { $0.contains("\"GET /\(event)?session=") }
                #expect(lines.count == 1, "\(event): \(lines)")
                #expect(lines.first?.contains("&ad=") == true)
            }
            let metrics = Serve.get(port: port, path: "/metrics")
            #expect(metrics.contains("headwater_beacons_total"), "beacons are counted")

            // Stitched playlists are counted under their route template, like every request, on
            // both paths: HTTP/1.0 (above) takes the full path; a keep-alive HTTP/1.1 request
            // (here, with an HTTP/1.0 one pipelined behind it so the server closes) the fast path.
            func stitchedOK() -> Double {
                let line = Serve.get(port: port, path: "/metrics").split(separator: "\n").first {
                    $0.hasPrefix("headwater_http_requests_total{") && $0.contains(#"route="/ssai/{channel}/{rendition}.m3u8""#)
                        && $0.contains(#"method="GET""#) && $0.contains(#"status="200""#)
                }
                return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0
            }
            let before = stitchedOK()
            #expect(before >= 12)
            for _ in 0..<3 {
                let answer = Serve.exchange(
                    port: port,
                    request: Array("GET \(tv["v0"]!) HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.0\r\n\r\n".utf8))
                #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"))
            }
            #expect(stitchedOK() - before == 3)
        }
    }
}
