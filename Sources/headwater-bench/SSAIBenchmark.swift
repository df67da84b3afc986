import ArgumentParser
import AsyncHTTPClient
import Dispatch
import Foundation
import HeadwaterCore
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
import Glibc
#endif

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
        guard let wrk = Self.executable(named: "wrk") else {
            print("wrk is not installed: apt-get install -y wrk")
            throw ExitCode(69)
        }
        let taskset = Self.executable(named: "taskset")
        let serverPath = try server ?? Self.siblingServer()
        guard FileManager.default.isExecutableFile(atPath: serverPath) else {
            throw ValidationError("no headwater binary at \(serverPath): swift build -c release --product headwater")
        }
        for (what, path) in [("configuration", config), ("wrk script", script)] where !FileManager.default.fileExists(atPath: path) {
            throw ValidationError("no \(what) at \(path): run from the repository root, or pass its path")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("headwater-bench-ssai-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let port = try Self.freePort()
        let base = "http://127.0.0.1:\(port)"
        let machine = Machine.current()
        print("headwater-bench ssai — stitched vs shared media playlists over loopback, wrk, median of \(rounds) rounds")
        print("machine: \(machine.cores) cores, \(machine.model), load average \(machine.loadAverage)")
        print("server:  \(serverPath) serve --config \(config)\(taskset == nil ? "" : ", pinned to CPU 0")")
        print(
            "wrk:     -t1 -c\(connections) -d\(seconds)s, Accept-Encoding: gzip\(taskset == nil ? " (taskset missing: not pinned)" : ", pinned to CPU 1")"
        )
        if serverPath.contains("/debug/") { print("warning: \(serverPath) looks like a debug build; benchmarks need release builds") }

        let process = try Self.startServer(
            path: serverPath, config: config, taskset: taskset, port: port, log: directory.appendingPathComponent("server.log"))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await measure(
                process: process, client: client, wrk: wrk, taskset: taskset, base: base, directory: directory,
                sessionCount: sessionCount, seconds: seconds)
        } catch {
            Self.stop(process)
            try? await client.shutdown()
            if let log = try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8), !log.isEmpty {
                print("server log (last lines):\n" + log.split(separator: "\n").suffix(20).joined(separator: "\n"))
            }
            throw error
        }
        Self.stop(process)
        try await client.shutdown()
    }

    // MARK: The measurement

    private func measure(
        process: Process, client: HTTPClient, wrk: String, taskset: String?, base: String, directory: URL,
        sessionCount: Int, seconds: Int
    ) async throws {
        let http = LoopbackClient(client: client, base: base)
        try await http.waitUntilReady(process: process, timeout: .seconds(30))

        // Sessions, as players start them: the multivariant playlist of /ssai, then its media URI.
        let clock = ContinuousClock()
        let started = clock.now
        var stitched: [String] = []
        stitched.reserveCapacity(sessionCount)
        let devices = ["tv", "phone", "other"]
        for index in 0..<sessionCount {
            let master = "/ssai/\(channel)/master.m3u8?device=\(devices[index % devices.count])"
            let (status, _, body) = try await http.get(master)
            guard status == 200 else { throw ValidationError("GET \(master): \(status) \(String(decoding: body, as: UTF8.self))") }
            guard let path = Self.mediaPath(in: body, rendition: rendition, relativeTo: "/ssai/\(channel)/") else {
                throw ValidationError("GET \(master): no \(rendition).m3u8?session=… URI in the multivariant playlist")
            }
            stitched.append(path)
        }
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
            "sessions: \(sessionCount) (device=tv/phone/other), created and checked (200, gzip) in \(format(Self.seconds(clock.now - started), decimals: 1)) s"
        )
        if ads {
            // Breaks that began before a session are not stitched for it: wait for the next one.
            let deadline = ContinuousClock.now + .seconds(80)
            while try await http.window(stitched[0]) != "ads" {
                guard ContinuousClock.now < deadline else { throw ValidationError("no pod in the stitched playlists within 80 s") }
                try await Task.sleep(for: .milliseconds(250))
            }
            print("waited \(format(Self.seconds(clock.now - started), decimals: 0)) s from the first session for a pod in the window")
        }
        let sharedFile = directory.appendingPathComponent("shared.txt")
        let stitchedFile = directory.appendingPathComponent("stitched.txt")
        try (shared + "\n").write(to: sharedFile, atomically: true, encoding: .utf8)
        try (stitched.joined(separator: "\n") + "\n").write(to: stitchedFile, atomically: true, encoding: .utf8)

        let runner = WrkRunner(
            wrk: wrk, taskset: taskset, script: script, url: base, connections: connections, serverPID: process.processIdentifier)
        // Warm-up (not counted): connections, caches, the server's allocator.
        let warmUp = max(1, seconds / 4)
        _ = try runner.run(paths: sharedFile, seconds: warmUp)
        _ = try runner.run(paths: stitchedFile, seconds: warmUp)

        print("")
        print(
            pad("round", 7) + pad("playlist", 10) + leftPad("req/s", 9) + leftPad("p50 ms", 8) + leftPad("p99 ms", 8)
                + leftPad("srv µs/req", 12) + leftPad("srv CPU", 9) + leftPad("wrk CPU", 9) + leftPad("KB/resp", 9)
                + "  window (start → end)")
        var results: [String: [WrkResult]] = [:]
        for round in 1...rounds {
            for (name, file) in [("shared", sharedFile), ("stitched", stitchedFile)] {
                let before = name == "stitched" ? try await http.window(stitched[0]) : nil
                let result = try runner.run(paths: file, seconds: seconds)
                let after = name == "stitched" ? try await http.window(stitched[0]) : nil
                results[name, default: []].append(result)
                let window = before.map { "\($0) → \(after!)" } ?? ""
                print(pad(String(round), 7) + pad(name, 10) + result.row + "  " + window)
            }
        }
        let sharedMedian = WrkResult.median(results["shared"]!)
        let stitchedMedian = WrkResult.median(results["stitched"]!)
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

    // MARK: The server

    private static func startServer(path: String, config: String, taskset: String?, port: Int, log: URL) throws -> Process {
        let process = Process()
        let arguments = ["serve", "--config", config, "--listen", "127.0.0.1:\(port)", "--log-level", "warning"]
        if let taskset {
            process.executableURL = URL(fileURLWithPath: taskset)
            process.arguments = ["-c", "0", path] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
        }
        var environment = ProcessInfo.processInfo.environment
        environment["HEADWATER_SESSION_KEY"] = "headwater-bench-session-key-0123456789"
        process.environment = environment
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")  // the access log
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        try process.run()
        return process
    }

    /// SIGTERM (graceful), then SIGKILL after 10 s.
    static func stop(_ process: Process) {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    // MARK: Helpers

    /// `headwater` next to this executable: the release server when this is the release bench.
    static func siblingServer() throws -> String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("headwater").path
    }

    static func executable(named name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// A port the kernel had free a moment ago (the server binds it right after).
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ValidationError("socket() failed: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw ValidationError("cannot bind 127.0.0.1:0: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// The absolute path of the `rendition` media playlist URI in a multivariant playlist.
    static func mediaPath(in body: [UInt8], rendition: String, relativeTo directory: String) -> String? {
        for line in String(decoding: body, as: UTF8.self).split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let uri = String(line)
            let path = uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? uri
            guard path == "\(rendition).m3u8" || path.hasSuffix("/\(rendition).m3u8"), uri.contains("session=") else { continue }
            return uri.hasPrefix("/") ? uri : directory + uri
        }
        return nil
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// The bench's own requests to the server (sessions, checks), with AsyncHTTPClient.
struct LoopbackClient {
    let client: HTTPClient
    let base: String

    /// Status, Content-Encoding and the body as received (not decompressed).
    func get(_ path: String, gzip: Bool = false) async throws -> (Int, String?, [UInt8]) {
        var request = HTTPClientRequest(url: base + path)
        if gzip { request.headers.add(name: "Accept-Encoding", value: "gzip") }
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 16 << 20)
        return (Int(response.status.code), response.headers.first(name: "content-encoding"), Array(body.readableBytesView))
    }

    /// What the stitched playlist at `path` shows now: `ads` (a pod), `break` (a break that started
    /// before the session, so the channel's content in its slots), or `content`.
    func window(_ path: String) async throws -> String {
        let (_, encoding, body) = try await get(path, gzip: true)
        let text = String(decoding: encoding == "gzip" ? Gzip.decompress(body) ?? [] : body, as: UTF8.self)
        return text.contains("/ads/") ? "ads" : text.contains("CLASS=\"com.headwater.ad-break\"") ? "break" : "content"
    }

    func waitUntilReady(process: Process, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard process.isRunning else { throw ValidationError("the server exited (status \(process.terminationStatus))") }
            if let (status, _, _) = try? await get("/readyz"), status == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ValidationError("the server was not ready within \(timeout)")
    }
}

/// One wrk run's figures, with the server's and wrk's CPU time over the run.
struct WrkResult {
    var requests: Int
    var seconds: Double
    var bytes: Int
    var p50Microseconds: Double
    var p99Microseconds: Double
    var non2xx: Int
    var plain: Int
    var errors: Int
    /// Server CPU seconds (user + system, all threads) during the run.
    var serverCPUSeconds: Double
    /// wrk's CPU seconds ÷ wall seconds (1.0 = its core saturated).
    var clientCPU: Double

    var requestsPerSecond: Double { Double(requests) / seconds }
    var serverMicrosecondsPerRequest: Double { serverCPUSeconds * 1e6 / Double(max(1, requests)) }
    var serverCPU: Double { serverCPUSeconds / seconds }

    var row: String {
        leftPad(format(requestsPerSecond, decimals: 0), 9) + leftPad(format(p50Microseconds / 1000, decimals: 2), 8)
            + leftPad(format(p99Microseconds / 1000, decimals: 2), 8)
            + leftPad(format(serverMicrosecondsPerRequest, decimals: 1), 12)
            + leftPad(format(serverCPU * 100, decimals: 0) + " %", 9) + leftPad(format(clientCPU * 100, decimals: 0) + " %", 9)
            + leftPad(format(Double(bytes) / Double(max(1, requests)) / 1024, decimals: 2), 9)
    }

    /// Each figure's median over the runs.
    static func median(_ runs: [WrkResult]) -> WrkResult {
        func middle(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let rate = middle(runs.map(\.requestsPerSecond))
        return WrkResult(
            requests: Int(rate.rounded()), seconds: 1, bytes: Int(middle(runs.map { Double($0.bytes) / Double(max(1, $0.requests)) }) * rate),
            p50Microseconds: middle(runs.map(\.p50Microseconds)), p99Microseconds: middle(runs.map(\.p99Microseconds)),
            non2xx: runs.reduce(0) { $0 + $1.non2xx }, plain: runs.reduce(0) { $0 + $1.plain },
            errors: runs.reduce(0) { $0 + $1.errors },
            serverCPUSeconds: middle(runs.map(\.serverMicrosecondsPerRequest)) * rate / 1e6, clientCPU: middle(runs.map(\.clientCPU)))
    }
}

/// Runs wrk with the Lua script and reads the server's CPU time from /proc around it.
struct WrkRunner {
    let wrk: String
    let taskset: String?
    let script: String
    let url: String
    let connections: Int
    let serverPID: Int32

    func run(paths: URL, seconds: Int) throws -> WrkResult {
        let process = Process()
        let arguments = ["-t1", "-c\(connections)", "-d\(seconds)s", "--timeout", "5s", "-s", script, url]
        if let taskset {
            process.executableURL = URL(fileURLWithPath: taskset)
            process.arguments = ["-c", "1", wrk] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: wrk)
            process.arguments = arguments
        }
        var environment = ProcessInfo.processInfo.environment
        environment["HEADWATER_PATHS"] = paths.path
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")

        let serverBefore = try Self.cpuSeconds(of: serverPID)
        let clientBefore = Self.childrenCPUSeconds()
        let clock = ContinuousClock()
        let start = clock.now
        try process.run()
        // wrk stops by itself after `seconds`; a watchdog ends it if it does not.
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGTERM) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds + 30), execute: watchdog)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        watchdog.cancel()
        let wall = SSAIBenchmark.seconds(clock.now - start)
        let serverAfter = try Self.cpuSeconds(of: serverPID)
        let clientAfter = Self.childrenCPUSeconds()

        guard process.terminationStatus == 0,
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("HEADWATER ") })
        else { throw ValidationError("wrk failed (status \(process.terminationStatus)):\n\(text)") }
        var fields: [String: Double] = [:]
        for pair in line.split(separator: " ").dropFirst() {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Double(parts[1]) { fields[String(parts[0])] = value }
        }
        func field(_ name: String) throws -> Double {
            guard let value = fields[name] else { throw ValidationError("wrk output lacks \(name): \(line)") }
            return value
        }
        let errors = try ["connect", "read", "write", "timeout", "status"].reduce(0) { $0 + Int(try field($1)) }
        return WrkResult(
            requests: Int(try field("requests")), seconds: try field("duration_us") / 1e6, bytes: Int(try field("bytes")),
            p50Microseconds: try field("p50_us"), p99Microseconds: try field("p99_us"), non2xx: Int(try field("non2xx")),
            plain: Int(try field("plain")), errors: errors, serverCPUSeconds: serverAfter - serverBefore,
            clientCPU: (clientAfter - clientBefore) / wall)
    }

    /// utime + stime of a process, all threads (/proc/<pid>/stat fields 14 and 15).
    static func cpuSeconds(of pid: Int32) throws -> Double {
        let text = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        guard let close = text.lastIndex(of: ")") else { throw ValidationError("cannot read /proc/\(pid)/stat") }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw ValidationError("cannot read /proc/\(pid)/stat")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// CPU time of this process's waited-for children (wrk, once it exited).
    static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// What the header says about the machine.
struct Machine {
    var cores: Int
    var model: String
    var loadAverage: String

    static func current() -> Machine {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        let load = ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "")
            .split(separator: " ").prefix(3).joined(separator: " ")
        return Machine(cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), model: model, loadAverage: load)
    }
}
