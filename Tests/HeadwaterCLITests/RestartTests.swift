import Foundation
import HeadwaterHLS
import Testing

extension RealClients {
    /// `headwater serve` with `server.state` restarted under a live ffmpeg push, as an operator's
    /// `systemctl restart` (SIGTERM) and a crash (`kill -9`) would: after each restart the same
    /// playlist is served within a second of "listening", and ffmpeg — given the README's retry
    /// options — keeps pushing, its numbering continuing.
    @Suite("headwater serve: a push channel survives restarts", .serialized)
    struct RestartTests {
        /// How a restart stops the running server.
        enum Stop: String, CaseIterable, Sendable {
            case kill = "kill -9"
            case term = "SIGTERM"
        }

        /// One run of `headwater serve` on the fixed port ffmpeg pushes to.
        struct Run {
            let process: Process
            let log: URL
            /// When the process was started.
            let started: Date
        }

        static func launch(config: String, port: Int, directory: URL, number: Int) throws -> Run {
            let log = directory.appendingPathComponent("serve-\(number).log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let process = Process()
            process.executableURL = HeadwaterProcess.executable
            process.arguments = ["serve", "--config", config, "--listen", "127.0.0.1:\(port)"]
            process.environment = ProcessInfo.processInfo.environment.merging(["HW_TEST_INGEST_TOKEN": "s3cret"]) { $1 }
            let handle = try FileHandle(forWritingTo: log)
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            return Run(process: process, log: log, started: Date())
        }

        /// The README's push (`-ignore_io_errors 1 -timeout 5`, which let ffmpeg outlive an origin
        /// restart) of a live test stream for `seconds` to `port`'s channel `live`; its log goes to a
        /// file, whose end `log()` returns for failure messages.
        static func startPush(
            _ ffmpeg: String, port: Int, seconds: Int, directory: URL
        ) throws -> (process: Process, log: () -> String) {
            let pushLog = directory.appendingPathComponent("ffmpeg.log")
            _ = FileManager.default.createFile(atPath: pushLog.path, contents: nil)
            let pusher = Process()
            pusher.executableURL = URL(fileURLWithPath: ffmpeg)
            pusher.arguments = ServeCommandTests.liveEncoderArguments(
                seconds: seconds,
                output: [
                    "-method", "PUT", "-ignore_io_errors", "1", "-timeout", "5",
                    "-headers", "Authorization: Bearer s3cret\r\n", "http://127.0.0.1:\(port)/ingest/live/stream.m3u8",
                ])
            let pushHandle = try FileHandle(forWritingTo: pushLog)
            pusher.standardOutput = pushHandle
            pusher.standardError = pushHandle
            try pusher.run()
            return (pusher, { ((try? String(contentsOf: pushLog, encoding: .utf8)) ?? "").suffix(1500).description })
        }

        /// A GET's status and body (HTTP/1.0, so the server closes when done); status 0 when nothing answered.
        static func get(port: Int, path: String) -> (status: Int, body: String) {
            let response = ServeCommandTests.get(port: port, path: path)
            guard response.hasPrefix("HTTP/1.1 "), let end = response.range(of: "\r\n\r\n") else { return (0, "") }
            return (Int(response.dropFirst(9).prefix(3)) ?? 0, String(response[end.upperBound...]))
        }

        /// A segment's bytes, fetched with curl.
        static func segment(_ curl: String, port: Int, uri: String) throws -> Data {
            let (process, output) = try ServeCommandTests.run(
                curl, ["-s", "-S", "--fail", "--max-time", "5", "http://127.0.0.1:\(port)/live/live/\(uri)"])
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "GET \(uri): curl exit \(process.terminationStatus)")
            return data
        }

        /// The served media playlist, parsed, with its text; `nil` until it answers 200.
        static func playlist(port: Int) -> (text: String, model: MediaPlaylist)? {
            let (status, body) = get(port: port, path: "/live/live/stream.m3u8")
            guard status == 200, let model = try? PlaylistParser().parseMedia(Array(body.utf8)) else { return nil }
            return (body, model)
        }

        static func lastMSN(_ playlist: MediaPlaylist) -> UInt64 {
            playlist.mediaSequenceNumber(at: playlist.segments.count - 1)
        }

