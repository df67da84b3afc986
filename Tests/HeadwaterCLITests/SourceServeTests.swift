import Foundation
import Testing

extension RealClients {
    /// `headwater serve` with a directory source and with a pull source, played back by ffmpeg (the
    /// calibrated reader and error whitelist of ``ServeCommandTests``).
    @Suite("headwater serve: directory and pull sources", .serialized)
    struct SourceServeTests {
        /// A temporary directory holding `headwater.yaml` with `yaml`.
        static func configuration(_ yaml: String) throws -> (directory: URL, config: URL) {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-sources-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let config = directory.appendingPathComponent("headwater.yaml")
            try yaml.write(to: config, atomically: true, encoding: .utf8)
            return (directory, config)
        }

        /// ffmpeg reads `url` for `seconds` of media, starting three segments behind the live edge, so
        /// at least `live` seconds pass while it follows the playlist: no errors, nothing missing.
        static func expectLiveRead(_ ffmpeg: String, _ url: String, seconds: Int, live: Double) throws {
            let started = Date()
            let (status, text) = try ServeCommandTests.ffmpegRead(ffmpeg, url, seconds: seconds)
            #expect(status == 0)
            #expect(Date().timeIntervalSince(started) >= live)
            let problems = ServeCommandTests.playbackProblems(text, seconds: seconds)
            #expect(problems.isEmpty, "\(problems)")
        }

        @Test("ffmpeg writes -f hls into a directory that headwater serves; another ffmpeg reads it back live 20 s without errors")
        func directory() throws {
            let ffmpeg = try #require(ServeCommandTests.which("ffmpeg"), "ffmpeg is required (.ci/run installs it)")
            let (directory, config) = try Self.configuration("""
                channels:
                  dir:
                    source:
                      type: directory
                      path: media
                      target_duration: 2
                    window: 12
                """)
            defer { try? FileManager.default.removeItem(at: directory) }
            let media = directory.appendingPathComponent("media")
            try FileManager.default.createDirectory(at: media, withIntermediateDirectories: true)
            let (server, port, log) = try ServeCommandTests.startServer(config: config.path)
            defer { if server.isRunning { server.terminate() } }
            let (writer, writerOutput) = try ServeCommandTests.run(
                ffmpeg, ServeCommandTests.liveEncoderArguments(seconds: 45, output: [media.appendingPathComponent("stream.m3u8").path]))
            defer { if writer.isRunning { writer.terminate() } }
            #expect(ServeCommandTests.waitForPlaylist(port: port, path: "/live/dir/stream.m3u8"), "the channel went live")
            try Self.expectLiveRead(ffmpeg, "http://127.0.0.1:\(port)/live/dir/master.m3u8", seconds: 26, live: 20)
            let written = String(decoding: writerOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0, "ffmpeg writer: \(written.prefix(500))")
            server.terminate()
            server.waitUntilExit()
            #expect(server.terminationStatus == 0)
            let serverLog = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: log)
            #expect(!serverLog.contains("warning"), "\(serverLog.suffix(1500))")
        }

        @Test("a second headwater pulls the demo channel from a first; ffmpeg reads the second live 16 s without errors")
        func pull() throws {
            let ffmpeg = try #require(ServeCommandTests.which("ffmpeg"), "ffmpeg is required (.ci/run installs it)")
            let (upstream, upstreamPort, upstreamLog) = try ServeCommandTests.startServer()
            defer { if upstream.isRunning { upstream.terminate() } }
            let (directory, config) = try Self.configuration("""
                channels:
                  relay:
                    source:
                      type: pull
                      url: http://127.0.0.1:\(upstreamPort)/live/demo/master.m3u8
                      target_duration: 2
                    window: 12
                """)
            defer { try? FileManager.default.removeItem(at: directory) }
            let (server, port, log) = try ServeCommandTests.startServer(config: config.path)
            defer { if server.isRunning { server.terminate() } }
            #expect(ServeCommandTests.waitForPlaylist(port: port, path: "/live/relay/v1.m3u8"), "the relay went live")
            try Self.expectLiveRead(ffmpeg, "http://127.0.0.1:\(port)/live/relay/v1.m3u8", seconds: 22, live: 16)
            let master = ServeCommandTests.get(port: port, path: "/live/relay/master.m3u8")
            #expect(master.contains("CODECS=\"avc1."), "the upstream's multivariant playlist passes through: \(master)")
            server.terminate()
            server.waitUntilExit()
            #expect(server.terminationStatus == 0)
            upstream.terminate()
            upstream.waitUntilExit()
            let serverLog = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            for file in [log, upstreamLog] { try? FileManager.default.removeItem(at: file) }
            #expect(!serverLog.contains("warning"), "\(serverLog.suffix(1500))")
        }
    }
}
