import Foundation
import HeadwaterTesting
import Testing

extension RealClients {
    /// hls.js in headless Chromium over `https://localhost` with HTTP/2 (issue 16): the live demo
    /// channel and a stitched session through an ad break, with zero hls.js error events, as over
    /// plain HTTP (``HlsJsPlaybackTests``, ``SSAIPlaybackTests``). Chromium trusts the test CA's server
    /// certificate by its SPKI hash (`--ignore-certificate-errors-spki-list`, honoured with a
    /// `--user-data-dir`), and the page reports each resource's `nextHopProtocol`, which must be
    /// `h2`; the server's access log must say `HTTP/2.0` for the requests too.
    @Suite("hls.js over HTTPS and HTTP/2", .serialized)
    struct HTTPSPlaybackTests {
        typealias Serve = ServeCommandTests

        /// Plays `?src=` for `?seconds=`, then prints one `DONE` line: error events, seconds played,
        /// ad breaks entered, and the count of resources (page, module, playlists, segments) by the
        /// protocol they came over.
        ///
        /// - Parameters:
        ///   - options: the `Hls` constructor's argument, a JavaScript object literal.
        ///   - probes: more script, run after `hls` and `video` exist and before the source loads;
        ///     it may push functions onto `report`, whose strings end the `DONE` line (` name=value`).
        /// Page script counting ad breaks as hls.js plays them (`AD_START`, `AD_END`; `breaks`,
        /// `inAd`, `adFragments` declared by the page). A fragment played while still open (low
        /// latency) has no URL of its own yet, only its parts': the media sequence numbers loaded
        /// from ad parts are remembered.
        static let adTracking = """
            const adNumbers = new Set();
            hls.on(Hls.Events.FRAG_LOADED, (event, data) => {
              if (data.part && data.part.url.includes("/ads/")) adNumbers.add(data.frag.sn);
            });
            hls.on(Hls.Events.FRAG_CHANGED, (event, data) => {
              const ad = data.frag.url.includes("/ads/") || adNumbers.has(data.frag.sn);
              if (ad) adFragments += 1;
              if (ad && !inAd) { breaks += 1; console.log(`AD_START ${data.frag.url || "(open)"} sn=${data.frag.sn} cc=${data.frag.cc}`); }
              if (!ad && inAd) console.log(`AD_END sn=${data.frag.sn} cc=${data.frag.cc}`);
              inAd = ad;
            });
            """

        /// `HEADWATER_HLSJS_DEBUG=1` turns on hls.js's own debug log in the page's console (read it
        /// with `HEADWATER_PLAY_LOG`, below, when a player does something unexplained).
        static var debugOptions: String {
            ProcessInfo.processInfo.environment["HEADWATER_HLSJS_DEBUG"] == nil ? "{}" : "{ debug: true }"
        }

        static func page(options: String = "{}", probes: String = "") -> String {
            """
            <!doctype html>
            <meta charset="utf-8">
            <video muted playsinline></video>
            <script type="module">
            import { Hls } from "./hls.mjs";
            performance.setResourceTimingBufferSize(100000);
            const parameters = new URLSearchParams(location.search);
            const video = document.querySelector("video");
            const hls = new Hls(Object.assign(\(options), \(Self.debugOptions)));
            const report = [];
            let errors = 0, breaks = 0, inAd = false, adFragments = 0, first = null;
            hls.on(Hls.Events.ERROR, (event, data) => {
              errors += 1;
              console.log(`HLS_ERROR ${data.type} ${data.details} fatal=${data.fatal} frag=${data.frag ? data.frag.url + " sn=" + data.frag.sn + " level=" + data.frag.level : "-"} part=${data.part ? data.part.index : "-"} reason=${data.reason || (data.error && data.error.message) || "-"}`);
            });
            \(Self.adTracking)
            \(probes)
            hls.loadSource(parameters.get("src"));
            hls.attachMedia(video);
            \(HeadlessChromium.playWhenBuffered())
            setInterval(() => {
              if (first === null && video.currentTime > 0) first = video.currentTime;
              console.log(`TIME ${video.currentTime.toFixed(2)}`);
            }, 1000);
            setTimeout(() => {
              const played = first === null ? 0 : video.currentTime - first;
              const protocols = {};
              const entries = performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource"));
              for (const entry of entries) {
                const protocol = entry.nextHopProtocol || "none";
                protocols[protocol] = (protocols[protocol] || 0) + 1;
                if (protocol !== "h2") console.log(`NOT_H2 ${protocol} ${entry.name}`);
              }
              const summary = Object.entries(protocols).map(([name, count]) => `${name}:${count}`).join("+");
              const more = report.map((item) => ` ${item()}`).join("");
              console.log(`DONE errors=${errors} played=${played.toFixed(2)} breaks=${breaks} adFragments=${adFragments} protocols=${summary}${more}`);
            }, Number(parameters.get("seconds")) * 1000);
            </script>
            """
        }

        /// Headless Chromium on `url`, trusting the server certificate whose SPKI hash is `spki`: the
        /// console lines it printed until one contained `marker`, or `timeout` seconds passed.
        static func console(chromium: String, url: String, spki: String, profile: URL, until marker: String, timeout: TimeInterval) throws -> [Substring] {
            try HeadlessChromium.console(
                chromium: chromium, url: url, profile: profile, extraArguments: ["--ignore-certificate-errors-spki-list=\(spki)"],
                until: marker, timeout: timeout)
        }

