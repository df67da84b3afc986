import ArgumentParser
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One wrk run's figures, with the server's and wrk's CPU time over the run.
struct WrkResult {
    var requests: Int
    var seconds: Double
    var bytes: Int
    var p50Microseconds: Double
    var p99Microseconds: Double
    /// Responses the script counted as not 2xx (scripts with a `response()` callback only; wrk
    /// itself counts statuses ≥ 400 as `status` errors, in ``errors``).
    var non2xx: Int
    /// Responses without gzip (`ssai-bench.lua` only).
    var plain: Int
    /// Socket errors (connect, read, write, timeout) and statuses ≥ 400.
    var errors: Int
    /// Server CPU seconds (user + system, all threads, all its processes) during the run.
    var serverCPUSeconds: Double
    /// wrk's CPU seconds ÷ wall seconds (1.0 = its core saturated).
    var clientCPU: Double
    /// Body bytes alone, when the client tells them apart (h2load's DATA); `nil` for wrk.
    var bodyBytes: Int? = nil

    var requestsPerSecond: Double { Double(requests) / seconds }
    var bytesPerSecond: Double { Double(bytes) / seconds }
    var bytesPerResponse: Double { Double(bytes) / Double(max(1, requests)) }
    /// Body bytes per response where known, else all bytes (head included) per response.
    var bodyBytesPerResponse: Double { Double(bodyBytes ?? bytes) / Double(max(1, requests)) }
    var serverMicrosecondsPerRequest: Double { serverCPUSeconds * 1e6 / Double(max(1, requests)) }
    var serverMicrosecondsPerMiB: Double { serverCPUSeconds * 1e6 / max(1, Double(bytes) / 1_048_576) }
    var serverCPU: Double { serverCPUSeconds / seconds }
    var failures: Int { non2xx + errors }
}

extension WrkResult {
    /// From a client's `HEADWATER requests=… duration_us=… bytes=… p50_us=… p99_us=… connect=… read=…
    /// write=… timeout=… status=…` line (origin-bench.lua's `done()`, tls-handshake-client.c).
    init(output text: String, tool: String, serverCPUSeconds: Double, clientCPU: Double) throws {
        guard let fields = WrkRunner.fields(in: text, prefix: "HEADWATER") else {
            throw ValidationError("\(tool) printed no HEADWATER line:\n\(text)")
        }
        func field(_ name: String) throws -> Double {
            guard let value = fields[name] else { throw ValidationError("\(tool) output lacks \(name): \(text)") }
            return value
        }
        let errors = try ["connect", "read", "write", "timeout", "status"].reduce(0) { $0 + Int(try field($1)) }
        self.init(
            requests: Int(try field("requests")), seconds: try field("duration_us") / 1e6, bytes: Int(try field("bytes")),
            p50Microseconds: try field("p50_us"), p99Microseconds: try field("p99_us"), non2xx: Int(fields["non2xx"] ?? 0),
            plain: Int(fields["plain"] ?? 0), errors: errors, serverCPUSeconds: serverCPUSeconds, clientCPU: clientCPU)
    }
}

/// The medians of several runs of one workload on one server, figure by figure.
struct WrkSummary {
    var runs: Int
    var requestsPerSecond: Double
    var bytesPerSecond: Double
    var bytesPerResponse: Double
    var p50Microseconds: Double
    var p99Microseconds: Double
    var serverMicrosecondsPerRequest: Double
    var serverMicrosecondsPerMiB: Double
    var serverCPU: Double
    var clientCPU: Double
    /// Totals over the runs.
    var non2xx: Int
    var plain: Int
    var errors: Int

    var failures: Int { non2xx + errors }

    init(_ runs: [WrkResult]) {
        func middle(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.sorted()[values.count / 2] }
        self.runs = runs.count
        requestsPerSecond = middle(runs.map(\.requestsPerSecond))
        bytesPerSecond = middle(runs.map(\.bytesPerSecond))
        bytesPerResponse = middle(runs.map(\.bytesPerResponse))
        p50Microseconds = middle(runs.map(\.p50Microseconds))
        p99Microseconds = middle(runs.map(\.p99Microseconds))
        serverMicrosecondsPerRequest = middle(runs.map(\.serverMicrosecondsPerRequest))
        serverMicrosecondsPerMiB = middle(runs.map(\.serverMicrosecondsPerMiB))
        serverCPU = middle(runs.map(\.serverCPU))
        clientCPU = middle(runs.map(\.clientCPU))
        non2xx = runs.reduce(0) { $0 + $1.non2xx }
        plain = runs.reduce(0) { $0 + $1.plain }
        errors = runs.reduce(0) { $0 + $1.errors }
    }

