import Foundation
import HeadwaterHLS
import Testing

extension RealClients {
    /// Issue 18 ("durable channels") as a viewer and a relay see it: hls.js in headless Chromium
    /// plays a push channel while `headwater serve` is restarted under it (`kill -9`, then SIGTERM,
    /// each restarted at once on the same port), with no fatal error and a bounded stall; and a pull
    /// channel's window comes back after `kill -9` with its upstream gone, so it can only have come
    /// from `server.state`. ``RestartTests`` covers the push side without a player.
    @Suite("headwater serve: playback and a pulled window through restarts", .serialized)
    struct RestartPlaybackTests {
        typealias Stop = RestartTests.Stop

        /// The push channel's `EXT-X-TARGETDURATION` (ffmpeg's `-hls_time 2`), s.
        static let targetDuration = 2.0

        /// hls.js on `/live/live/master.m3u8`. Every line it logs starts `KIND at=<Unix ms>`, so the
        /// test can set it against the instants it stopped the server: `TIME` (the playhead and the
        /// buffer ahead of it, every 200 ms), `EV` (media element events: `waiting`, `playing`…),
        /// `HLS_ERROR` (every hls.js error event with its details, HTTP code and URL), `LEVEL`
        /// (each playlist reload: media and discontinuity sequence range), `FRAG` (the fragment playing).
        static let page = """
            <!doctype html>
            <meta charset="utf-8">
            <video muted playsinline></video>
            <script type="module">
            import { Hls } from "./hls.mjs";
            const video = document.querySelector("video");
            const hls = new Hls();
            const say = (kind, text) => console.log(`${kind} at=${Date.now()} ${text}`);
            hls.on(Hls.Events.ERROR, (event, data) => {
              const url = data.url ?? data.frag?.url ?? data.context?.url ?? "-";
              const code = data.response?.code ?? "-";
              const reason = String(data.reason ?? data.error?.message ?? "-").replace(/\\s+/g, " ").slice(0, 400);
              say("HLS_ERROR", `fatal=${data.fatal} type=${data.type} details=${data.details} code=${code} url=${url} reason=${reason}`);
            });
            hls.on(Hls.Events.LEVEL_UPDATED, (event, data) => {
              const d = data.details;
              say("LEVEL", `msn=${d.startSN}-${d.endSN} cc=${d.startCC}-${d.endCC}`);
            });
            hls.on(Hls.Events.FRAG_CHANGED, (event, data) => say("FRAG", `sn=${data.frag.sn} cc=${data.frag.cc}`));
            for (const type of ["waiting", "playing", "seeking", "seeked", "error", "ended", "pause"]) {
              video.addEventListener(type, () => say("EV", `${type} t=${video.currentTime.toFixed(3)}`));
            }
            hls.loadSource("/live/live/master.m3u8");
            hls.attachMedia(video);
            \(HeadlessChromium.playWhenBuffered(rejected: "(error) => say(\"PLAY_REJECTED\", `${error}`)"))
            setInterval(() => {
              const ranges = video.buffered;
              const ahead = ranges.length ? ranges.end(ranges.length - 1) - video.currentTime : 0;
              say("TIME", `t=${video.currentTime.toFixed(3)} ahead=${ahead.toFixed(2)}`);
            }, 200);
            </script>
            """

        /// One console line of the page: `KIND at=<ms> fields…`.
        struct Line: CustomStringConvertible {
            var kind: Substring
            /// Unix time, s.
            var at: Double
            var text: Substring
            var description: String { String(text) }

            init?(_ message: Substring) {
                let parts = message.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
                guard parts.count >= 2, parts[1].hasPrefix("at="), let ms = Double(parts[1].dropFirst(3)) else { return nil }
                kind = parts[0]
                at = ms / 1000
                text = message
            }

            /// The value of ` key=` up to the next space (`reason=` runs to the end of the line).
            func field(_ key: String) -> Substring? {
                guard let range = text.range(of: " \(key)=") else { return nil }
                let rest = text[range.upperBound...]
                return key == "reason" ? rest : rest.prefix { $0 != " " }
            }
        }

        /// Headless Chromium on one page, its console written to a file the test reads while the page
        /// keeps running (``HeadlessChromium`` blocks until the page is done; this test restarts the
        /// server meanwhile).
        struct BrowserPage {
            let process = Process()
            let output: URL