        /// Waits (at most `seconds`) for a playlist that `accept` takes.
        static func waitForPlaylist(
            port: Int, seconds: Double, _ accept: (MediaPlaylist) -> Bool
        ) -> (text: String, model: MediaPlaylist)? {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if let playlist = playlist(port: port), accept(playlist.model) { return playlist }
                Thread.sleep(forTimeInterval: 0.02)
            }
            return nil
        }

        /// What one restart measured.
        struct Restart: CustomStringConvertible {
            var stop: Stop
            /// How long the origin stayed down before the new process started, s.
            var downtime: Double
            /// From the "listening" log line to the first 200 for the playlist, ms.
            var listeningToPlaylist: Double
            /// From the old process's end to the first 200, ms (what a player waits).
            var outage: Double
            /// The first playlist served equals the one served before (bytes).
            var samePlaylist: Bool
            /// Discontinuities added before ffmpeg's first segment after the restart.
            var discontinuities: Int
            /// Stall fillers listed before ffmpeg's first segment after the restart.
            var fillers = 0
            /// When it ended, s since the test started.
            var at: Double = 0
            var description: String {
                "\(stop) (down \(downtime) s): listening→200 \(Int(listeningToPlaylist)) ms, outage \(Int(outage)) ms, same playlist \(samePlaylist), discontinuities \(discontinuities), gap fillers \(fillers), at \(Int(at)) s"
            }
        }

