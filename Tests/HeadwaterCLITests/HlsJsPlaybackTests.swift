import Foundation
import Testing

extension RealClients {
    /// hls.js 1.6 in headless Chromium, the strictest playlist logic among the real clients
    /// (../shared/CLIENTS.md): a media- or discontinuity-sequence mismatch between reloads is a fatal
    /// `levelParsingError`, a 404 a `fragLoadError`, a timestamp jump without a discontinuity a
    /// `bufferSeekOverHole`. On a correct stream it emits no error event at all, so any error fails.
    /// `Tests/tools/install-test-clients.sh` (run by .ci/run) installs Chromium and fetches hls.js.
    @Suite("hls.js in headless Chromium", .serialized)
    struct HlsJsPlaybackTests {
        static let page = """
            <!doctype html>
            <meta charset="utf-8">
            <video muted playsinline></video>
            <script type="module">
            import { Hls } from "./hls.mjs";
            const video = document.querySelector("video");
            const hls = new Hls();
            let errors = 0, discontinuities = new Set(), first = null;
            hls.on(Hls.Events.ERROR, (event, data) => {
              errors += 1;
              console.log(`HLS_ERROR ${data.type} ${data.details} fatal=${data.fatal}`);
            });
            hls.on(Hls.Events.FRAG_CHANGED, (event, data) => {
              if (!discontinuities.has(data.frag.cc)) console.log(`FRAG_CC ${data.frag.cc} sn=${data.frag.sn}`);
              discontinuities.add(data.frag.cc);
            });
            hls.loadSource("/live/demo/master.m3u8");
            hls.attachMedia(video);
            \(HeadlessChromium.playWhenBuffered())
            setInterval(() => {
              if (first === null && video.currentTime > 0) first = video.currentTime;
              console.log(`TIME ${video.currentTime.toFixed(2)}`);
            }, 1000);
            // currentTime is media time (a live stream starts mid-timeline): report the seconds played.
            setTimeout(() => {
              const played = first === null ? 0 : video.currentTime - first;
              console.log(`DONE errors=${errors} played=${played.toFixed(2)} discontinuities=${discontinuities.size}`);
            }, 38000);
            </script>
            """

        @Test("plays the loop demo for 38 s across a loop discontinuity with zero hls.js error events")
        func playsAcrossLoopPoint() throws {
            let chromium = try #require(ServeCommandTests.which("chromium"), "chromium is required: run Tests/tools/install-test-clients.sh")
            let hlsjs = ServeCommandTests.repository.appendingPathComponent(".build/test-clients/hls.mjs")
            #expect(FileManager.default.fileExists(atPath: hlsjs.path), "hls.js is required: run Tests/tools/install-test-clients.sh")
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-hlsjs-\(UUID())")
            let site = directory.appendingPathComponent("site")
            try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            try FileManager.default.copyItem(at: hlsjs, to: site.appendingPathComponent("hls.mjs"))
            try Self.page.write(to: site.appendingPathComponent("player.html"), atomically: true, encoding: .utf8)
            let config = directory.appendingPathComponent("headwater.yaml")
            let package = ServeCommandTests.repository.appendingPathComponent("Public/demo/master.m3u8").path
            try """
                server:
                  public: \(site.path)
                  cors: true
                channels:
                  demo:
                    source:
                      type: loop
                      package: \(package)
                    window: 30
                """.write(to: config, atomically: true, encoding: .utf8)
            let (server, port, log) = try ServeCommandTests.startServer(config: config.path)
            defer {
                if server.isRunning { server.terminate() }
                try? FileManager.default.removeItem(at: log)
            }

            let console = try HeadlessChromium.console(
                chromium: chromium, url: "http://127.0.0.1:\(port)/player.html",
                profile: directory.appendingPathComponent("profile"), until: "DONE errors=", timeout: 75)
            let done = try #require(console.first { $0.contains("DONE errors=") }, "page finished: \(console.suffix(5))")
            #expect(!console.contains { $0.contains("HLS_ERROR") }, "\(console.filter { $0.contains("HLS_ERROR") })")
            #expect(done.contains("DONE errors=0 "), "\(done)")
            // Played most of the 38 s (start-up takes a moment) and crossed a loop point (two discontinuity counters).
            let played = done.split(separator: " ").first { $0.hasPrefix("played=") }.flatMap { Double($0.dropFirst(7)) } ?? 0
            #expect(played >= 30, "seconds played: \(played)")
            let counters = done.split(separator: " ").first { $0.hasPrefix("discontinuities=") }.flatMap { Int($0.dropFirst(16).prefix { $0.isNumber }) } ?? 0
            #expect(counters >= 2, "crossed a loop discontinuity: \(done)")
        }
    }
}
