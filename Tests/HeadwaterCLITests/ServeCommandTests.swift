import Foundation
import Testing

/// `headwater serve` as an operator runs it, played by a real client (ffmpeg; see
/// ../shared/CLIENTS.md for the calibrated command and the noise to whitelist). CI installs ffmpeg;
/// without it this test fails and says so, rather than skipping silently.
@Suite("headwater serve", .serialized)
struct ServeCommandTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A free TCP port on the loopback interface.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                guard bind(fd, $0, length) == 0, getsockname(fd, $0, &length) == 0 else { throw CocoaError(.fileNoSuchFile) }
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func which(_ tool: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let path = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Starts `headwater serve` in the repository (default config) on a free port; waits until it answers.
    static func startServer() throws -> (Process, Int, URL) {
        let port = try freePort()
        let process = Process()
        process.executableURL = HeadwaterProcess.executable
        process.arguments = ["serve", "--listen", "127.0.0.1:\(port)"]
        process.currentDirectoryURL = repository
        // The log goes to a file: a pipe nobody drains fills up with access-log lines and blocks the server.
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("headwater-serve-\(port).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardError = handle
        process.standardOutput = handle
        try process.run()
        for _ in 0..<100 {
            if let data = try? Data(contentsOf: URL(string: "http://127.0.0.1:\(port)/healthz")!), !data.isEmpty { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return (process, port, log)
    }

    /// ffmpeg plays one rendition (video and audio muxed in one transport stream). Given the whole
    /// multivariant playlist with `-map 0` it reads all four renditions and interleaves them by
    /// timestamp while ignoring EXT-X-DISCONTINUITY (CLIENTS.md), so the first rendition to cross a
    /// loop point — timestamps restart — starves the others: a client limitation, not an origin error.
    @Test("ffmpeg plays the demo channel live for 25 s across a loop point with no errors; SIGTERM exits cleanly")
    func ffmpegPlaysLive() throws {
        let ffmpeg = try #require(Self.which("ffmpeg"), "ffmpeg is required (apt-get install -y ffmpeg; .ci/run installs it)")
        let (server, port, log) = try Self.startServer()
        defer { if server.isRunning { server.terminate() } }

        let player = Process()
        player.executableURL = URL(fileURLWithPath: ffmpeg)
        player.arguments = [
            "-hide_banner", "-nostdin", "-loglevel", "repeat+level+verbose", "-rw_timeout", "10000000",
            "-m3u8_hold_counters", "6", "-max_reload", "3", "-i", "http://127.0.0.1:\(port)/live/demo/v1.m3u8",
            "-map", "0", "-t", "25", "-f", "null", "-",
        ]
        let output = Pipe()
        player.standardError = output
        player.standardOutput = output
        try player.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        player.waitUntilExit()
        #expect(player.terminationStatus == 0, "ffmpeg exit \(player.terminationStatus)")

        // Failures ffmpeg reports for a broken live origin (CLIENTS.md).
        for failure in ["Media sequence changed unexpectedly", "HTTP error 404", "HTTP error 416", "Failed to open segment", "HTTP error 5"] {
            #expect(!text.contains(failure), "ffmpeg: \(failure)")
        }
        // Any other error line, except the noise that is normal at a discontinuity (CLIENTS.md whitelist).
        let noise = ["non monotonically increasing dts", "Packet corrupt", "corrupt input packet", "out of order"]
        let errors = text.split(separator: "\n").filter { $0.contains("[error]") && !noise.contains(where: $0.contains) }
        #expect(errors.isEmpty, "\(errors)")
        // It crossed a loop point (the discontinuity sequence advanced) and decoded 25 s of video.
        let sequences = Set(text.components(separatedBy: "EXT-X-DISCONTINUITY-SEQUENCE:").dropFirst().compactMap { $0.split(separator: "'").first })
        #expect(sequences.count >= 2, "crossed a loop point: \(sequences)")
        #expect(text.contains("625 frames encoded"), "25 s of 25 fps video")
        // It really played 25 s of media: the final progress line reaches 00:00:25.
        let times = text.components(separatedBy: "time=").dropFirst().compactMap { $0.split(separator: " ").first }
        #expect(times.last.map { $0.hasPrefix("00:00:25") } == true, "last progress time: \(times.last ?? "none")")

        server.terminate()  // SIGTERM: graceful shutdown
        server.waitUntilExit()
        #expect(server.terminationStatus == 0, "serve exits 0 on SIGTERM")
        let serverLog = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: log)
        #expect(serverLog.contains("listening"), "\(serverLog.prefix(500))")
        #expect(serverLog.contains("GET /live/demo/v1.m3u8 200"), "one access log line per request")
    }

    @Test("check-config accepts the shipped configuration and reports a broken one as file:line: key.path: message, exit 78")
    func checkConfig() throws {
        let good = try HeadwaterProcess.run(["check-config", Self.repository.appendingPathComponent("Config/headwater.yaml").path])
        #expect(good.status == 0, "\(good.stderr)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-config-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bad = directory.appendingPathComponent("bad.yaml")
        try "server:\n  listen: nowhere\nchannels:\n  demo:\n    source:\n      type: loop\n      package: missing.m3u8\n    windw: 30\n"
            .write(to: bad, atomically: true, encoding: .utf8)
        let result = try HeadwaterProcess.run(["check-config", bad.path])
        #expect(result.status == 78)
        #expect(result.stderr.contains("\(bad.path):2: server.listen: must be HOST:PORT"), "\(result.stderr)")
        #expect(result.stderr.contains("\(bad.path):8: channels.demo.windw: unknown key"), "\(result.stderr)")
    }
}
