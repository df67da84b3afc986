import Foundation

/// A `headwater serve` for one test (``RealClients/ServeCommandTests/startServer(config:environment:)``):
/// `defer { server.stop() }` right after starting it.
struct TestServer {
    let process: Process
    let port: Int
    /// Its standard output and error (access log and log lines).
    let log: URL

    init(config: String?, environment: [String: String] = [:]) throws {
        (process, port, log) = try RealClients.ServeCommandTests.startServer(config: config, environment: environment)
    }

    /// Stops the server (SIGTERM) and removes its log.
    func stop() {
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(at: log)
    }
}

extension RealClients.ServeCommandTests {
    /// Runs `body` with a `headwater serve` started on `config`, then stops it, whatever `body` did.
    static func withServer<T>(
        config: String?, environment: [String: String] = [:], _ body: (_ port: Int, _ log: URL) throws -> T
    ) throws -> T {
        let server = try TestServer(config: config, environment: environment)
        defer { server.stop() }
        return try body(server.port, server.log)
    }
}

/// Headless Chromium on a test page: the console lines (`CONSOLE` log lines) it printed until one
/// contained `marker`, or `timeout` seconds passed.
enum HeadlessChromium {
    /// Page script starting an hls.js player (`hls`, `video`) the way a player that waits for media
    /// does: `play()` once the first fragment (or the parts it starts with) is buffered, after
    /// hls.js's own seek to its start position. Called at once, a live start sometimes races that
    /// seek: hls.js 1.6 loads a low-latency start fragment's listed parts one after another and
    /// seeks only when the last is buffered; a playing element at 0 with the first parts already
    /// buffered at 30 s meanwhile looks stalled to its gap controller, which skips there itself and
    /// reports a `bufferSeekOverHole` (non-fatal, the same seek). Once playing, every hole still
    /// counts.
    static func playWhenBuffered(rejected: String = "(error) => console.log(`PLAY_REJECTED ${error}`)") -> String {
        "hls.once(Hls.Events.FRAG_BUFFERED, () => video.play().catch(\(rejected)));"
    }

    /// - Parameter extraArguments: more switches (the HTTPS tests' certificate pin).
    static func console(
        chromium: String, url: String, profile: URL, extraArguments: [String] = [], until marker: String, timeout: TimeInterval
    ) throws -> [Substring] {
        let browser = Process()
        browser.executableURL = URL(fileURLWithPath: chromium)
        browser.arguments = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--mute-audio", "--autoplay-policy=no-user-gesture-required",
            "--user-data-dir=\(profile.path)", "--enable-logging=stderr", "--v=0", "--no-first-run",
        ] + extraArguments + [url]
        let output = Pipe()
        browser.standardError = output
        browser.standardOutput = FileHandle.nullDevice
        try browser.run()
        defer { if browser.isRunning { browser.terminate() } }
        var text = ""
        let deadline = Date().addingTimeInterval(timeout)
        let handle = output.fileHandleForReading
        while !text.contains(marker), Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        browser.terminate()
        browser.waitUntilExit()
        return text.split(separator: "\n").filter { $0.contains("CONSOLE") }
    }
}
