import ArgumentParser
import Foundation

/// Runs h2load (nghttp2's HTTP/2 load generator; one thread, pinned to CPU 1 when `taskset` is
/// there) for the HTTP/2 rows of `headwater-bench all`: wrk speaks only HTTP/1.1. Its figures are
/// read into a ``WrkResult`` so that they compare and print like wrk's.
///
/// h2load prints no percentiles, so every run writes `--log-file` (one line per request: start,
/// status, microseconds to the end of the response) and p50/p99 come from it. Requests still open
/// when the time is up are logged with status -1 and left out.
struct H2LoadRunner: LoadGenerator {
    let h2load: String
    let taskset: String?
    /// Directory for the per-request logs and URI lists (the run's temporary directory).
    let directory: URL
    let clients: Int
    /// Streams each client keeps open at once (`-m`).
    let streams: Int

    func arguments(url: String, seconds: Int, headers: [String], inputFile: String?, logFile: String) -> [String] {
        var arguments = ["-t1", "-c\(clients)", "-m\(streams)", "-D", String(seconds), "--log-file", logFile]
        for header in headers { arguments += ["-H", header] }
        if let inputFile { return arguments + ["-i", inputFile] }
        return arguments + [url]
    }

    func commandLine(url: String, seconds: Int, headers: [String]) -> String {
        BenchCommand.commandLine(
            (taskset.map { [$0, "-c", "1"] } ?? []) + [h2load]
                + arguments(url: url, seconds: seconds, headers: headers, inputFile: nil, logFile: "LOG"))
    }

    /// One run. With `HEADWATER_PATHS` in `environment` (a file of paths, as for wrk's script),
    /// h2load gets them as URIs on `url`'s scheme, host and port (`-i`): each client requests them
    /// in order, over and over.
    func run(
        url: String, seconds: Int, headers: [String], environment: [String: String], serverCPU: () throws -> Double
    ) throws -> WrkResult {
        let logFile = directory.appendingPathComponent("h2load-requests.tsv")
        var inputFile: String?
        if let paths = environment["HEADWATER_PATHS"] {
            let origin = Self.origin(of: url)
            let list = try String(contentsOfFile: paths, encoding: .utf8).split(separator: "\n").filter { !$0.isEmpty }
            let uris = directory.appendingPathComponent("h2load-uris.txt")
            try (list.map { origin + $0 }.joined(separator: "\n") + "\n").write(to: uris, atomically: true, encoding: .utf8)
            inputFile = uris.path
        }
        defer { try? FileManager.default.removeItem(at: logFile) }
        let serverBefore = try serverCPU()
        let clientBefore = ProcessStat.childrenCPUSeconds()
        let clock = ContinuousClock()
        let start = clock.now
        let (status, text) = try BenchCommand.execute(
            h2load, arguments(url: url, seconds: seconds, headers: headers, inputFile: inputFile, logFile: logFile.path),
            taskset: taskset, environment: [:], limit: seconds + 30)
        let wall = BenchTools.seconds(clock.now - start)
        let serverAfter = try serverCPU()
        let clientAfter = ProcessStat.childrenCPUSeconds()

        guard status == 0, let summary = H2LoadSummary(text) else {
            // h2load has no handshake timeout: a connection whose handshake never completes keeps it
            // waiting after its duration, until the watchdog kills it.
            let stuck = text.contains("Stopped all clients") ? " (still waiting on connections 30 s after its duration)" : ""
            throw ValidationError("h2load failed (status \(status))\(stuck):\n\(text.suffix(3000))")
        }
        guard summary.protocolName == "h2" else {
            throw ValidationError("h2load did not negotiate h2 (application protocol \(summary.protocolName ?? "none")):\n\(text)")
        }
        let latencies = try Self.latencies(in: logFile)
        func percentile(_ fraction: Double) -> Double {
            latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * fraction))]
        }
        // As wrk counts: requests answered; errors are failures and statuses ≥ 400 (h2load's
        // `failed` has both); non-2xx is what is left (3xx).
        return WrkResult(
            requests: summary.done, seconds: summary.seconds, bytes: summary.totalBytes, p50Microseconds: percentile(0.5),
            p99Microseconds: percentile(0.99), non2xx: max(0, summary.done - summary.failed - summary.status2xx), plain: 0,
            errors: summary.failed + summary.timedOut, serverCPUSeconds: serverAfter - serverBefore,
            clientCPU: (clientAfter - clientBefore) / wall, bodyBytes: summary.dataBytes)
    }

    /// `scheme://host:port` of a URL.
    static func origin(of url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        return String(url[..<scheme.upperBound]) + String(rest.prefix { $0 != "/" })
    }

    /// The completed requests' durations, µs, sorted.
    static func latencies(in log: URL) throws -> [Double] {
        let text = try String(contentsOf: log, encoding: .utf8)
        var values: [Double] = []
        values.reserveCapacity(text.utf8.count / 24)
        for line in text.split(separator: "\n") {
            let columns = line.split(separator: "\t")
            guard columns.count >= 3, columns[1] != "-1", let micros = Double(columns[2]) else { continue }
            values.append(micros)
        }
        return values.sorted()
    }
}

