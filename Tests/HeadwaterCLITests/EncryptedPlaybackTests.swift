import Foundation
import Testing

extension RealClients {
    /// An AES-128 channel (issue 19) against real clients: the demo loop channel with
    /// `encryption: {method: AES-128, rotate_every: 3}` (a new key every 6 s), a 6 s ad break every
    /// 15 s with clear ads, and a fixed `HEADWATER_KEY_SECRET`. ffmpeg, GStreamer hlsdemux2 and
    /// hls.js decrypt and play it; openssl decrypts a served segment to the package's bytes; two
    /// nodes agree byte for byte; keys go only to entitled requests.
    @Suite("Encrypted channels with real players", .serialized)
    struct EncryptedPlaybackTests {
        typealias Serve = ServeCommandTests

        /// The decimal media sequence number in a segment URI (`…/v1/897900122.ts?…`).
        static func number(_ uri: String) -> UInt64? {
            let file = uri.split(separator: "?").first?.split(separator: "/").last ?? ""
            return UInt64(file.prefix { $0.isNumber })
        }

        /// The key URI the interface gives segment `msn` (live numbering) of the demo channel.
        static func keyPath(_ msn: UInt64, rotateEvery: UInt64 = 3) -> String { "/keys/demo/\(msn / rotateEvery).key" }

        /// The hex digits of an `IV` attribute (`0x` and 32 hex digits), or nil when it is not one.
        static func ivHex(_ attribute: String?) -> String? {
            guard let attribute, attribute.count == 34, attribute.lowercased().hasPrefix("0x") else { return nil }
            let digits = attribute.dropFirst(2)
            return digits.allSatisfy(\.isHexDigit) ? digits.lowercased() : nil
        }

        /// The session token of a session's media playlist path (`/ssai/demo/v1.m3u8?session=T`).
        static func token(_ path: String) -> String { String(path.split(separator: "=", maxSplits: 1).last ?? "") }

        // MARK: ffmpeg

        @Test("ffmpeg reads the encrypted /live playlist for 30 s, past key rotations, and a stitched session through a break")
        func ffmpegReadsEncrypted() throws {
            let ffmpeg = try #require(Serve.which("ffmpeg"), "ffmpeg is required (.ci/run installs it)")
            let fixture = try EncryptionFixture()
            defer { fixture.remove() }
            let server = try TestServer(config: fixture.config.path, environment: EncryptionFixture.environment())
            defer { server.stop() }
            let port = server.port
            try #require(Serve.waitForPlaylist(port: port, path: "/live/demo/v1.m3u8"), "the channel went live")

            let (status, text) = try Serve.ffmpegRead(ffmpeg, "http://127.0.0.1:\(port)/live/demo/v1.m3u8", seconds: 30)
            #expect(status == 0, "ffmpeg exit \(status): \(text.suffix(1500))")
            #expect(Serve.playbackProblems(text, seconds: 30).isEmpty, "\(Serve.playbackProblems(text, seconds: 30))")
            let complaints = text.split(separator: "\n").filter {
                $0.contains("[error]") || ($0.contains("[warning]") && ($0.lowercased().contains("crypt") || $0.contains("key")))
            }.filter { !["non monotonically increasing dts", "Packet corrupt", "corrupt input packet", "out of order"].contains(where: $0.contains) }
            #expect(complaints.isEmpty, "decrypt or decode errors: \(complaints)")
            // It decrypted and decoded 30 s of 25 fps video (the live start may trim a frame or two).
            let videoFrames = text.components(separatedBy: "(video): ").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }.max() ?? 0
            #expect(videoFrames >= 720, "video frames: \(videoFrames)")
            // Past at least two rotations: three keys or more fetched, each a /keys/demo/ URI.
            let keys = Set(text.split(separator: "\n").filter { $0.contains("Opening '") && $0.contains("/keys/demo/") }
                .compactMap { $0.split(separator: "'").dropFirst().first.map(String.init) })
            #expect(keys.count >= 3, "key URIs opened: \(keys)")
            let segments = text.split(separator: "\n").filter { $0.contains("Opening '") && $0.contains("/live/demo/v1/") }
            #expect(segments.count >= 12, "segments opened: \(segments.count)")

