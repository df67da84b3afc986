import Foundation
import Testing

extension RealClients {
    /// Real players on a stitched session (`/ssai/demo/master.m3u8?device=tv`, a break every 20 s):
    /// hls.js (fatal on any media- or discontinuity-sequence mismatch), ffmpeg and GStreamer hlsdemux2.
    @Suite("Players on stitched playlists", .serialized)
    struct SSAIPlaybackTests {
        typealias Serve = ServeCommandTests

        static let page = """
            <!doctype html>
            <meta charset="utf-8">
            <video muted playsinline></video>
            <script type="module">
            import { Hls } from "./hls.mjs";
            const video = document.querySelector("video");
            const hls = new Hls();
            let errors = 0, breaks = 0, inAd = false, adFragments = 0, first = null;
            hls.on(Hls.Events.ERROR, (event, data) => {
              errors += 1;
              console.log(`HLS_ERROR ${data.type} ${data.details} fatal=${data.fatal}`);
            });
            \(HTTPSPlaybackTests.adTracking)
            hls.loadSource("/ssai/demo/master.m3u8?device=tv");
            hls.attachMedia(video);
            \(HeadlessChromium.playWhenBuffered())
            setInterval(() => {
              if (first === null && video.currentTime > 0) first = video.currentTime;
              console.log(`TIME ${video.currentTime.toFixed(2)}`);
            }, 1000);
            setTimeout(() => {
              const played = first === null ? 0 : video.currentTime - first;
              console.log(`DONE errors=${errors} played=${played.toFixed(2)} breaks=${breaks} adFragments=${adFragments}`);
            }, 62000);
            </script>
            """

        @Test("hls.js plays a device=tv session through at least two ad breaks with zero error events")
        func hlsjsPlaysThroughBreaks() throws {
            let chromium = try #require(Serve.which("chromium"), "chromium is required: run Tests/tools/install-test-clients.sh")
            let hlsjs = Serve.repository.appendingPathComponent(".build/test-clients/hls.mjs")
            try #require(FileManager.default.fileExists(atPath: hlsjs.path), "hls.js is required: run Tests/tools/install-test-clients.sh")
            let fixture = try SSAIFixture()
            defer { fixture.remove() }
            try FileManager.default.copyItem(at: hlsjs, to: fixture.site.appendingPathComponent("hls.mjs"))
            try Self.page.write(to: fixture.site.appendingPathComponent("player.html"), atomically: true, encoding: .utf8)
            let console = try Serve.withServer(config: fixture.config.path, environment: SSAIFixture.environment) { port, _ in
                try HeadlessChromium.console(
                    chromium: chromium, url: "http://127.0.0.1:\(port)/player.html",
                    profile: fixture.directory.appendingPathComponent("profile"), until: "DONE errors=", timeout: 100)
            }
            let done = try #require(console.first { $0.contains("DONE errors=") }, "page finished: \(console.suffix(5))")
            #expect(!console.contains { $0.contains("HLS_ERROR") }, "\(console.filter { $0.contains("HLS_ERROR") })")
            #expect(done.contains("DONE errors=0 "), "\(done)")
            func field(_ name: String) -> Double {
                done.split(separator: " ").first { $0.hasPrefix("\(name)=") }.flatMap { Double($0.dropFirst(name.count + 1).prefix { $0 != "\"" && $0 != "," }) } ?? 0
            }
            #expect(field("played") >= 50, "seconds played: \(done)")
            #expect(field("breaks") >= 2, "played through two breaks: \(console.filter { $0.contains("AD_") })")
            #expect(console.contains { $0.contains("AD_END") }, "returned to content after a break")
        }

        @Test("ffmpeg reads a stitched session for 30 s, through a break, without errors")
        func ffmpegReadsStitched() throws {
            let ffmpeg = try #require(Serve.which("ffmpeg"), "ffmpeg is required (.ci/run installs it)")
            let fixture = try SSAIFixture(every: 15, duration: 6)
            defer { fixture.remove() }
            let server = try TestServer(config: fixture.config.path, environment: SSAIFixture.environment)
            defer { server.stop() }
            let port = server.port
            let session = try SSAIServeTests.startSession(port: port, query: "device=tv")
            let (status, text) = try Serve.ffmpegRead(ffmpeg, "http://127.0.0.1:\(port)\(session["v1"]!)", seconds: 30)
            #expect(status == 0, "ffmpeg exit \(status)")
            let problems = Serve.playbackProblems(text, seconds: 30)
            #expect(problems.isEmpty, "\(problems)")
            // Through a break: an ad segment, and content again after it.
            let opened = text.split(separator: "\n").filter { $0.contains("[info] Opening '") }
            let firstAd = opened.firstIndex { $0.contains("/ads/ad1/v1/seg-") }
            #expect(firstAd != nil, "ffmpeg opened ad segments")
            if let firstAd {
                #expect(opened[firstAd...].contains { $0.contains("/live/demo/v1/") }, "and content after the ad")
            }
        }

        @Test("GStreamer hlsdemux2 (playbin3) plays a stitched session in real time through a break")
        func gstreamerPlaysStitched() throws {
            let gst = try #require(Serve.which("gst-launch-1.0"), "GStreamer is required: run Tests/tools/install-test-clients.sh")
            let fixture = try SSAIFixture(every: 15, duration: 6)
            defer { fixture.remove() }
            let server = try TestServer(config: fixture.config.path, environment: SSAIFixture.environment)
            defer { server.stop() }
            let port = server.port
            let log = server.log
            let url = "http://127.0.0.1:\(port)/ssai/demo/master.m3u8?device=tv"
            // Its output goes to a file: a pipe read only at the end could fill up and block it.
            let output = fixture.directory.appendingPathComponent("gst.log")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let player = Process()
            player.executableURL = URL(fileURLWithPath: gst)
            player.arguments = ["-q", "playbin3", "uri=\(url)", "video-sink=fakesink sync=true", "audio-sink=fakesink sync=true"]
            let handle = try FileHandle(forWritingTo: output)
            player.standardOutput = handle
            player.standardError = handle
            try player.run()
            // Real time: 35 s covers at least two break edges; then stop it (it is a live stream).
            let started = Date()
            while player.isRunning, Date().timeIntervalSince(started) < 35 { Thread.sleep(forTimeInterval: 0.5) }
            let stillPlaying = player.isRunning
            // gst-launch handles SIGINT by shutting the pipeline down, which hlsdemux2 can take a
            // while to do on a live stream: give it 5 s, then kill it.
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
            let served = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            #expect(served.contains("GET /ads/ad1/"), "GStreamer fetched ad segments")
            #expect(!served.contains("\" 404 ") && !served.contains("\" 416 "), "no client errors in the access log")
        }
    }
}
