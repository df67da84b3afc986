import Foundation
import HeadwaterHLS
import Synchronization
import Testing

extension RealClients {
    /// Target-duration refresh with a real encoder: ffmpeg pushes, stops for more than three target
    /// durations, and starts again (a restarted encoder: its numbering starts over).
    @Suite("headwater serve: stalls", .serialized)
    struct StallCommandTests {
        struct Version: Sendable {
            var at: ContinuousClock.Instant
            var playlist: MediaPlaylist
        }

        static func push(_ ffmpeg: String, port: Int, seconds: Int) throws -> (Process, Pipe) {
            try ServeCommandTests.run(
                ffmpeg,
                ServeCommandTests.liveEncoderArguments(
                    seconds: seconds,
                    output: [
                        "-method", "PUT", "-headers", "Authorization: Bearer s3cret\r\n",
                        "http://127.0.0.1:\(port)/ingest/live/stream.m3u8",
                    ]))
        }

        @Test("the playlist keeps advancing within 1½ TD through a 7 s stall (slate), health flips, live rules hold through recovery")
        func stallAndRecovery() throws {
            let ffmpeg = try #require(ServeCommandTests.which("ffmpeg"), "ffmpeg is required (.ci/run installs it)")
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-stall-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let config = directory.appendingPathComponent("headwater.yaml")
            try """
                server:
                  slate: \(ServeCommandTests.repository.path)/Public/slate/master.m3u8
                channels:
                  live:
                    source:
                      type: push
                      token_env: HW_TEST_STALL_TOKEN
                      target_duration: 2
                    window: 12
                    stall: slate
                """.write(to: config, atomically: true, encoding: .utf8)
            let (server, port, log) = try ServeCommandTests.startServer(
                config: config.path, environment: ["HW_TEST_STALL_TOKEN": "s3cret"])
            defer { if server.isRunning { server.terminate() } }

            // A poller records every version of the playlist and every health state.
            let versions = Mutex<[Version]>([])
            let health = Mutex<[String]>([])
            let stop = Atomic(false)
            let poller = Thread {
                while !stop.load(ordering: .relaxed) {
                    let response = ServeCommandTests.get(port: port, path: "/live/live/stream.m3u8")
                    if response.hasPrefix("HTTP/1.1 200"), let body = response.range(of: "\r\n\r\n").map({ response[$0.upperBound...] }),
                        let playlist = try? PlaylistParser().parseMedia(Array(body.utf8))
                    {
                        versions.withLock { if $0.last?.playlist != playlist { $0.append(Version(at: .now, playlist: playlist)) } }
                    }
                    let state = ServeCommandTests.get(port: port, path: "/healthz")
                    let channel = state.contains(#""state":"degraded""#) ? "degraded" : state.contains(#""state":"live""#) ? "live" : "other"
                    health.withLock { $0.append(channel) }
                    Thread.sleep(forTimeInterval: 0.1)
                }
            }
            poller.start()
            defer { stop.store(true, ordering: .relaxed) }

            var (encoder, output) = try Self.push(ffmpeg, port: port, seconds: 12)
            _ = output.fileHandleForReading.readDataToEndOfFile()
            encoder.waitUntilExit()
            Thread.sleep(forTimeInterval: 7)  // more than three target durations without a segment
            let stalledHealth = health.withLock { $0.suffix(10) }
            (encoder, output) = try Self.push(ffmpeg, port: port, seconds: 10)  // the encoder starts over
            _ = output.fileHandleForReading.readDataToEndOfFile()
            encoder.waitUntilExit()
            stop.store(true, ordering: .relaxed)
            Thread.sleep(forTimeInterval: 0.3)

            let seen = versions.withLock { $0 }
            try #require(seen.count > 5, "versions seen: \(seen.count)")
            // Every gap between versions, from going live until the second encoder stopped, is ≤ 1½ TD
            // (plus the poller's 100 ms period and scheduling slack).
            let gaps = zip(seen, seen.dropFirst()).map { $1.at - $0.at }
            let longest = gaps.max() ?? .zero
            #expect(longest <= .milliseconds(3_400), "longest time without a new version: \(longest)")
            // The consecutive-playlist rules (C1–C6) held across the stall and the recovery.
            for (previous, next) in zip(seen, seen.dropFirst()) {
                let errors = LiveUpdateChecker.check(previous: previous.playlist, next: next.playlist).filter { $0.severity == .error }
                #expect(errors.isEmpty, "\(errors)")
            }
            let last = seen.last!.playlist
            #expect(last.effectiveDiscontinuitySequence + UInt64(last.segments.filter(\.discontinuity).count)
                >= seen.first!.playlist.effectiveDiscontinuitySequence + 2, "slate and the restart each added a discontinuity")
            #expect(stalledHealth.contains("degraded"), "health during the stall: \(stalledHealth)")
            #expect(health.withLock { $0.last } == "live", "healthy again")
            let metrics = ServeCommandTests.get(port: port, path: "/metrics")
            #expect(metrics.contains("headwater_stalls_total{channel=\"live\"} 1"), "the stall is counted once")
            server.terminate()
            server.waitUntilExit()
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: log)
            #expect(text.contains("filling with slate"), "the stall is logged: \(text.suffix(500))")
            #expect(text.contains("the source is back"))
        }
    }
}