            // The stitched session: encrypted content, clear ads, content again after the break.
            let session = try SSAIServeTests.startSession(port: port, query: "device=tv")
            let (stitchedStatus, stitched) = try Serve.ffmpegRead(ffmpeg, "http://127.0.0.1:\(port)\(session["v1"]!)", seconds: 30)
            #expect(stitchedStatus == 0, "ffmpeg exit \(stitchedStatus): \(stitched.suffix(1500))")
            let problems = Serve.playbackProblems(stitched, seconds: 30)
            #expect(problems.isEmpty, "\(problems)")
            let opened = stitched.split(separator: "\n").filter { $0.contains("Opening '") }
            let firstAd = opened.firstIndex { $0.contains("/ads/ad1/v1/seg-") }
            #expect(firstAd != nil, "ffmpeg opened ad segments: \(opened.suffix(20))")
            if let firstAd {
                #expect(opened[..<firstAd].contains { $0.contains("/live/demo/v1/") }, "content before the ad")
                #expect(opened[firstAd...].contains { $0.contains("/live/demo/v1/") }, "and content after the ad")
            }
            #expect(opened.contains { $0.contains("/keys/demo/") && $0.contains("session=") }, "keys fetched with the session token")
            let served = (try? String(contentsOf: server.log, encoding: .utf8)) ?? ""
            let refused = served.split(separator: "\n").filter { $0.contains("\"GET /keys/") && !$0.contains("\" 200 ") }
            #expect(refused.isEmpty, "every key request answered: \(refused)")
        }

        // MARK: GStreamer

        @Test("GStreamer hlsdemux2 (playbin3) plays the encrypted stitched session in real time through a break")
        func gstreamerPlaysEncrypted() throws {
            let gst = try #require(Serve.which("gst-launch-1.0"), "GStreamer is required: run Tests/tools/install-test-clients.sh")
            let fixture = try EncryptionFixture()
            defer { fixture.remove() }
            let server = try TestServer(config: fixture.config.path, environment: EncryptionFixture.environment())
            defer { server.stop() }
            let port = server.port
            try #require(Serve.waitForPlaylist(port: port, path: "/live/demo/v1.m3u8"), "the channel went live")
            let url = "http://127.0.0.1:\(port)/ssai/demo/master.m3u8?device=tv"
            let output = fixture.directory.appendingPathComponent("gst.log")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let player = Process()
            player.executableURL = URL(fileURLWithPath: gst)
            player.arguments = ["-q", "playbin3", "uri=\(url)", "video-sink=fakesink sync=true", "audio-sink=fakesink sync=true"]
            let handle = try FileHandle(forWritingTo: output)
            player.standardOutput = handle
            player.standardError = handle
            try player.run()
            // 35 s of real time covers a whole break (one every 15 s) and the return from it.
            let started = Date()
            while player.isRunning, Date().timeIntervalSince(started) < 35 { Thread.sleep(forTimeInterval: 0.5) }
            let stillPlaying = player.isRunning
            player.interrupt()
            let stopping = Date()
            while player.isRunning, Date().timeIntervalSince(stopping) < 5 { Thread.sleep(forTimeInterval: 0.2) }
            if player.isRunning { kill(player.processIdentifier, SIGKILL) }
            player.waitUntilExit()
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            #expect(stillPlaying, "GStreamer stopped early: \(text.suffix(2000))")
            let errors = text.split(separator: "\n").filter { $0.contains("ERROR") || $0.contains("error") }
                .filter { !$0.contains("decreasing timestamp") && !$0.contains("Interrupt") }
            #expect(errors.isEmpty, "\(errors)")
            let served = (try? String(contentsOf: server.log, encoding: .utf8)) ?? ""
            let lines = served.split(separator: "\n")
            #expect(lines.contains { $0.contains("GET /ads/ad1/") }, "GStreamer fetched ad segments")
            let keys = Set(lines.filter { $0.contains("\"GET /keys/demo/") && $0.contains("\" 200 ") }
                .compactMap { $0.split(separator: " ").first { $0.hasPrefix("/keys/demo/") }?.split(separator: "?").first })
            #expect(keys.count >= 2, "keys fetched (one every 6 s): \(keys)")
            #expect(lines.contains { $0.contains("GET /live/demo/v") && $0.contains(".ts ") }, "GStreamer fetched content segments")
            let failures = lines.filter { $0.contains("\" 403 ") || $0.contains("\" 404 ") || $0.contains("\" 416 ") }
            #expect(failures.isEmpty, "no client errors in the access log: \(failures.prefix(5))")
        }

        // MARK: hls.js

