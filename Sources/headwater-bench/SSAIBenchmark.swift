import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeadwaterRuntime

/// Stitched playlists against the shared playlist over loopback HTTP, in one run: starts the release
/// `headwater serve` (pinned to CPU 0), opens distinct viewer sessions, and runs wrk (pinned to CPU 1)
/// alternately on the shared `/live/demo/v1.m3u8` and on the sessions' `/ssai/demo/v1.m3u8?session=…`
/// (a different session on every request), gzip accepted, several rounds; medians are compared.
struct SSAIBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ssai",
        abstract: "Requests/s, latency and server CPU per request: stitched vs shared playlists (wrk, loopback)."
    )

    @Option(help: "Distinct viewer sessions (device=tv, phone, other in turn).") var sessions: Int?
    @Option(help: "Seconds per wrk run.") var duration: Int?
    @Option(help: "A/B rounds (shared then stitched); the medians are compared.") var rounds = 3
    @Option(help: "wrk connections.") var connections = 64
    @Flag(help: "Smoke test: 1 s runs and 200 sessions.") var quick = false
    @Flag(help: "Before measuring, wait (up to 80 s) until the sessions' playlists show a pod: the break case.")
    var ads = false
    @Option(help: "The headwater binary (default: next to this one, so a release build).") var server: String?
    @Option(help: "Server configuration (its demo channel must stitch ads).") var config = "Config/headwater.yaml"
    @Option(help: "The wrk Lua script.") var script = "Tests/tools/ssai-bench.lua"
    @Option(help: "The channel and rendition measured.") var channel = "demo"
    @Option(help: "The rendition measured.") var rendition = "v1"

    func run() async throws {
        let sessionCount = sessions ?? (quick ? 200 : 2_000)
        let seconds = duration ?? (quick ? 1 : 8)
        guard sessionCount > 0, seconds > 0, rounds > 0, connections > 0 else {
            throw ValidationError("--sessions, --duration, --rounds and --connections must be positive")
        }
        guard let wrk = BenchTools.executable(named: "wrk") else {
            print("wrk is not installed: apt-get install -y wrk")
            throw ExitCode(69)
        }
        let taskset = BenchTools.executable(named: "taskset")
        let serverPath = server ?? BenchTools.siblingServer()
        guard FileManager.default.isExecutableFile(atPath: serverPath) else {
            throw ValidationError("no headwater binary at \(serverPath): swift build -c release --product headwater")
        }
        for (what, path) in [("configuration", config), ("wrk script", script)] where !FileManager.default.fileExists(atPath: path) {
            throw ValidationError("no \(what) at \(path): run from the repository root, or pass its path")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("headwater-bench-ssai-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let port = try BenchTools.freePort()
        let base = "http://127.0.0.1:\(port)"
        let machine = Machine.current()
        print("headwater-bench ssai — stitched vs shared media playlists over loopback, wrk, median of \(rounds) rounds")
        print("machine: \(machine.cores) cores, \(machine.model), load average \(machine.loadAverage)")
        print("server:  \(serverPath) serve --config \(config)\(taskset == nil ? "" : ", pinned to CPU 0")")
        print(
            "wrk:     -t1 -c\(connections) -d\(seconds)s, Accept-Encoding: gzip\(taskset == nil ? " (taskset missing: not pinned)" : ", pinned to CPU 1")"
        )
        if serverPath.contains("/debug/") { print("warning: \(serverPath) looks like a debug build; benchmarks need release builds") }

        let server = try ServerProcess.start(
            name: "headwater", executable: serverPath,
            arguments: ["serve", "--config", config, "--listen", "127.0.0.1:\(port)", "--log-level", "warning"],
            taskset: taskset, environment: ["HEADWATER_SESSION_KEY": "headwater-bench-session-key-0123456789"],
            log: directory.appendingPathComponent("server.log"))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await measure(
                server: server, client: client, wrk: wrk, taskset: taskset, base: base, directory: directory,
                sessionCount: sessionCount, seconds: seconds)
        } catch {
            server.stop()
            try? await client.shutdown()
            let log = server.logTail()
            if !log.isEmpty { print("server log (last lines):\n" + log) }
            throw error
        }
        server.stop()
        try await client.shutdown()
    }

    // MARK: The measurement

    private func measure(
        server: ServerProcess, client: HTTPClient, wrk: String, taskset: String?, base: String, directory: URL,
        sessionCount: Int, seconds: Int
    ) async throws {
        let http = LoopbackClient(client: client, base: base)
        try await http.waitUntilReady(process: server.process, timeout: .seconds(30))

        // Sessions, as players start them: the multivariant playlist of /ssai, then its media URI.
        let clock = ContinuousClock()
        let started = clock.now
        let stitched = try await http.openSessions(count: sessionCount, channel: channel, rendition: rendition)
        // Every path answers 200 with gzip before the runs (and a stitched playlist parses as one).
        let shared = "/live/\(channel)/\(rendition).m3u8"
        for path in [shared] + stitched {
            let (status, encoding, body) = try await http.get(path, gzip: true)
            guard status == 200, encoding == "gzip", let plain = Gzip.decompress(body),
                String(decoding: plain, as: UTF8.self).hasPrefix("#EXTM3U")
            else {
                throw ValidationError("GET \(path): \(status), Content-Encoding \(encoding ?? "none"); expected 200 and a gzip playlist")
            }
        }
        print(
            "sessions: \(sessionCount) (device=tv/phone/other), created and checked (200, gzip) in \(format(BenchTools.seconds(clock.now - started), decimals: 1)) s"
        )
        if ads {
            // Breaks that began before a session are not stitched for it: wait for the next one.
            let deadline = ContinuousClock.now + .seconds(80)
            while try await http.window(stitched[0]) != "ads" {
                guard ContinuousClock.now < deadline else { throw ValidationError("no pod in the stitched playlists within 80 s") }
                try await Task.sleep(for: .milliseconds(250))
            }
            print("waited \(format(BenchTools.seconds(clock.now - started), decimals: 0)) s from the first session for a pod in the window")
        }
        let sharedFile = directory.appendingPathComponent("shared.txt")
        let stitchedFile = directory.appendingPathComponent("stitched.txt")
        try (shared + "\n").write(to: sharedFile, atomically: true, encoding: .utf8)
        try (stitched.joined(separator: "\n") + "\n").write(to: stitchedFile, atomically: true, encoding: .utf8)

        let runner = WrkRunner(wrk: wrk, taskset: taskset, script: script, connections: connections)
        func run(_ paths: URL, seconds: Int) throws -> WrkResult {
            try runner.run(url: base, seconds: seconds, environment: ["HEADWATER_PATHS": paths.path], serverCPU: server.cpuSeconds)
        }
        // Warm-up (not counted): connections, caches, the server's allocator.
        let warmUp = max(1, seconds / 4)
        _ = try run(sharedFile, seconds: warmUp)
        _ = try run(stitchedFile, seconds: warmUp)

        print("")
        print(
            pad("round", 7) + pad("playlist", 10) + leftPad("req/s", 9) + leftPad("p50 ms", 8) + leftPad("p99 ms", 8)
                + leftPad("srv µs/req", 12) + leftPad("srv CPU", 9) + leftPad("wrk CPU", 9) + leftPad("KB/resp", 9)
                + "  window (start → end)")
        var results: [String: [WrkResult]] = [:]
        for round in 1...rounds {
            for (name, file) in [("shared", sharedFile), ("stitched", stitchedFile)] {
                let before = name == "stitched" ? try await http.window(stitched[0]) : nil
                let result = try run(file, seconds: seconds)
                let after = name == "stitched" ? try await http.window(stitched[0]) : nil
                results[name, default: []].append(result)
                let window = before.map { "\($0) → \(after!)" } ?? ""
                print(pad(String(round), 7) + pad(name, 10) + WrkSummary([result]).row + "  " + window)
            }
        }
        let sharedMedian = WrkSummary(results["shared"]!)
        let stitchedMedian = WrkSummary(results["stitched"]!)
        print(String(repeating: "-", count: 90))
        print(pad("median", 7) + pad("shared", 10) + sharedMedian.row)
        print(pad("median", 7) + pad("stitched", 10) + stitchedMedian.row)
        let ratio = stitchedMedian.requestsPerSecond / sharedMedian.requestsPerSecond
        let perRound = zip(results["stitched"]!, results["shared"]!).map { format($0.requestsPerSecond / $1.requestsPerSecond, decimals: 2) }
        print("")
        print(
            "stitched / shared req/s: \(format(ratio, decimals: 2)) (target ≥ 0.5; rounds: \(perRound.joined(separator: ", "))) — "
                + (ratio >= 0.5 ? "met" : "NOT met"))
        let cpuRatio = sharedMedian.serverMicrosecondsPerRequest / stitchedMedian.serverMicrosecondsPerRequest
        print(
            "server CPU per request: stitched \(format(stitchedMedian.serverMicrosecondsPerRequest, decimals: 1)) µs, shared \(format(sharedMedian.serverMicrosecondsPerRequest, decimals: 1)) µs"
                + " (shared ÷ stitched: \(format(cpuRatio, decimals: 2)), the rate ratio a saturated server core would give)")
        let all = results.values.joined()
        let bad = all.reduce(0) { $0 + $1.non2xx + $1.errors }
        let plain = all.reduce(0) { $0 + $1.plain }
        print("checks: \(bad) non-2xx responses or socket errors, \(plain) responses without gzip, in \(all.count) runs")
        if all.contains(where: { $0.clientCPU > 0.9 }) {
            print("warning: wrk used > 90 % of its CPU in some runs: the client, not the server, may have set the rate")
        }
        guard bad == 0, plain == 0 else { throw ExitCode(1) }
    }
}