        @Test("kill -9 and SIGTERM, 5 times each, under a live ffmpeg push: the same playlist within 1 s of listening, numbering continues")
        func restartsUnderLivePush() throws {
            let ffmpeg = try #require(ServeCommandTests.which("ffmpeg"), "ffmpeg is required (apt-get install -y ffmpeg; .ci/run installs it)")
            let curl = try #require(ServeCommandTests.which("curl"), "curl is required (apt-get install -y curl)")
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-restart-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let config = directory.appendingPathComponent("headwater.yaml")
            try """
                server:
                  state: \(directory.appendingPathComponent("state").path)
                channels:
                  live:
                    source:
                      type: push
                      token_env: HW_TEST_INGEST_TOKEN
                      target_duration: 2
                    window: 12
                """.write(to: config, atomically: true, encoding: .utf8)
            let port = try ServeCommandTests.freePort()
            var run = try Self.launch(config: config.path, port: port, directory: directory, number: 0)
            defer { if run.process.isRunning { run.process.terminate() } }

            let (pusher, pushed) = try Self.startPush(ffmpeg, port: port, seconds: 240, directory: directory)
            defer { if pusher.isRunning { pusher.terminate() } }
            try #require(Self.waitForPlaylist(port: port, seconds: 20) { _ in true } != nil, "the pushed channel went live")

            var restarts: [Restart] = []
            let start = Date()
            // Each stop right away, and after 3 s down: then at least one of ffmpeg's uploads is
            // refused, and it sends that media with its next segment.
            let plan: [(Stop, Double)] = (0..<10).map { ($0 % 2 == 0 ? .kill : .term, $0 % 4 < 2 ? 0 : 3) }
            for (number, (stop, downtime)) in plan.enumerated() {
                // Right after a new segment is listed (1½ s before the next), so no version is
                // published between this look and the stop.
                let current = try #require(Self.playlist(port: port))
                let fresh = try #require(
                    Self.waitForPlaylist(port: port, seconds: 6) { Self.lastMSN($0) > Self.lastMSN(current.model) },
                    "restart \(number): the channel advances")
                Thread.sleep(forTimeInterval: 0.3)
                let before = try #require(Self.playlist(port: port))
                #expect(before.text == fresh.text, "restart \(number): no publish in between")
                let segments = try before.model.segments.map { try Self.segment(curl, port: port, uri: $0.uri) }

                switch stop {
                case .kill: kill(run.process.processIdentifier, SIGKILL)
                case .term: run.process.terminate()
                }
                run.process.waitUntilExit()
                let stopped = Date()
                if stop == .term { #expect(run.process.terminationStatus == 0, "SIGTERM: exit 0") }
                Thread.sleep(forTimeInterval: downtime)
                run = try Self.launch(config: config.path, port: port, directory: directory, number: number + 1)

                // Poll the log for "listening" and the playlist for a 200, as fast as they come.
                var listening: Date?
                var first: (text: String, model: MediaPlaylist)?
                var firstAt = Date()
                let deadline = Date().addingTimeInterval(20)
                while first == nil, Date() < deadline {
                    if listening == nil, (try? String(contentsOf: run.log, encoding: .utf8))?.contains("listening") == true {
                        listening = Date()
                    }
                    if let playlist = Self.playlist(port: port) {
                        first = playlist
                        firstAt = Date()
                    } else {
                        Thread.sleep(forTimeInterval: 0.005)
                    }
                }
                if listening == nil, (try? String(contentsOf: run.log, encoding: .utf8))?.contains("listening") == true {
                    listening = firstAt
                }
                let served = try #require(first, "restart \(number) (\(stop)): the playlist is served again")
                let heard = try #require(listening, "restart \(number): the server logged listening")
                var measured = Restart(
                    stop: stop, downtime: downtime, listeningToPlaylist: max(0, firstAt.timeIntervalSince(heard)) * 1000,
                    outage: firstAt.timeIntervalSince(stopped) * 1000, samePlaylist: served.text == before.text,
                    discontinuities: 0)
                #expect(served.text == before.text, "restart \(number) (\(stop)): the same playlist\n\(served.text)\n--- before:\n\(before.text)")
                #expect(measured.listeningToPlaylist < 1000, "restart \(number): \(measured)")
                for (segment, bytes) in zip(served.model.segments, segments) {
                    #expect(try Self.segment(curl, port: port, uri: segment.uri) == bytes, "restart \(number): \(segment.uri) has the same bytes")
                }

                // ffmpeg resumes: its first segment listed after the restart continues the
                // numbering, after at most one discontinuity (stall fillers, EXT-X-GAP of one target
                // duration, may come first when it takes more than 1½ target durations).
                let last = Self.lastMSN(before.model)
                let resumed = try #require(
                    Self.waitForPlaylist(port: port, seconds: 15) { Self.lastMSN($0) > last && $0.segments.last?.tags.gap == false },
                    "restart \(number) (\(stop)): ffmpeg's segments are listed again; ffmpeg: \(pushed())")
                let model = resumed.model
                let after = Int(last + 1 - model.effectiveMediaSequence)
                let index = try #require(model.segments.indices.first { $0 >= after && !model.segments[$0].tags.gap })
                let dsns = model.discontinuitySequenceNumbers()
                let previousDSN = before.model.discontinuitySequenceNumbers().last!
                measured.discontinuities = Int(dsns[index] - previousDSN)
                measured.fillers = index - after
                #expect(measured.discontinuities <= 1, "restart \(number): \(measured)")
                #expect(model.segments[after...index].filter(\.tags.discontinuity).count == measured.discontinuities)
                if downtime > 2 { #expect(measured.discontinuities == 1, "restart \(number): media was lost: \(measured)") }
                // The restored segments are unchanged in the new playlist (C1).
                let common = Int(last + 1 - max(before.model.effectiveMediaSequence, model.effectiveMediaSequence))
                #expect(
                    Array(model.segments[..<after].suffix(common).map(\.uri)) == Array(before.model.segments.suffix(common).map(\.uri)),
                    "restart \(number): the past never changes")
                #expect(pusher.isRunning, "restart \(number): ffmpeg keeps pushing; ffmpeg: \(pushed())")
                measured.at = Date().timeIntervalSince(start)
                restarts.append(measured)
            }
            for restart in restarts { print("restart: \(restart)") }
            let worst = restarts.map(\.listeningToPlaylist).max() ?? 0
            print("restarts: \(restarts.count), listening→200 worst \(Int(worst)) ms, with a discontinuity \(restarts.filter { $0.discontinuities == 1 }.count), in \(Int(Date().timeIntervalSince(start))) s")
            #expect(restarts.count == 10)

            // ffmpeg pushed through every restart; stop it now rather than at the end of its input.
            #expect(pusher.isRunning, "ffmpeg survived every restart: \(pushed())")
            pusher.terminate()
            for _ in 0..<50 where pusher.isRunning { Thread.sleep(forTimeInterval: 0.1) }
            if pusher.isRunning { kill(pusher.processIdentifier, SIGKILL) }
            pusher.waitUntilExit()
        }
    }
}