/// What h2load prints at the end of a run:
///
///     Application protocol: h2
///     finished in 10.00s, 51234.50 req/s, 12.30MB/s
///     requests: 512345 total, 512400 started, 512345 done, 512345 succeeded, 0 failed, 0 errored, 0 timeout
///     status codes: 512345 2xx, 0 3xx, 0 4xx, 0 5xx
///     traffic: 123.00MB (128974848) total, 1.2MB (1258291) headers (space savings 95.1%), 120MB (125829120) data
struct H2LoadSummary {
    var protocolName: String?
    var seconds: Double
    /// Requests that ended, with a response or a failure.
    var done: Int
    /// Failures: errors (no response) and statuses ≥ 400.
    var failed: Int
    var timedOut: Int
    var status2xx: Int
    /// Bytes received: frames, HPACK-compressed headers and bodies (the TLS records' payloads).
    var totalBytes: Int
    var dataBytes: Int

    init?(_ text: String) {
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        func line(_ prefix: String) -> String? { lines.first { $0.hasPrefix(prefix) } }
        /// The number before `label` in a comma-separated list (`512345 succeeded`).
        func count(_ text: String, _ label: String) -> Int? {
            for item in text.split(separator: ",") {
                let words = item.split(separator: " ")
                if words.count >= 2, words[1] == label { return Int(words[0]) }
            }
            return nil
        }
        /// The number in parentheses before `label` (`(128974848) total`).
        func parenthesized(_ text: String, _ label: String) -> Int? {
            for item in text.split(separator: ",") where item.contains(") \(label)") {
                guard let open = item.firstIndex(of: "("), let close = item.firstIndex(of: ")") else { return nil }
                return Int(item[item.index(after: open)..<close])
            }
            return nil
        }
        guard let finished = line("finished in "), let requests = line("requests: "), let codes = line("status codes: "),
            let traffic = line("traffic: ")
        else { return nil }
        let elapsed = finished.dropFirst("finished in ".count).prefix { $0 != "," }
        let seconds =
            elapsed.hasSuffix("ms") ? Double(elapsed.dropLast(2)).map { $0 / 1000 } : elapsed.hasSuffix("s") ? Double(elapsed.dropLast()) : nil
        guard let seconds, let done = count(String(requests.dropFirst("requests: ".count)), "done"),
            let failed = count(requests, "failed"), let timedOut = count(requests, "timeout"),
            let status2xx = count(String(codes.dropFirst("status codes: ".count)), "2xx"),
            let totalBytes = parenthesized(traffic, "total"), let dataBytes = parenthesized(traffic, "data")
        else { return nil }
        self.protocolName = line("Application protocol:").map { $0.dropFirst("Application protocol:".count).trimmingCharacters(in: .whitespaces) }
        self.seconds = seconds
        self.done = done
        self.failed = failed
        self.timedOut = timedOut
        self.status2xx = status2xx
        self.totalBytes = totalBytes
        self.dataBytes = dataBytes
    }
}