            init(chromium: String, url: String, directory: URL) throws {
                output = directory.appendingPathComponent("chromium.log")
                _ = FileManager.default.createFile(atPath: output.path, contents: nil)
                process.executableURL = URL(fileURLWithPath: chromium)
                process.arguments = [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--mute-audio", "--autoplay-policy=no-user-gesture-required",
                    "--user-data-dir=\(directory.appendingPathComponent("profile").path)", "--enable-logging=stderr", "--v=0",
                    "--no-first-run", url,
                ]
                process.standardError = try FileHandle(forWritingTo: output)
                process.standardOutput = FileHandle.nullDevice
                try process.run()
            }

            /// The page's console lines so far (Chromium prints `…:INFO:CONSOLE:n] "message", source: …`).
            func lines() -> [Line] {
                let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
                return text.split(separator: "\n").compactMap { raw -> Line? in
                    guard raw.contains(":CONSOLE"), let open = raw.range(of: "] \""),
                        let close = raw.range(of: "\", source:", options: .backwards), open.upperBound <= close.lowerBound
                    else { return nil }
                    return Line(raw[open.upperBound..<close.lowerBound])
                }
            }

            /// Waits (at most `seconds`) until `accept` takes the lines so far.
            func wait(seconds: Double, _ accept: ([Line]) -> Bool) -> Bool {
                let deadline = Date().addingTimeInterval(seconds)
                while Date() < deadline {
                    if accept(lines()) { return true }
                    Thread.sleep(forTimeInterval: 0.1)
                }
                return false
            }

            func stop() {
                if process.isRunning { process.terminate() }
                process.waitUntilExit()
            }
        }

        /// A playhead sample of the page.
        struct Sample {
            var at: Double
            var time: Double
        }

        /// One restart as the player lived it.
        struct Measured: CustomStringConvertible {
            var stop: Stop
            /// When the old process had ended (Unix time, s).
            var stoppedAt: Double
            /// From the old process's end to the first 200 for the media playlist, s.
            var outage: Double
            /// From the new process's "listening" to that 200, s.
            var listeningToPlaylist: Double
            var samePlaylist: Bool
            /// The end of its observation window: the next restart, or the end of the test.
            var until: Double = 0
            /// Time the playhead did not advance within the window: over each 200 ms sample, the wall
            /// time that passed beyond the media time played (a playhead moving at half speed for a
            /// second counts ½ s), summed, s.
            var lagged = 0.0
            /// Of that, samples where it did not move at all, and the longest run of them, s.
            var frozen = 0.0
            var longestFrozen = 0.0
            /// `waiting` → `playing` within the window, s.
            var waiting = 0.0
            /// Wall-clock time minus media time played across the window, s (`lagged` less any seek
            /// forward hls.js made).
            var deficit = 0.0
            /// Media buffered ahead of the playhead at the stop, s, and the playlist reloads hls.js
            /// made in the window with the last media sequence number they listed.
            var ahead = 0.0
            var reloads = 0
            var lastMSN: Int?
            /// The stall: what the viewer saw frozen.
            var stall: Double { max(lagged, waiting) }
            /// The bound (see ``playsPushThroughRestarts()``): 2 target durations of media a restart may
            /// lose, the outage, and hls.js's 1 s retry delay for a request the outage failed.
            var limit: Double { 2 * RestartPlaybackTests.targetDuration + outage + 1 }
            var description: String {
                let f = RestartPlaybackTests.format
                return "\(stop.rawValue): outage \(Int(outage * 1000)) ms (listening→200 \(Int(listeningToPlaylist * 1000)) ms, same playlist \(samePlaylist)), stall \(f(stall)) s (playhead behind \(f(lagged)) s, of it stopped \(f(frozen)) s, longest \(f(longestFrozen)) s; waiting→playing \(f(waiting)) s; deficit \(f(deficit)) s) over \(f(until - stoppedAt)) s, limit \(f(limit)) s; \(f(ahead)) s buffered at the stop, \(reloads) playlist reloads after it (to MSN \(lastMSN.map { "\($0)" } ?? "-"))"
            }
        }

        static func format(_ seconds: Double) -> String { String(format: "%.2f", seconds) }