        /// A number or word after `name=` in the page's DONE line.
        static func field(_ name: String, in done: Substring) -> Substring {
            let token = done.split(separator: " ").first { $0.hasPrefix("\(name)=") } ?? ""
            return token.dropFirst(name.count + 1).prefix { $0 != "\"" && $0 != "," }
        }

        /// Plays `source` over https for `seconds` in `page` (``page(options:probes:)``), served by
        /// the TLS listener; checks the common outcome (zero error events, most of the time played,
        /// everything over h2) and returns the console and the server's log for the caller's own checks.
        static func play(
            page: String = Self.page(), source: String, seconds: Int, every: Int, duration: Int
        ) throws -> (console: [Substring], done: Substring, log: String) {
            let chromium = try #require(Serve.which("chromium"), "chromium is required: run Tests/tools/install-test-clients.sh")
            let hlsjs = Serve.repository.appendingPathComponent(".build/test-clients/hls.mjs")
            try #require(FileManager.default.fileExists(atPath: hlsjs.path), "hls.js is required: run Tests/tools/install-test-clients.sh")
            let server = try TLSServerFixture(every: every, duration: duration)
            defer { server.stop() }
            try FileManager.default.copyItem(at: hlsjs, to: server.fixture.site.appendingPathComponent("hls.mjs"))
            try page.write(to: server.fixture.site.appendingPathComponent("player.html"), atomically: true, encoding: .utf8)
            let query = "src=\(source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? source)&seconds=\(seconds)"
            let console = try Self.console(
                chromium: chromium, url: "\(server.httpsOrigin)/player.html?\(query)", spki: server.authority.serverSPKISHA256,
                profile: server.fixture.directory.appendingPathComponent("profile"), until: "DONE errors=", timeout: TimeInterval(seconds + 40))
            let log = server.logText
            // HEADWATER_PLAY_LOG=<file>: the server's log and the page's console, for reading a failure.
            if let path = ProcessInfo.processInfo.environment["HEADWATER_PLAY_LOG"] {
                try (log + "\n==== console\n" + console.joined(separator: "\n")).write(toFile: path, atomically: true, encoding: .utf8)
            }
            let done = try #require(console.first { $0.contains("DONE errors=") }, "page finished: \(console.suffix(8))")
            #expect(!console.contains { $0.contains("HLS_ERROR") }, "\(console.filter { $0.contains("HLS_ERROR") })")
            #expect(done.contains("DONE errors=0 "), "\(done)")
            let played = Double(Self.field("played", in: done)) ?? 0
            #expect(played >= Double(seconds) * 0.7, "seconds played: \(done)")
            // Every resource the page loaded (the page, hls.js, playlists, segments) came over h2.
            let protocols = Self.field("protocols", in: done).split(separator: "+")
            let h2 = protocols.first { $0.hasPrefix("h2:") }.flatMap { Int($0.dropFirst(3)) } ?? 0
            #expect(protocols.count == 1 && h2 >= 10, "by nextHopProtocol: \(protocols); \(console.filter { $0.contains("NOT_H2") }.prefix(5))")
            // The server saw HTTP/2 requests, and no HTTP/1.x request for the page or the stream.
            let requests = log.split(separator: "\n").filter { $0.contains("\"GET /player.html") || $0.contains("\"GET /live/") || $0.contains("\"GET /ssai/") || $0.contains("\"GET /ads/") }
            #expect(requests.count >= 10, "access log: \(log.suffix(1500))")
            let notH2 = requests.filter { !$0.contains(" HTTP/2.0\" ") }
            #expect(notH2.isEmpty, "requests not logged as HTTP/2.0: \(notH2.prefix(5))")
            return (console, done, log)
        }

        @Test("hls.js plays https://localhost/live/demo/master.m3u8 over h2 for 20 s with zero error events")
        func playsLiveOverHTTP2() throws {
            let (_, done, log) = try Self.play(source: "/live/demo/master.m3u8", seconds: 20, every: 60, duration: 8)
            #expect(log.contains("\"GET /live/demo/master.m3u8 HTTP/2.0\" 200 "), "\(log.suffix(1500))")
            #expect(Self.field("breaks", in: done) == "0", "no ads on /live: \(done)")
        }

        @Test("hls.js plays a stitched https://localhost/ssai/ session over h2 through an ad break with zero error events")
        func playsStitchedOverHTTP2() throws {
            let (console, done, log) = try Self.play(source: "/ssai/demo/master.m3u8?device=tv", seconds: 40, every: 15, duration: 6)
            #expect((Int(Self.field("breaks", in: done)) ?? 0) >= 1, "entered an ad break: \(done)")
            #expect(console.contains { $0.contains("AD_END") }, "returned to content after the break: \(console.filter { $0.contains("AD_") })")
            #expect(log.contains("\"GET /ssai/demo/master.m3u8?device=tv HTTP/2.0\" 200 "), "\(log.suffix(1500))")
            #expect(log.contains("\"GET /ads/ad1/"), "ad segments fetched: \(log.suffix(1500))")
        }
    }
}