        static let page = """
            <!doctype html>
            <meta charset="utf-8">
            <video muted playsinline></video>
            <script type="module">
            import { Hls } from "./hls.mjs";
            const video = document.querySelector("video");
            const hls = new Hls();
            let errors = 0, breaks = 0, inAd = false, first = null, keyLoads = 0, decrypted = 0;
            const keys = new Set();
            hls.on(Hls.Events.ERROR, (event, data) => {
              errors += 1;
              console.log(`HLS_ERROR ${data.type} ${data.details} fatal=${data.fatal}`);
            });
            hls.on(Hls.Events.KEY_LOADED, (event, data) => {
              keyLoads += 1;
              const uri = (data.keyInfo && data.keyInfo.decryptdata && data.keyInfo.decryptdata.uri)
                || (data.frag && data.frag.decryptdata && data.frag.decryptdata.uri) || "?";
              if (!keys.has(uri)) console.log(`KEY_LOADED ${uri}`);
              keys.add(uri);
            });
            // hls.js 1.6 decrypts TS in its transmuxer and emits no FRAG_DECRYPTED for it: count the
            // AES-128 fragments that reached the buffer (decrypted, demuxed and appended) instead.
            hls.on(Hls.Events.FRAG_BUFFERED, (event, data) => {
              if (data.frag.decryptdata && data.frag.decryptdata.method === "AES-128") decrypted += 1;
            });
            hls.on(Hls.Events.FRAG_CHANGED, (event, data) => {
              const ad = data.frag.url.includes("/ads/");
              const method = data.frag.decryptdata ? data.frag.decryptdata.method : "NONE";
              if (ad && !inAd) { breaks += 1; console.log(`AD_START ${data.frag.url} method=${method}`); }
              if (!ad && inAd) console.log(`AD_END ${data.frag.url} method=${method}`);
              inAd = ad;
            });
            hls.loadSource("/ssai/demo/master.m3u8?device=tv");
            hls.attachMedia(video);
            \(HeadlessChromium.playWhenBuffered())
            setInterval(() => {
              if (first === null && video.currentTime > 0) first = video.currentTime;
              console.log(`TIME ${video.currentTime.toFixed(2)}`);
            }, 1000);
            setTimeout(() => {
              const played = first === null ? 0 : video.currentTime - first;
              console.log(`DONE errors=${errors} played=${played.toFixed(2)} breaks=${breaks} keys=${keys.size} keyLoads=${keyLoads} decrypted=${decrypted}`);
            }, 45000);
            </script>
            """