        /// hls.js error events a restart may cause and hls.js recovers from: a playlist or segment
        /// request that got no HTTP answer (code 0: refused, or cut by the kill) or a 503, retried
        /// (`errorRetry`: 1 s, then backing off). A 404, a parsing error (`levelParsingError`: media or
        /// discontinuity sequence mismatch) or anything else is the origin's fault.
        static let retriedLoads: Set<Substring> = [
            "levelLoadError", "levelLoadTimeOut", "fragLoadError", "fragLoadTimeOut", "audioTrackLoadError", "audioTrackLoadTimeOut",
        ]
        /// A stall's own events: measured and bounded as the stall.
        static let stallEvents: Set<Substring> = ["bufferStalledError", "bufferNudgeOnStall"]

        /// Why a non-fatal error event is expected, or `nil` when it is not.
        ///
        /// - A retried load (``retriedLoads``) with no answer or a 503, from the stop until a retry
        ///   scheduled in the outage has landed.
        /// - A stall event (``stallEvents``) between a stop and the next one: the stall measured.
        /// - `fragGap` when the server logged a source stall (`sourceStalled`): Headwater lists an
        ///   `EXT-X-GAP` filler when the encoder's next segment is 1½ target durations late (README,
        ///   "Stalls"), hls.js skips it. Seen here with ffmpeg starved of CPU as Chromium starts,
        ///   before any restart: not a restart's doing, and documented.
        /// - After such a `fragGap` (within 15 s, the time for the hole to reach the playhead), the
        ///   stall at the hole it leaves in hls.js's buffer (`bufferStalledError`,
        ///   `bufferNudgeOnStall`) and the seek over it (`bufferSeekOverHole`, "fragment loaded with
        ///   buffer holes"). Without a gap before it, `bufferSeekOverHole` is a timestamp jump
        ///   without a discontinuity: the origin's fault.
        static func excuse(_ error: Line, restarts: [Measured], errors: [Line], sourceStalled: Bool) -> String? {
            guard error.field("fatal") == "false", let details = error.field("details") else { return nil }
            if details == "fragGap" {
                return sourceStalled ? "an EXT-X-GAP filler for a late encoder segment (the server logged the source stall)" : nil
            }
            if stallEvents.contains(details) || details == "bufferSeekOverHole",
                let gap = errors.last(where: { $0.field("details") == "fragGap" && $0.at <= error.at }), error.at - gap.at <= 15,
                sourceStalled
            {
                return "hls.js skipping the hole of the gap at \(gap.field("url") ?? "-")"
            }
            for restart in restarts where error.at >= restart.stoppedAt - 0.5 {
                // Requests fail until the origin answers again; a retry scheduled then lands 1–2 s later.
                let retries = restart.stoppedAt + restart.outage + 2 * targetDuration + 2
                if retriedLoads.contains(details), error.at <= retries, let code = error.field("code"), code == "0" || code == "503" {
                    return "\(restart.stop.rawValue) restart: no answer during the outage, retried"
                }
                if stallEvents.contains(details), error.at <= restart.until {
                    return "\(restart.stop.rawValue) restart: the stall (measured)"
                }
            }
            return nil
        }