    /// req/s, p50 and p99 ms, server µs/req, server and wrk CPU, KB per response.
    var row: String {
        leftPad(format(requestsPerSecond, decimals: 0), 9) + leftPad(format(p50Microseconds / 1000, decimals: 2), 8)
            + leftPad(format(p99Microseconds / 1000, decimals: 2), 8)
            + leftPad(format(serverMicrosecondsPerRequest, decimals: 1), 12)
            + leftPad(format(serverCPU * 100, decimals: 0) + " %", 9) + leftPad(format(clientCPU * 100, decimals: 0) + " %", 9)
            + leftPad(format(bytesPerResponse / 1024, decimals: 2), 9)
    }
}

/// What drives a workload's requests (wrk for HTTP/1.1, h2load for HTTP/2): one run of `seconds`
/// against `url`, with the server's CPU seconds read before and after, so that ``OriginComparison``
/// compares servers the same way whichever client it uses.
protocol LoadGenerator {
    /// The command line as a shell would show it, for the report.
    func commandLine(url: String, seconds: Int, headers: [String]) -> String
    /// One run. `environment` carries the workload's inputs (`HEADWATER_PATHS`: a file of paths to
    /// request round-robin); `serverCPU` reads the server's CPU seconds so far.
    func run(
        url: String, seconds: Int, headers: [String], environment: [String: String], serverCPU: () throws -> Double
    ) throws -> WrkResult
}

/// Runs a load generator or another helper program to its end.
enum BenchCommand {
    /// Runs `executable` with `arguments` (pinned to CPU 1 when `taskset` is there: the servers
    /// have CPU 0), killed after `limit` seconds if it has not ended; returns its exit status and
    /// output (stdout and stderr).
    static func execute(
        _ executable: String, _ arguments: [String], taskset: String?, environment: [String: String], limit: Int
    ) throws -> (Int32, String) {
        let process = Process()
        if let taskset {
            process.executableURL = URL(fileURLWithPath: taskset)
            process.arguments = ["-c", "1", executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        fflush(nil)  // what was printed so far shows while the tool runs, also through a pipe
        try process.run()
        let pid = process.processIdentifier
        BenchCleanup.shared.track(pid: pid)
        defer { BenchCleanup.shared.untrack(pid: pid) }
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(limit), execute: watchdog)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        watchdog.cancel()
        return (process.terminationStatus, text)
    }

    /// `words` as a shell would show them (words with spaces quoted).
    static func commandLine(_ words: [String]) -> String {
        words.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
    }
}

/// Runs wrk (one thread, pinned to CPU 1 when `taskset` is there) with a Lua script whose `done()`
/// prints one `HEADWATER key=value …` line, and reads the server's CPU time around the run.
struct WrkRunner: LoadGenerator {
    let wrk: String
    let taskset: String?
    let script: String
    let connections: Int
    var timeoutSeconds = 5

    func arguments(url: String, seconds: Int, headers: [String] = []) -> [String] {
        var arguments = ["-t1", "-c\(connections)", "-d\(seconds)s", "--latency", "--timeout", "\(timeoutSeconds)s", "-s", script]
        for header in headers { arguments += ["-H", header] }
        return arguments + [url]
    }

    /// The command line as a shell would show it.
    func commandLine(url: String, seconds: Int, headers: [String] = []) -> String {
        BenchCommand.commandLine((taskset.map { [$0, "-c", "1"] } ?? []) + [wrk] + arguments(url: url, seconds: seconds, headers: headers))
    }

    /// One run. `environment` is added to wrk's (the script's inputs); `serverCPU` reads the
    /// server's CPU seconds so far, before and after.
    func run(
        url: String, seconds: Int, headers: [String] = [], environment: [String: String] = [:],
        serverCPU: () throws -> Double
    ) throws -> WrkResult {
        let serverBefore = try serverCPU()
        let clientBefore = ProcessStat.childrenCPUSeconds()
        let clock = ContinuousClock()
        let start = clock.now
        let (status, text) = try execute(arguments(url: url, seconds: seconds, headers: headers), environment: environment, limit: seconds + 30)
        let wall = BenchTools.seconds(clock.now - start)
        let serverAfter = try serverCPU()
        let clientAfter = ProcessStat.childrenCPUSeconds()

        guard status == 0 else { throw ValidationError("wrk failed (status \(status)):\n\(text)") }
        return try WrkResult(
            output: text, tool: "wrk", serverCPUSeconds: serverAfter - serverBefore, clientCPU: (clientAfter - clientBefore) / wall)
    }

    /// Runs wrk with `arguments` (pinned to CPU 1 when `taskset` is there), killed after `limit`
    /// seconds if it has not ended; returns its exit status and output (stdout and stderr).
    func execute(_ arguments: [String], environment: [String: String], limit: Int) throws -> (Int32, String) {
        try BenchCommand.execute(wrk, arguments, taskset: taskset, environment: environment, limit: limit)
    }

    /// The `key=value` numbers of the first output line that starts with `prefix` and a space.
    static func fields(in text: String, prefix: String) -> [String: Double]? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix + " ") }) else { return nil }
        var fields: [String: Double] = [:]
        for pair in line.split(separator: " ").dropFirst() {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Double(parts[1]) { fields[String(parts[0])] = value }
        }
        return fields
    }
}