        @Test("hls.js plays an encrypted device=tv session through a break with zero error events, loading rotating keys")
        func hlsjsPlaysEncrypted() throws {
            let chromium = try #require(Serve.which("chromium"), "chromium is required: run Tests/tools/install-test-clients.sh")
            let hlsjs = Serve.repository.appendingPathComponent(".build/test-clients/hls.mjs")
            try #require(FileManager.default.fileExists(atPath: hlsjs.path), "hls.js is required: run Tests/tools/install-test-clients.sh")
            let fixture = try EncryptionFixture()
            defer { fixture.remove() }
            try FileManager.default.copyItem(at: hlsjs, to: fixture.site.appendingPathComponent("hls.mjs"))
            try Self.page.write(to: fixture.site.appendingPathComponent("player.html"), atomically: true, encoding: .utf8)
            let (console, served) = try Serve.withServer(config: fixture.config.path, environment: EncryptionFixture.environment()) { port, log in
                _ = Serve.waitForPlaylist(port: port, path: "/live/demo/v1.m3u8")
                let console = try HeadlessChromium.console(
                    chromium: chromium, url: "http://127.0.0.1:\(port)/player.html",
                    profile: fixture.directory.appendingPathComponent("profile"), until: "DONE errors=", timeout: 80)
                return (console, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
            }
            let done = try #require(console.first { $0.contains("DONE errors=") }, "page finished: \(console.suffix(5))")
            #expect(!console.contains { $0.contains("HLS_ERROR") }, "\(console.filter { $0.contains("HLS_ERROR") })")
            #expect(done.contains("DONE errors=0 "), "\(done)")
            func field(_ name: String) -> Double {
                done.split(separator: " ").first { $0.hasPrefix("\(name)=") }.flatMap { Double($0.dropFirst(name.count + 1).prefix { $0 != "\"" && $0 != "," }) } ?? 0
            }
            #expect(field("played") >= 35, "seconds played: \(done)")
            #expect(field("breaks") >= 1, "played through a break: \(console.filter { $0.contains("AD_") })")
            #expect(console.contains { $0.contains("AD_END") }, "returned to content after a break")
            #expect(console.filter { $0.contains("AD_START") }.allSatisfy { $0.contains("method=NONE") }, "ads are clear")
            #expect(field("keys") >= 2, "distinct key URIs loaded: \(console.filter { $0.contains("KEY_LOADED") })")
            #expect(field("decrypted") >= 10, "encrypted fragments buffered: \(done)")
            let keyLines = console.filter { $0.contains("KEY_LOADED") }
            #expect(keyLines.allSatisfy { $0.contains("/keys/demo/") && $0.contains("session=") }, "\(keyLines)")
            let failures = served.split(separator: "\n").filter { $0.contains("\"GET /keys/") && !$0.contains("\" 200 ") }
            #expect(failures.isEmpty, "\(failures)")
        }

        // MARK: Playlists

        @Test("every segment carries EXT-X-KEY (AES-128, explicit IV, index = msn / 3); stitched key URIs carry the session; ads METHOD=NONE; lint passes")
        func playlistsCarryRotatingKeys() throws {
            let fixture = try EncryptionFixture()
            defer { fixture.remove() }
            let server = try TestServer(config: fixture.config.path, environment: EncryptionFixture.environment())
            defer { server.stop() }
            let port = server.port
            try #require(Serve.waitForPlaylist(port: port, path: "/live/demo/v1.m3u8"), "the channel went live")

            // /live: one key tag per segment, the index from the media sequence number.
            var ivs: [String: String] = [:]  // segment URI → IV
            for rendition in ["v0", "v1", "v2", "audio-alt"] {
                let text = SSAIFixture.body(Serve.get(port: port, path: "/live/demo/\(rendition).m3u8"))
                let playlist = PlaylistText(text)
                try #require(playlist.entries.count >= 10, "\(rendition): \(text)")
                var indices: [UInt64: Set<UInt64>] = [:]
                for entry in playlist.entries {
                    let context = "\(rendition) msn \(entry.msn): \(entry.key ?? [:])"
                    #expect(Self.number(entry.uri) == entry.msn, "segment URIs keep the live numbering: \(entry.uri)")
                    #expect(entry.keyTagged, "an EXT-X-KEY before every segment: \(context)")
                    #expect(entry.key?["METHOD"] == "AES-128", "\(context)")
                    #expect(entry.key?["URI"] == Self.keyPath(entry.msn), "key index msn / 3: \(context)")
                    #expect(entry.key?["KEYFORMAT"] == nil || entry.key?["KEYFORMAT"] == "identity", "\(context)")
                    let iv = Self.ivHex(entry.key?["IV"])
                    #expect(iv != nil, "an explicit IV, 0x and 32 hex digits: \(context)")
                    ivs["/live/demo/\(entry.uri)"] = iv
                    indices[entry.msn / 3, default: []].insert(entry.msn)
                }
                // The key changes every 3 media sequence numbers: each index covers at most 3, and
                // consecutive segments straddling a multiple of 3 change key.
                #expect(indices.values.allSatisfy { $0.count <= 3 }, "\(rendition): \(indices)")
                #expect(indices.count >= playlist.entries.count / 3, "\(rendition): \(indices.keys.sorted())")
                let findings = try Tool.lintFindings(text)
                #expect(findings.isEmpty, "lint --strict \(rendition): \(findings)")
            }
            // One IV per segment: none repeats, across segments or renditions.
            #expect(Set(ivs.values).count == ivs.count, "IVs repeat: \(ivs)")

            // The live-update rules hold across reloads of an encrypted playlist.
            let before = SSAIFixture.body(Serve.get(port: port, path: "/live/demo/v1.m3u8"))
            Thread.sleep(forTimeInterval: 2.5)
            let after = SSAIFixture.body(Serve.get(port: port, path: "/live/demo/v1.m3u8"))
            let update = try Tool.lintFindings(after, previous: before)
            #expect(update.isEmpty, "lint --previous: \(update)")

            // The multivariant playlist of an encrypted channel offers no I-frame playlists
            // (whole-segment CBC ranges cannot be decrypted alone), and lints clean.
            let master = SSAIFixture.body(Serve.get(port: port, path: "/live/demo/master.m3u8"))
            #expect(!master.contains("EXT-X-I-FRAME-STREAM-INF"), "\(master)")
            let masterFindings = try Tool.lintFindings(master)
            #expect(masterFindings.isEmpty, "lint --strict master: \(masterFindings)")
            #expect(Serve.get(port: port, path: "/live/demo/v1.iframes.m3u8").hasPrefix("HTTP/1.1 404"), "no I-frame playlist")

            // /ssai: content keys carry the session token, ads are METHOD=NONE, content after them AES-128 again.
            let session = try SSAIServeTests.startSession(port: port, query: "device=tv")
            let path = try #require(session["v1"])
            let token = Self.token(path)
            let text = SSAIServeTests.poll(port: port, path: path, until: "/ads/ad1/v1/seg-00002.ts", seconds: 30)
            let stitched = PlaylistText(text)
            let firstAd = try #require(stitched.entries.firstIndex { $0.uri.hasPrefix("/ads/") }, "a break: \(text)")
            #expect(stitched.entries[firstAd].keyTagged && stitched.entries[firstAd].key?["METHOD"] == "NONE", "METHOD=NONE before the first ad: \(text)")
            for (position, entry) in stitched.entries.enumerated() {
                if entry.uri.hasPrefix("/ads/") || entry.uri.hasPrefix("/slate/") {
                    #expect(entry.key?["METHOD"] == "NONE", "clear ad \(entry.uri): \(entry.key ?? [:])")
                    continue
                }
                let msn = try #require(Self.number(entry.uri), "content segment \(entry.uri)")
                #expect(entry.uri.hasPrefix("/live/demo/v1/"), "\(entry.uri)")
                #expect(entry.keyTagged && entry.key?["METHOD"] == "AES-128", "segment \(position) \(entry.uri): \(entry.key ?? [:])")
                #expect(entry.key?["URI"] == "\(Self.keyPath(msn))?session=\(token)", "\(entry.key ?? [:])")
                // The same segment under the same IV as in /live (one ciphertext for everyone).
                if let live = ivs[entry.uri] { #expect(Self.ivHex(entry.key?["IV"]) == live, "\(entry.uri)") }
            }
            let afterAds = stitched.entries[firstAd...].firstIndex { $0.uri.hasPrefix("/live/") }
            if let afterAds {
                #expect(stitched.entries[afterAds].keyTagged && stitched.entries[afterAds].key?["METHOD"] == "AES-128")
            }
            let findings = try Tool.lintFindings(text)
            #expect(findings.isEmpty, "lint --strict stitched: \(findings)")
        }

        // MARK: openssl

        @Test("openssl enc -d -aes-128-cbc with the served key and the playlist's IV gives the package file's bytes")
        func opensslDecryptsServedSegments() throws {
            let openssl = try #require(Serve.which("openssl"), "openssl is required: run Tests/tools/install-test-clients.sh")
            let fixture = try EncryptionFixture()
            defer { fixture.remove() }
            let server = try TestServer(config: fixture.config.path, environment: EncryptionFixture.environment())
            defer { server.stop() }
            let port = server.port
            try #require(Serve.waitForPlaylist(port: port, path: "/live/demo/v1.m3u8"), "the channel went live")
            var checked = 0
            var keysSeen: [String: [UInt8]] = [:]
            for rendition in ["v1", "v0", "audio-alt"] {
                let playlist = PlaylistText(SSAIFixture.body(Serve.get(port: port, path: "/live/demo/\(rendition).m3u8")))
                // Segments under two keys (rotate_every: 3 puts at least two keys in four segments).
                for entry in playlist.entries.prefix(4) {
                    let keyURI = try #require(entry.key?["URI"], "\(rendition) \(entry.msn): no key")
                    let iv = try #require(Self.ivHex(entry.key?["IV"]), "\(rendition) \(entry.msn): no IV")
                    let key = RawResponse.get(port: port, path: keyURI)
                    try #require(key.status == 200 && key.body.count == 16, "\(keyURI): \(key.summary) \(key.body.count) bytes")
                    #expect(key.header("Content-Type") == "application/octet-stream", "\(key.summary)")
                    #expect(key.header("Cache-Control") == "private, no-store", "\(key.summary)")
                    if let seen = keysSeen[keyURI] { #expect(seen == key.body, "one key per URI") }
                    keysSeen[keyURI] = key.body
                    let segment = RawResponse.get(port: port, path: "/live/demo/\(entry.uri)")
                    try #require(segment.status == 200, "\(entry.uri): \(segment.summary)")
                    let clear = try [UInt8](Data(contentsOf: EncryptionFixture.packageFile(rendition: rendition, msn: entry.msn)))
                    // Whole-file CBC with PKCS#7: 1 to 16 bytes of padding, never the clear bytes.
                    #expect(segment.body.count == clear.count + 16 - clear.count % 16, "\(entry.uri): \(segment.body.count) bytes for \(clear.count)")
                    #expect(segment.body != clear && segment.body.prefix(188) != clear.prefix(188), "\(entry.uri) is served encrypted")
                    #expect(segment.header("Content-Length") == "\(segment.body.count)")
                    let decrypted = try Tool.run(openssl, ["enc", "-d", "-aes-128-cbc", "-K", key.body.hex, "-iv", iv], input: segment.body)
                    #expect(decrypted.status == 0, "openssl: \(decrypted.errors)")
                    #expect(decrypted.output == clear, "\(rendition) msn \(entry.msn): decrypts to \(decrypted.output.count) bytes, not the package file's \(clear.count)")
                    checked += 1
                }
            }
            #expect(checked == 12)
            #expect(keysSeen.count >= 2, "segments under at least two keys: \(keysSeen.keys.sorted())")
            #expect(Set(keysSeen.values).count == keysSeen.count, "each key index its own key")
        }

        // MARK: Two nodes

        @Test("two nodes with one secret serve identical keys and ciphertext; a node with another secret another key")
        func nodesAgreeOnKeysAndCiphertext() throws {
            let fixture = try EncryptionFixture()
            defer { fixture.remove() }
            let first = try TestServer(config: fixture.config.path, environment: EncryptionFixture.environment())
            defer { first.stop() }
            let second = try TestServer(config: fixture.config.path, environment: EncryptionFixture.environment())
            defer { second.stop() }
            for port in [first.port, second.port] {
                try #require(Serve.waitForPlaylist(port: port, path: "/live/demo/v1.m3u8"), "node on \(port) went live")
            }
            func window(_ port: Int) -> [UInt64: PlaylistText.Entry] {
                Dictionary(
                    PlaylistText(SSAIFixture.body(Serve.get(port: port, path: "/live/demo/v1.m3u8"))).entries.map { ($0.msn, $0) },
                    uniquingKeysWith: { a, _ in a })
            }
            let a = window(first.port)
            let b = window(second.port)
            let common = Set(a.keys).intersection(b.keys).sorted()
            try #require(common.count >= 6, "the nodes' windows overlap: \(a.keys.sorted()) \(b.keys.sorted())")
            var keys: [String: [UInt8]] = [:]
            for msn in common.suffix(6) {
                let (x, y) = (a[msn]!, b[msn]!)
                #expect(x.key ?? [:] == y.key ?? [:], "msn \(msn): the same EXT-X-KEY (URI and IV)")
                let keyURI = try #require(x.key?["URI"])
                let keyA = RawResponse.get(port: first.port, path: keyURI)
                let keyB = RawResponse.get(port: second.port, path: keyURI)
                #expect(keyA.status == 200 && keyA.body.count == 16, "\(keyA.summary)")
                #expect(keyA.body == keyB.body, "\(keyURI): the same key bytes on both nodes")
                keys[keyURI] = keyA.body
                let segmentA = RawResponse.get(port: first.port, path: "/live/demo/\(x.uri)")
                let segmentB = RawResponse.get(port: second.port, path: "/live/demo/\(y.uri)")
                #expect(segmentA.status == 200 && !segmentA.body.isEmpty, "\(segmentA.summary)")
                #expect(segmentA.body == segmentB.body, "\(x.uri): the same ciphertext on both nodes")
                #expect(segmentA.header("ETag") == segmentB.header("ETag"), "\(x.uri): the same ETag")
            }
            second.stop()

            // Another deployment: same URIs, other keys (and so other ciphertext).
            let third = try TestServer(config: fixture.config.path, environment: EncryptionFixture.environment(secret: EncryptionFixture.otherSecret))
            defer { third.stop() }
            try #require(Serve.waitForPlaylist(port: third.port, path: "/live/demo/v1.m3u8"), "the third node went live")
            let c = window(third.port)
            let shared = try #require(Set(c.keys).intersection(a.keys).max(), "windows overlap")
            let keyURI = try #require(c[shared]?.key?["URI"])
            let keyC = RawResponse.get(port: third.port, path: keyURI)
            let keyA = RawResponse.get(port: first.port, path: keyURI)
            #expect(keyC.status == 200 && keyC.body.count == 16, "\(keyC.summary)")
            #expect(keyA.status == 200 && keyC.body != keyA.body, "\(keyURI): another secret, another key")
            #expect(c[shared]?.key?["IV"] != a[shared]?.key?["IV"], "another secret, another IV")
            let segmentC = RawResponse.get(port: third.port, path: "/live/demo/\(c[shared]!.uri)")
            let segmentA = RawResponse.get(port: first.port, path: "/live/demo/\(a[shared]!.uri)")
            #expect(segmentC.body != segmentA.body, "another secret, another ciphertext")
        }

        // MARK: Entitlement

        /// `headwater key-token` as an entitlement service's operator runs it, with the secrets in its
        /// environment: the token it prints.
        static func keyToken(channel: String, ttl: Int) throws -> String {
            let environment = ProcessInfo.processInfo.environment.merging(EncryptionFixture.environment()) { $1 }
            let result = try Tool.run(HeadwaterProcess.executable.path, ["key-token", "--channel", channel, "--ttl", "\(ttl)"], environment: environment)
            try #require(result.status == 0, "key-token exit \(result.status): \(result.errors)")
            let token = result.text.trimmingCharacters(in: .whitespacesAndNewlines)
            try #require(!token.isEmpty && !token.contains("\n") && !token.contains(" "), "one token on stdout: \(result.text)")
            return token
        }

        /// The sum of the `/metrics` series of `name` whose labels contain every one of `labels`.
        static func metric(_ metrics: String, _ name: String, _ labels: [String] = []) -> Double {
            metrics.split(separator: "\n").filter { $0.hasPrefix("\(name){") || $0.hasPrefix("\(name) ") }
                .filter { line in labels.allSatisfy { line.contains($0) } }
                .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
        }

        @Test("key_access: token: keys only for a valid token (query or Bearer) or session; one-line 403s, counted; 404 outside the window; keys never logged")
        func keysNeedEntitlement() throws {
            let fixture = try EncryptionFixture(encryption: EncryptionFixture.encryption(keyAccess: "token"))
            defer { fixture.remove() }
            let server = try TestServer(config: fixture.config.path, environment: EncryptionFixture.environment())
            defer { server.stop() }
            let port = server.port
            try #require(Serve.waitForPlaylist(port: port, path: "/live/demo/v1.m3u8"), "the channel went live")
            let playlist = PlaylistText(SSAIFixture.body(Serve.get(port: port, path: "/live/demo/v1.m3u8")))
            let entry = try #require(playlist.entries.last)
            let keyURI = try #require(entry.key?["URI"], "\(playlist.text)")
            #expect(keyURI == Self.keyPath(entry.msn), "the /live key URI carries no token: \(keyURI)")

            /// Refused with `status` and one line that names what was wrong (`reason`, e.g. "token").
            func expectRefused(_ response: RawResponse, _ status: Int, _ what: String, reason: String) {
                #expect(response.status == status, "\(what): \(response.summary)")
                let lines = response.text.split(separator: "\n", omittingEmptySubsequences: true)
                #expect(lines.count == 1, "\(what): a one-line reason: \(response.text)")
                #expect(response.text.contains(reason), "\(what): the reason names the \(reason): \(response.text)")
            }
            var refusals = 0
            expectRefused(RawResponse.get(port: port, path: keyURI), 403, "no token", reason: "token")
            refusals += 1

            let token = try Self.keyToken(channel: "demo", ttl: 60)
            let byQuery = RawResponse.get(port: port, path: "\(keyURI)?token=\(token)")
            #expect(byQuery.status == 200 && byQuery.body.count == 16, "?token=: \(byQuery.summary)")
            #expect(byQuery.header("Cache-Control") == "private, no-store", "\(byQuery.summary)")
            #expect(byQuery.header("Content-Type") == "application/octet-stream", "\(byQuery.summary)")
            let byBearer = RawResponse.get(port: port, path: keyURI, headers: ["Authorization": "Bearer \(token)"])
            #expect(byBearer.status == 200 && byBearer.body == byQuery.body, "Bearer: \(byBearer.summary)")

            let other = try Self.keyToken(channel: "other", ttl: 60)
            expectRefused(RawResponse.get(port: port, path: "\(keyURI)?token=\(other)"), 403, "another channel's token", reason: "other")
            refusals += 1
            let expired = try Self.keyToken(channel: "demo", ttl: 1)
            Thread.sleep(forTimeInterval: 2.2)
            expectRefused(RawResponse.get(port: port, path: keyURI, headers: ["Authorization": "Bearer \(expired)"]), 403, "expired token", reason: "expired")
            refusals += 1
            // Flip one character in the middle (the expiry and channel bytes): the MAC no longer matches.
            var characters = Array(token)
            let middle = characters.count / 2
            characters[middle] = characters[middle] == "A" ? "B" : "A"
            let forged = String(characters)
            expectRefused(RawResponse.get(port: port, path: "\(keyURI)?token=\(forged)"), 403, "forged token", reason: "token")
            refusals += 1
            expectRefused(RawResponse.get(port: port, path: "\(keyURI)?token=not-a-token"), 403, "junk token", reason: "token")
            refusals += 1

            // Outside the window: 404, whatever the token says.
            let far = Self.keyPath(entry.msn + 3 * 100_000)
            expectRefused(RawResponse.get(port: port, path: "\(far)?token=\(token)"), 404, "an index far ahead", reason: "window")
            expectRefused(RawResponse.get(port: port, path: "/keys/demo/0.key?token=\(token)"), 404, "index 0, long gone", reason: "window")
            expectRefused(RawResponse.get(port: port, path: "/keys/nochannel/1.key?token=\(token)"), 404, "an unknown channel", reason: "nochannel")

            // /ssai: the session token is the entitlement; a bogus one is refused.
            let session = try SSAIServeTests.startSession(port: port, query: "device=tv")
            let stitched = PlaylistText(SSAIFixture.body(Serve.get(port: port, path: session["v1"]!)))
            let sessionKeyURI = try #require(stitched.entries.last { $0.key?["METHOD"] == "AES-128" }?.key?["URI"])
            #expect(sessionKeyURI.contains("?session="), "\(sessionKeyURI)")
            let bySession = RawResponse.get(port: port, path: sessionKeyURI)
            #expect(bySession.status == 200 && bySession.body.count == 16, "session key: \(bySession.summary)")
            let bare = String(sessionKeyURI.split(separator: "?").first!)
            expectRefused(RawResponse.get(port: port, path: "\(bare)?session=bogus"), 403, "bogus session", reason: "session")
            refusals += 1
            let sessionToken = Self.token(session["v1"]!)
            let alteredSession = (sessionToken.first == "A" ? "B" : "A") + sessionToken.dropFirst()
            expectRefused(RawResponse.get(port: port, path: "\(bare)?session=\(alteredSession)"), 403, "altered session", reason: "session")
            refusals += 1

            // Counted by outcome; keys never in metrics or the access log.
            let metrics = SSAIFixture.body(Serve.get(port: port, path: "/metrics"))
            let keyLines = metrics.split(separator: "\n").filter { $0.hasPrefix("headwater_key") }
            #expect(!keyLines.isEmpty, "key requests are counted: no headwater_key… series")
            let refused = Self.metric(metrics, "headwater_key_requests_total", ["\"forbidden\""])
            #expect(refused >= Double(refusals), "\(refusals) refusals; \(keyLines)")
            let missing = Self.metric(metrics, "headwater_key_requests_total", ["\"not_found\""])
            #expect(missing >= 3, "3 keys not found; \(keyLines)")
            let served = Self.metric(metrics, "headwater_key_requests_total", ["\"ok\""])
            #expect(served >= 3, "served keys counted: \(keyLines)")
            let keys = [byQuery.body, bySession.body]
            let log = (try? String(contentsOf: server.log, encoding: .utf8)) ?? ""
            #expect(log.contains("GET /keys/demo/"), "key requests are in the access log")
            for key in keys {
                let forms = [key.hex, key.hex.uppercased(), Data(key).base64EncodedString(),
                    Data(key).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                        .replacingOccurrences(of: "=", with: "")]
                for form in forms {
                    #expect(!log.contains(form), "a key in the server's output")
                    #expect(!metrics.contains(form), "a key in /metrics")
                }
            }
        }

        // MARK: Bad start

        /// Runs `headwater serve` on `config` with exactly `environment` (plus PATH): its exit status
        /// and output, or nil status when it was still serving after 15 s (then stopped).
        static func serveExit(config: URL, environment: [String: String]) throws -> (status: Int32?, output: String) {
            let port = try Serve.freePort()
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("hw-badstart-\(UUID()).log")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            defer { try? FileManager.default.removeItem(at: output) }
            let process = Process()
            process.executableURL = HeadwaterProcess.executable
            process.arguments = ["serve", "--listen", "127.0.0.1:\(port)", "--config", config.path]
            var base = ProcessInfo.processInfo.environment
            base[EncryptionFixture.secretVariable] = nil
            process.environment = base.merging(environment) { $1 }
            process.currentDirectoryURL = Serve.repository
            let handle = try FileHandle(forWritingTo: output)
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            let deadline = Date().addingTimeInterval(15)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
            let exited = !process.isRunning
            if !exited {
                process.terminate()
                process.waitUntilExit()
            }
            return (exited ? process.terminationStatus : nil, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
        }

        @Test("an encrypted channel without its secret, or with a 31-byte one, stops serve with exit 78 and one line naming HEADWATER_KEY_SECRET")
        func badSecretStopsServe() throws {
            let fixture = try EncryptionFixture()
            defer { fixture.remove() }
            let short = String(EncryptionFixture.secret.prefix(62))  // 31 bytes
            let cases: [(String, [String: String])] = [
                ("unset", SSAIFixture.environment),
                ("31 bytes", SSAIFixture.environment.merging([EncryptionFixture.secretVariable: short]) { $1 }),
                ("not hex", SSAIFixture.environment.merging([EncryptionFixture.secretVariable: String(repeating: "zz", count: 32)]) { $1 }),
            ]
            for (what, environment) in cases {
                let (status, output) = try Self.serveExit(config: fixture.config, environment: environment)
                #expect(status == 78, "\(what): exit \(status.map { "\($0)" } ?? "none, still serving after 15 s"): \(output.suffix(800))")
                let naming = output.split(separator: "\n").filter { $0.contains(EncryptionFixture.secretVariable) }
                #expect(naming.count == 1, "\(what): one line naming the variable: \(output.suffix(800))")
                #expect(!output.contains(short), "\(what): the secret is never echoed")
                #expect(!output.contains("listening"), "\(what): it never listened")
            }
            // The same configuration with a good secret starts.
            let server = try TestServer(config: fixture.config.path, environment: EncryptionFixture.environment())
            defer { server.stop() }
            #expect(Serve.get(port: server.port, path: "/healthz").hasPrefix("HTTP/1.1 200"), "a 32-byte secret starts")
        }
    }
}