        /// A live ffmpeg push (the README's options), hls.js playing it; once it plays, `kill -9`, then
        /// 10 s later SIGTERM, each restarted at once on the same port, each right after a segment is
        /// listed (no upload in flight, the last version saved). Then 15 s more of playback.
        ///
        /// - No fatal hls.js error. Non-fatal ones are printed; only those a restart (or a late
        ///   encoder's gap filler) explains pass (``excuse(_:restarts:errors:sourceStalled:)``): a
        ///   request with no HTTP answer (or a 503) during the outage, retried; the stall's own
        ///   events. A `levelParsingError` (the media or discontinuity sequence changed under the
        ///   player), a 404 or a parsing error fails.
        /// - The stall per restart — the time the playhead fell behind the wall clock (stopped, or
        ///   slowed), or `waiting` until `playing` if longer, from the stop to the next restart — is
        ///   printed (`restart-playback: kill -9 stall X s, SIGTERM stall Y s`) and bounded by
        ///   ``Measured/limit``: the outage, plus hls.js's 1 s retry delay for a request that failed
        ///   in it, plus 2 target durations, the most media a restart loses (the segment whose upload
        ///   was refused, and the next one that carries its media and is not listed; README). With
        ///   the window restored and ffmpeg resuming, nothing else can hold the player. The outage
        ///   itself must stay under 3 s.
        /// - The playhead catches up (wall time minus media time played over each window within the
        ///   same bound) and still advances at the end.
        @Test("hls.js plays a push channel through kill -9 and SIGTERM restarts: no fatal error, non-fatal ones only the restart's, a bounded stall, playback to the end")
        func playsPushThroughRestarts() throws {
            let chromium = try #require(ServeCommandTests.which("chromium"), "chromium is required: run Tests/tools/install-test-clients.sh")
            let ffmpeg = try #require(ServeCommandTests.which("ffmpeg"), "ffmpeg is required (apt-get install -y ffmpeg; .ci/run installs it)")
            let hlsjs = ServeCommandTests.repository.appendingPathComponent(".build/test-clients/hls.mjs")
            try #require(FileManager.default.fileExists(atPath: hlsjs.path), "hls.js is required: run Tests/tools/install-test-clients.sh")
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-restart-hlsjs-\(UUID())")
            let site = directory.appendingPathComponent("site")
            try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            try FileManager.default.copyItem(at: hlsjs, to: site.appendingPathComponent("hls.mjs"))
            try Self.page.write(to: site.appendingPathComponent("player.html"), atomically: true, encoding: .utf8)
            let config = directory.appendingPathComponent("headwater.yaml")
            try """
                server:
                  state: \(directory.appendingPathComponent("state").path)
                  public: \(site.path)
                channels:
                  live:
                    source:
                      type: push
                      token_env: HW_TEST_INGEST_TOKEN
                      target_duration: \(Int(Self.targetDuration))
                    window: 12
                """.write(to: config, atomically: true, encoding: .utf8)
            let port = try ServeCommandTests.freePort()
            var run = try RestartTests.launch(config: config.path, port: port, directory: directory, number: 0)
            defer { if run.process.isRunning { run.process.terminate() } }

            let (pusher, pushed) = try RestartTests.startPush(ffmpeg, port: port, seconds: 120, directory: directory)
            defer { if pusher.isRunning { pusher.terminate() } }
            try #require(RestartTests.waitForPlaylist(port: port, seconds: 25) { _ in true } != nil, "the pushed channel went live; ffmpeg: \(pushed())")

            let browser = try BrowserPage(chromium: chromium, url: "http://127.0.0.1:\(port)/player.html", directory: directory)
            defer { browser.stop() }
            func tail() -> String { browser.lines().suffix(40).map(\.description).joined(separator: "\n") }
            // Playing: the playhead has moved 4 s (start-up, then a few segments played before the first restart).
            let started = browser.wait(seconds: 30) { lines in
                let times = lines.filter { $0.kind == "TIME" }.compactMap { $0.field("t").flatMap { Double($0) } }.filter { $0 > 0 }
                return (times.last ?? 0) - (times.first ?? 0) >= 4
            }
            try #require(started, "hls.js started playing:\n\(tail())")

            var restarts: [Measured] = []
            for (number, stop) in [Stop.kill, .term].enumerated() {
                if number > 0 { Thread.sleep(forTimeInterval: 10) }
                // Right after a new segment is listed, as RestartTests does: no upload in flight and
                // the last version saved (a crash within milliseconds of a publish restores the one before).
                let current = try #require(RestartTests.playlist(port: port))
                _ = try #require(
                    RestartTests.waitForPlaylist(port: port, seconds: 6) { RestartTests.lastMSN($0) > RestartTests.lastMSN(current.model) },
                    "restart \(number): the channel advances; ffmpeg: \(pushed())")
                Thread.sleep(forTimeInterval: 0.3)
                let before = try #require(RestartTests.playlist(port: port))

                switch stop {
                case .kill: kill(run.process.processIdentifier, SIGKILL)
                case .term: run.process.terminate()
                }
                run.process.waitUntilExit()
                let stopped = Date()
                if stop == .term { #expect(run.process.terminationStatus == 0, "SIGTERM: exit 0") }
                run = try RestartTests.launch(config: config.path, port: port, directory: directory, number: number + 1)
                var listening: Date?
                var first: (text: String, model: MediaPlaylist)?
                var firstAt = Date()
                let deadline = Date().addingTimeInterval(20)
                while first == nil, Date() < deadline {
                    if listening == nil, (try? String(contentsOf: run.log, encoding: .utf8))?.contains("listening") == true {
                        listening = Date()
                    }
                    if let playlist = RestartTests.playlist(port: port) {
                        (first, firstAt) = (playlist, Date())
                    } else {
                        Thread.sleep(forTimeInterval: 0.005)
                    }
                }
                let served = try #require(first, "restart \(number) (\(stop)): the playlist is served again")
                let heard = listening ?? firstAt
                #expect(served.text == before.text, "restart \(number) (\(stop)): the same playlist\n\(served.text)\n--- before:\n\(before.text)")
                restarts.append(
                    Measured(
                        stop: stop, stoppedAt: stopped.timeIntervalSince1970, outage: firstAt.timeIntervalSince(stopped),
                        listeningToPlaylist: max(0, firstAt.timeIntervalSince(heard)), samePlaylist: served.text == before.text))
            }
            // Watch the player for 15 s after the last restart: long enough for a lost segment's
            // hole to reach the playhead (it plays about 3 target durations behind the live edge).
            Thread.sleep(forTimeInterval: 15)
            let lines = browser.lines()
            let end = Date().timeIntervalSince1970
            browser.stop()
            #expect(pusher.isRunning, "ffmpeg kept pushing through both restarts: \(pushed())")

            let playhead = lines.filter { $0.kind == "TIME" }.compactMap { line in
                line.field("t").flatMap { Double($0) }.map { Sample(at: line.at, time: $0) }
            }
            for index in restarts.indices {
                restarts[index].until = index + 1 < restarts.count ? restarts[index + 1].stoppedAt : end
                let restart = restarts[index]
                let window = playhead.filter { $0.at >= restart.stoppedAt && $0.at <= restart.until }
                var frozenRun = 0.0
                for (a, b) in zip(window, window.dropFirst()) {
                    let behind = (b.at - a.at) - (b.time - a.time)
                    // 20 ms: the 1 ms rounding of both clocks and timer jitter.
                    if behind > 0.02 { restarts[index].lagged += behind }
                    if b.time - a.time < 0.01 {
                        restarts[index].frozen += b.at - a.at
                        frozenRun += b.at - a.at
                        restarts[index].longestFrozen = max(restarts[index].longestFrozen, frozenRun)
                    } else {
                        frozenRun = 0
                    }
                }
                if let first = window.first, let last = window.last {
                    restarts[index].deficit = (last.at - first.at) - (last.time - first.time)
                }
                restarts[index].ahead = lines.last { $0.kind == "TIME" && $0.at <= restart.stoppedAt }?.field("ahead")
                    .flatMap { Double($0) } ?? 0
                let reloads = lines.filter { $0.kind == "LEVEL" && $0.at > restart.stoppedAt && $0.at <= restart.until }
                restarts[index].reloads = reloads.count
                restarts[index].lastMSN = reloads.last?.field("msn").flatMap { $0.split(separator: "-").last }.flatMap { Int($0) }
                let events = lines.filter { $0.kind == "EV" && $0.at >= restart.stoppedAt && $0.at <= restart.until }
                for (position, waiting) in events.enumerated() where waiting.text.contains(" waiting ") {
                    let resumed = events[(position + 1)...].first { $0.text.contains(" playing ") }
                    restarts[index].waiting += (resumed?.at ?? restart.until) - waiting.at
                }
            }
            for restart in restarts { print("restart-playback: \(restart)") }
            let errors = lines.filter { $0.kind == "HLS_ERROR" }
            // The server's own word on source stalls (gap fillers), from every run's log.
            let stalls = (0...restarts.count).flatMap { number in
                ((try? String(contentsOf: directory.appendingPathComponent("serve-\(number).log"), encoding: .utf8)) ?? "")
                    .split(separator: "\n").filter { $0.contains("source.report=stall") }.map { "serve-\(number): \($0)" }
            }
            for stall in stalls { print("restart-playback: server: \(stall)") }
            let sourceStalled = stalls.contains { $0.contains("filling with gap") }
            func excuse(_ error: Line) -> String? {
                Self.excuse(error, restarts: restarts, errors: errors, sourceStalled: sourceStalled)
            }
            for error in errors {
                print("restart-playback: hls.js error event: \(error) — \(excuse(error) ?? "NOT EXPECTED")")
            }
            print(
                "restart-playback: kill -9 stall \(Self.format(restarts.first { $0.stop == .kill }?.stall ?? .nan)) s, SIGTERM stall \(Self.format(restarts.first { $0.stop == .term }?.stall ?? .nan)) s"
            )

            #expect(restarts.count == 2)
            #expect(!lines.contains { $0.kind == "PLAY_REJECTED" }, "\(lines.filter { $0.kind == "PLAY_REJECTED" })")
            let fatal = errors.filter { $0.field("fatal") != "false" }
            #expect(fatal.isEmpty, "hls.js fatal errors: \(fatal)\n\(tail())")
            let unexpected = errors.filter { excuse($0) == nil }
            #expect(unexpected.isEmpty, "hls.js error events no restart explains: \(unexpected)")
            for restart in restarts {
                // The bound below grows with the outage: keep that bounded too (RestartTests holds
                // "listening" to the first 200 under 1 s; this adds the process's start, on a loaded machine).
                #expect(restart.outage < 3, "the origin answered again within 3 s of the stop: \(restart)")
                #expect(restart.stall <= restart.limit, "restart-playback: \(restart)")
                #expect(restart.deficit <= restart.limit, "the playhead caught up: \(restart)")
                // Not a restart the player slept through on its buffer: it played on for longer
                // than it had buffered, so on media it loaded from the new process, and it reloaded
                // the playlist from it.
                #expect(restart.until - restart.stoppedAt - restart.ahead > 3, "played past its buffer: \(restart)")
                #expect(restart.reloads >= 3, "reloaded the playlist from the new process: \(restart)")
            }
            // Playback goes on to the end: the playhead advanced over the last 5 s watched, at half
            // speed at least (Chromium's renderer, starved of CPU on a loaded machine, runs the
            // playhead up to ~15 % behind the wall clock for seconds; a stopped player advances 0).
            let lastFive = playhead.filter { $0.at >= end - 5 }
            let advanced = (lastFive.last?.time ?? 0) - (lastFive.first?.time ?? 0)
            #expect(lastFive.count >= 10 && advanced >= 2.5, "playing at the end: \(Self.format(advanced)) s of media in the last 5 s\n\(tail())")

            pusher.terminate()
            for _ in 0..<50 where pusher.isRunning { Thread.sleep(forTimeInterval: 0.1) }
            if pusher.isRunning { kill(pusher.processIdentifier, SIGKILL) }
            pusher.waitUntilExit()
        }

        // MARK: - A pull channel restores its window

        /// A GET (HTTP/1.0, the server closes when done): its status and body bytes; status 0 when
        /// nothing answered, -1 when the body is shorter than its `Content-Length`.
        static func fetch(port: Int, path: String) -> (status: Int, body: [UInt8]) {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { return (0, []) }
            let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            var sent = 0
            while sent < request.count {
                let count = request[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { return (0, []) }
                sent += count
            }
            var response: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count <= 0 { break }
                response += buffer[..<count]
            }
            guard let split = (0..<max(0, response.count - 3)).first(where: { response[$0..<($0 + 4)] == [13, 10, 13, 10] }) else {
                return (0, [])
            }
            let head = String(decoding: response[..<split], as: UTF8.self)
            guard head.hasPrefix("HTTP/1.1 "), let status = Int(head.dropFirst(9).prefix(3)) else { return (0, []) }
            let body = Array(response[(split + 4)...])
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) }
            if let length, length != body.count { return (-1, body) }
            return (status, body)
        }

        /// `uri` as a path, relative to the playlist at `base` (a path).
        static func resolve(_ uri: String, against base: String) -> String {
            if uri.hasPrefix("/") { return uri }
            return String(base[...(base.lastIndex(of: "/") ?? base.startIndex)]) + uri
        }

        /// What the relay serves: its multivariant playlist and every playlist it names, by path.
        struct Relay: Equatable {
            var master: String
            var playlists: [String: String]

            /// The media playlists, parsed (I-frame playlists are compared as text only).
            var media: [String: MediaPlaylist] {
                playlists.compactMapValues { text in
                    guard let playlist = try? PlaylistParser().parseMedia(Array(text.utf8)), !playlist.iFramesOnly else { return nil }
                    return playlist
                }
            }

            /// Every listed segment that has media (not `EXT-X-GAP`), by path.
            var segments: [String] {
                Set(media.flatMap { path, playlist in
                    playlist.segments.filter { !$0.tags.gap }.map { RestartPlaybackTests.resolve($0.uri, against: path) }
                }).sorted()
            }
        }

        static let relayMaster = "/live/relay/master.m3u8"

        /// The relay's playlists, or `nil` unless all of them answer 200 and parse.
        static func relay(port: Int) -> Relay? {
            let (status, master) = RestartTests.get(port: port, path: relayMaster)
            guard status == 200, let model = try? PlaylistParser().parseMultivariant(Array(master.utf8)) else { return nil }
            let uris = model.variants.map(\.uri) + model.renditions.compactMap(\.uri) + model.iFrameVariants.map(\.uri)
            var playlists: [String: String] = [:]
            for uri in uris {
                let path = resolve(uri, against: relayMaster)
                let (status, text) = RestartTests.get(port: port, path: path)
                guard status == 200, (try? PlaylistParser().parseMedia(Array(text.utf8))) != nil else { return nil }
                playlists[path] = text
            }
            return playlists.isEmpty ? nil : Relay(master: master, playlists: playlists)
        }

        /// The first media playlist's text: what changes with each version the relay publishes.
        static func firstMedia(port: Int) -> String? {
            guard let relay = relay(port: port), let path = relay.media.keys.sorted().first else { return nil }
            return relay.playlists[path]
        }

        /// A relay (`source.type: pull`, `server.state` set) of a second headwater's loop demo (three
        /// video renditions, an alternate audio one, their I-frame playlists). With the upstream
        /// stopped, the relay's playlists and segment bytes are recorded and the relay is killed
        /// (`kill -9`) and started again: nothing can be fetched, so what it serves comes from its
        /// state directory. Every playlist (multivariant, media, I-frame) is served within 1 s of
        /// "listening", the same text (URIs, media and discontinuity sequence numbers), and every
        /// segment answers 200 with the same bytes.
        @Test("a pull channel's window comes back after kill -9 with its upstream stopped: every playlist the same within 1 s of listening, every segment the same bytes")
        func pullWindowRestored() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-restart-pull-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            // The upstream: a second headwater with the loop demo (three video renditions and an
            // alternate audio one, 2 s segments).
            let upstreamConfig = directory.appendingPathComponent("upstream.yaml")
            try """
                channels:
                  demo:
                    source:
                      type: loop
                      package: \(ServeCommandTests.repository.appendingPathComponent("Public/demo/master.m3u8").path)
                    window: 12
                """.write(to: upstreamConfig, atomically: true, encoding: .utf8)
            let upstream = try TestServer(config: upstreamConfig.path)
            defer { upstream.stop() }
            let config = directory.appendingPathComponent("headwater.yaml")
            try """
                server:
                  state: \(directory.appendingPathComponent("state").path)
                channels:
                  relay:
                    source:
                      type: pull
                      url: http://127.0.0.1:\(upstream.port)/live/demo/master.m3u8
                      target_duration: 2
                    window: 12
                """.write(to: config, atomically: true, encoding: .utf8)
            let port = try ServeCommandTests.freePort()
            var run = try RestartTests.launch(config: config.path, port: port, directory: directory, number: 0)
            defer { if run.process.isRunning { run.process.terminate() } }
            func log(_ run: RestartTests.Run) -> String { (try? String(contentsOf: run.log, encoding: .utf8)) ?? "" }

            // The relay has pulled a few segments of every rendition.
            var live: Relay?
            let deadline = Date().addingTimeInterval(25)
            while Date() < deadline {
                if let relay = Self.relay(port: port), relay.media.count >= 4, relay.media.values.allSatisfy({ $0.segments.count >= 3 }) {
                    live = relay
                    break
                }
                Thread.sleep(forTimeInterval: 0.2)
            }
            try #require(live != nil, "the relay went live with every rendition: \(log(run).suffix(1500))")

            // Stop the upstream before recording. Pull polls each rendition on its own schedule, so
            // while it runs some rendition publishes every few hundred milliseconds, and a kill -9
            // within milliseconds of a publish restores the version before it (ChannelStateWriter):
            // with it stopped, the window changes only when a stall filler (EXT-X-GAP, every target
            // duration after 1½) goes into every rendition at once.
            upstream.process.terminate()
            upstream.process.waitUntilExit()
            #expect(ServeCommandTests.get(port: upstream.port, path: "/healthz").isEmpty, "the upstream answers no more")

            // Record right after a version (0.3 s on, as RestartTests does), and the segments' bytes;
            // kill -9 once a look after the bytes finds the same playlists.
            var recorded: (relay: Relay, bytes: [String: [UInt8]])?
            for _ in 0..<5 where recorded == nil {
                let current = try #require(Self.firstMedia(port: port))
                var changed = false
                for _ in 0..<300 where !changed {
                    Thread.sleep(forTimeInterval: 0.01)
                    changed = Self.firstMedia(port: port).map { $0 != current } ?? false
                }
                try #require(changed, "the relay publishes a version (a segment or a stall filler)")
                Thread.sleep(forTimeInterval: 0.3)
                let before = try #require(Self.relay(port: port))
                var bytes: [String: [UInt8]] = [:]
                for path in before.segments {
                    let (status, body) = Self.fetch(port: port, path: path)
                    #expect(status == 200, "before the restart: GET \(path) answered \(status)")
                    bytes[path] = body
                }
                if Self.relay(port: port) == before {
                    kill(run.process.processIdentifier, SIGKILL)
                    recorded = (before, bytes)
                }
            }
            let (before, bytes) = try #require(recorded, "a stable moment to record the relay")
            #expect(bytes.count >= 12, "segments with media in the recorded window: \(bytes.count)")
            run.process.waitUntilExit()
            #expect(run.process.terminationReason == .uncaughtSignal)
            let gaps = before.media.values.map { $0.segments.filter(\.tags.gap).count }.reduce(0, +)
            print("restart-pull: recorded \(before.playlists.count) playlists, \(bytes.count) segments (\(bytes.values.map(\.count).reduce(0, +)) bytes), \(gaps) gap fillers")

            // Restart with the upstream stopped: whatever is served comes from server.state.
            run = try RestartTests.launch(config: config.path, port: port, directory: directory, number: 1)
            var listening: Date?
            var first: Relay?
            var firstAt = Date()
            let restartDeadline = Date().addingTimeInterval(20)
            while first == nil, Date() < restartDeadline {
                if listening == nil, log(run).contains("listening") { listening = Date() }
                if let relay = Self.relay(port: port) {
                    (first, firstAt) = (relay, Date())
                } else {
                    Thread.sleep(forTimeInterval: 0.005)
                }
            }
            if listening == nil, log(run).contains("listening") { listening = firstAt }
            let served = try #require(first, "the relay serves its playlists again: \(log(run).suffix(1500))")
            let heard = try #require(listening, "the relay logged listening")
            let delay = max(0, firstAt.timeIntervalSince(heard))
            print("restart-pull: listening→every playlist 200 in \(Int(delay * 1000)) ms")
            #expect(delay < 1, "every playlist served within 1 s of listening: \(Int(delay * 1000)) ms")
            #expect(log(run).contains("restored the channel's window"), "\(log(run).prefix(1500))")

            #expect(served.master == before.master, "the same multivariant playlist\n\(served.master)\n--- before:\n\(before.master)")
            #expect(Set(served.playlists.keys) == Set(before.playlists.keys))
            let servedMedia = served.media
            for (path, old) in before.media.sorted(by: { $0.key < $1.key }) {
                let new = try #require(servedMedia[path], "\(path) is served again")
                #expect(new.segments.map(\.uri) == old.segments.map(\.uri), "\(path): the same URIs")
                #expect(new.mediaSequence == old.mediaSequence, "\(path): the same media sequence")
                #expect(new.discontinuitySequence == old.discontinuitySequence, "\(path): the same discontinuity sequence")
                #expect(served.playlists[path] == before.playlists[path], "\(path): the same playlist\n\(served.playlists[path] ?? "")\n--- before:\n\(before.playlists[path] ?? "")")
            }
            for (path, body) in bytes.sorted(by: { $0.key < $1.key }) {
                let (status, again) = Self.fetch(port: port, path: path)
                #expect(status == 200, "after the restart: GET \(path) answered \(status)")
                #expect(again == body, "\(path): the same \(body.count) bytes (got \(again.count))")
            }
            run.process.terminate()
            run.process.waitUntilExit()
            #expect(run.process.terminationStatus == 0, "SIGTERM: exit 0")
        }
    }
}
