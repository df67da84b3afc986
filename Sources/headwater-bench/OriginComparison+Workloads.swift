import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The workloads of `headwater-bench all`, each adding its rows to the table.
extension OriginComparison {
    enum Figures {
        /// req/s and CPU µs per request.
        case requests
        /// MB/s and CPU µs per MiB.
        case bytes
    }

    // MARK: wrk, A/B

    /// A server in a comparison, and what the load generator is given for it.
    struct Contender {
        var name: String
        /// The URL the load generator gets (with `HEADWATER_PATHS`, its scheme, host and port count).
        var url: String
        var server: ServerProcess
        /// The load generator's environment, made again before every run: the live-URL row lists
        /// the segments of that moment (Headwater's window moves on every 2 s).
        var environment: () throws -> [String: String] = { [:] }
        /// How the environment is described in the report, if it is not empty.
        var note: String?
    }

    /// Runs one workload on Headwater and nginx alternately (after a warm-up of each), with the
    /// same wrk settings; prints every run and the medians. `check` looks at each run's figures
    /// and returns what is wrong, if anything. Returns the medians and whether a check failed.
    func compare(
        _ label: String, path: String, connections: Int, headers: [String] = [],
        environment: (headwater: [String: String], nginx: [String: String]) = ([:], [:]),
        check: (WrkResult) -> String? = { _ in nil }
    ) throws -> (headwater: WrkSummary, nginx: WrkSummary, failed: Bool) {
        guard let headwater, let nginx else { throw ValidationError("the servers are not running") }
        let runner = WrkRunner(wrk: tools.wrk, taskset: tools.taskset, script: tools.wrkScript, connections: connections)
        func note(_ environment: [String: String]) -> String? {
            environment.isEmpty ? nil : environment.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
        }
        let contenders = [
            Contender(
                name: "headwater", url: headwaterBase + path, server: headwater, environment: { environment.headwater },
                note: note(environment.headwater)),
            Contender(name: "nginx", url: nginxBase + path, server: nginx, environment: { environment.nginx }, note: note(environment.nginx)),
        ]
        let (medians, failed) = try compare(label, contenders, load: runner, headers: headers, check: check)
        return (medians[0], medians[1], failed)
    }

    /// Runs one workload on each contender in turn (after a warm-up of each), `settings.rounds`
    /// times, with the same load generator and headers; prints every run and the medians. `check`
    /// looks at each run's figures and returns what is wrong, if anything. Returns the medians, in
    /// the contenders' order, and whether a run or check failed.
    func compare(
        _ label: String, _ contenders: [Contender], load: any LoadGenerator, headers: [String] = [],
        check: (WrkResult) -> String? = { _ in nil }
    ) throws -> (medians: [WrkSummary], failed: Bool) {
        let problemsBefore = problems.count
        func run(_ contender: Contender, seconds: Int, round: String) throws -> WrkResult {
            let result = try load.run(
                url: contender.url, seconds: seconds, headers: headers, environment: try contender.environment(),
                serverCPU: contender.server.cpuSeconds)
            if result.failures > 0 {
                problems.append("\(label), \(contender.name), \(round): \(result.errors) socket errors or statuses ≥ 400, \(result.non2xx) non-2xx")
            }
            if let message = check(result) { problems.append("\(label), \(contender.name), \(round): \(message)") }
            return result
        }

        print("")
        print("\(label)")
        print("  " + load.commandLine(url: contenders[0].url, seconds: settings.seconds, headers: headers))
        for contender in contenders {
            if let note = contender.note { print("  " + pad(contender.name + ":", 11) + note) }
        }
        for contender in contenders { _ = try run(contender, seconds: settings.warmUpSeconds, round: "warm-up") }
        print(
            "  " + pad("round", 7) + pad("server", 10) + leftPad("req/s", 9) + leftPad("MB/s", 9) + leftPad("p50 ms", 8)
                + leftPad("p99 ms", 8) + leftPad("µs/req", 9) + leftPad("µs/MiB", 9) + leftPad("srv CPU", 9)
                + leftPad("cli CPU", 9) + leftPad("B/resp", 9))
        var results = [[WrkResult]](repeating: [], count: contenders.count)
        for round in 1...settings.rounds {
            for (index, contender) in contenders.enumerated() {
                let result = try run(contender, seconds: settings.seconds, round: "round \(round)")
                results[index].append(result)
                print("  " + pad(String(round), 7) + pad(contender.name, 10) + Self.detail(WrkSummary([result])))
            }
        }
        let medians = results.map(WrkSummary.init)
        for (index, contender) in contenders.enumerated() {
            print("  " + pad("median", 7) + pad(contender.name, 10) + Self.detail(medians[index]))
        }
        if medians.contains(where: { $0.clientCPU > 0.9 }) {
            print("  (the client used > 90 % of its CPU: it may have set the rate; compare CPU per request)")
        }
        return (medians, problems.count > problemsBefore)
    }

    static func detail(_ summary: WrkSummary) -> String {
        leftPad(format(summary.requestsPerSecond, decimals: 0), 9) + leftPad(format(summary.bytesPerSecond / 1e6, decimals: 1), 9)
            + leftPad(format(summary.p50Microseconds / 1000, decimals: 2), 8)
            + leftPad(format(summary.p99Microseconds / 1000, decimals: 2), 8)
            + leftPad(format(summary.serverMicrosecondsPerRequest, decimals: 1), 9)
            + leftPad(format(summary.serverMicrosecondsPerMiB, decimals: 0), 9)
            + leftPad(format(summary.serverCPU * 100, decimals: 0) + " %", 9)
            + leftPad(format(summary.clientCPU * 100, decimals: 0) + " %", 9)
            + leftPad(format(summary.bytesPerResponse, decimals: 0), 9)
    }

    /// The table's figures for one server: rate, p50/p99 latency, server CPU per request (or MiB).
    static func figures(_ summary: WrkSummary, _ kind: Figures) -> String {
        let latency = "\(format(summary.p50Microseconds / 1000, decimals: 2))/\(format(summary.p99Microseconds / 1000, decimals: 2)) ms"
        switch kind {
        case .requests:
            return "\(format(summary.requestsPerSecond, decimals: 0)) req/s, \(latency), \(format(summary.serverMicrosecondsPerRequest, decimals: 1)) µs/req"
        case .bytes:
            return "\(format(summary.bytesPerSecond / 1e6, decimals: 0)) MB/s, \(latency), \(format(summary.serverMicrosecondsPerMiB, decimals: 0)) µs/MiB"
        }
    }

    /// The issue's targets for a row against nginx: Headwater ÷ nginx rate at least `rate`, CPU
    /// per request (per MiB) at most `cpu`; `extra` adds a target of the row's own.
    struct Targets {
        var rate: Double? = nil
        var cpu: Double? = nil
        var extra: (text: String, met: Bool)? = nil
    }

    func row(
        _ workload: String, _ result: (headwater: WrkSummary, nginx: WrkSummary, failed: Bool), _ kind: Figures,
        targets: Targets
    ) -> ResultRow {
        let (rate, cpu) = Self.ratios(result, kind)
        var texts: [String] = []
        var met = true
        if let wanted = targets.cpu {
            texts.append("CPU ≤ \(format(wanted, decimals: 1))×")
            met = met && cpu <= wanted
        }
        if let wanted = targets.rate {
            texts.append("\(kind == .requests ? "req/s" : "MB/s") ≥ \(format(wanted, decimals: 1))×")
            met = met && rate >= wanted
        }
        if let extra = targets.extra {
            texts.append(extra.text)
            met = met && extra.met
        }
        return row(workload, result, kind, target: texts.isEmpty ? "—" : texts.joined(separator: "; "), verdict: texts.isEmpty ? .none : met ? .met : .notMet)
    }

    /// Headwater ÷ nginx: rate (req/s, or MB/s for bytes) and CPU per request (or per MiB).
    static func ratios(
        _ result: (headwater: WrkSummary, nginx: WrkSummary, failed: Bool), _ kind: Figures
    ) -> (rate: Double, cpu: Double) {
        let (headwater, nginx) = (result.headwater, result.nginx)
        return kind == .requests
            ? (headwater.requestsPerSecond / nginx.requestsPerSecond,
                headwater.serverMicrosecondsPerRequest / nginx.serverMicrosecondsPerRequest)
            : (headwater.bytesPerSecond / nginx.bytesPerSecond, headwater.serverMicrosecondsPerMiB / nginx.serverMicrosecondsPerMiB)
    }

    func row(
        _ workload: String, _ result: (headwater: WrkSummary, nginx: WrkSummary, failed: Bool), _ kind: Figures,
        target: String = "—", verdict: ResultRow.Verdict = .none
    ) -> ResultRow {
        let (headwater, nginx) = (result.headwater, result.nginx)
        let (rate, cpu) = Self.ratios(result, kind)
        return ResultRow(
            workload: workload, headwater: Self.figures(headwater, kind), nginx: Self.figures(nginx, kind),
            rateRatio: format(rate, decimals: 2), cpuRatio: format(cpu, decimals: 2), target: target,
            verdict: result.failed ? .failed : verdict)
    }

    /// Bytes per response (headers included) between `low` and `high`.
    static func bytesCheck(_ low: Double, _ high: Double, _ what: String) -> (WrkResult) -> String? {
        { result in
            let bytes = result.bytesPerResponse
            return bytes >= low && bytes <= high
                ? nil : "\(format(bytes, decimals: 0)) bytes per response; expected \(what) (\(Int(low))–\(Int(high)))"
        }
    }

    /// Bytes per response of a segment row: the segment and a head, plus the responses still in
    /// flight when the run ends (wrk counts their bytes read so far but not them), at most one per
    /// connection: in a short run (`--quick`, a debug server over TLS) they add percents.
    static func segmentBytesCheck(_ size: Double, connections: Int) -> (WrkResult) -> String? {
        { result in
            let high = size + 1024 + Double(connections) * size / Double(max(1, result.requests))
            return bytesCheck(size, high, "the segment and headers, and what was in flight at the end")(result)
        }
    }

    // MARK: The workloads

    /// The shared media playlist, identity and gzip, at 64 and 256 connections. Headwater's live
    /// playlist changes every 2 s; nginx serves the snapshot.
    func sharedPlaylists() throws {
        let identity = Double(snapshot.shared.count)
        for connections in settings.playlistConnections {
            for gzip in [false, true] {
                let label = "shared \(Self.sharedPath), \(gzip ? "gzip" : "identity"), \(connections) connections"
                // A gzip response is smaller than the identity body; an identity one is at least ~it.
                let check =
                    gzip ? Self.bytesCheck(0, identity, "gzip, under the identity size") : Self.bytesCheck(identity * 0.8, identity * 1.2 + 1024, "identity")
                let result = try compare(
                    label, path: Self.sharedPath, connections: connections, headers: gzip ? [Self.gzipHeader] : [], check: check)
                print(
                    "  bytes per response (headers included): Headwater \(format(result.headwater.bytesPerResponse, decimals: 0)), "
                        + "nginx \(format(result.nginx.bytesPerResponse, decimals: 0)); snapshot body \(gzip ? snapshot.sharedGzip.count : snapshot.shared.count)")
                // The issue's targets are for gzip (against nginx's gzip_static); identity is for reading.
                rows.append(
                    row(
                        "shared playlist, \(gzip ? "gzip" : "identity"), c\(connections)", result, .requests,
                        targets: gzip ? Targets(rate: 0.9, cpu: 1.0) : Targets()))
                if gzip, connections == 64 { sharedGzip64 = result.headwater }
            }
        }
    }

    /// Stitched playlists of distinct sessions, round-robin, gzip: Headwater renders and
    /// compresses each; nginx gzips (level 1) the snapshot of each on the fly.
    func stitchedPlaylists() async throws {
        let headwaterList = fixture.directory.appendingPathComponent("stitched-headwater.txt")
        let nginxList = fixture.directory.appendingPathComponent("stitched-nginx.txt")
        try (snapshot.stitchedPaths.joined(separator: "\n") + "\n").write(to: headwaterList, atomically: true, encoding: .utf8)
        try (snapshot.stitchedPaths.indices.map { "/stitched/\($0).m3u8" }.joined(separator: "\n") + "\n")
            .write(to: nginxList, atomically: true, encoding: .utf8)
        // Guards against identity bodies where gzip was asked. Not "under the largest identity
        // body": Headwater's live window changes during the run, and in an ad break a gzip response
        // (head included) outgrows the identity body of a window without ads (879 bytes against
        // 871 in the demo), while the identity body grows with the break too. Any identity response
        // is at least the smallest identity body plus a head (over 300 bytes).
        let smallestIdentityResponse = Double((snapshot.stitched.map(\.count).min() ?? 0) + 300)
        let http = LoopbackClient(client: client, base: headwaterBase)
        let windowBefore = try await http.window(snapshot.stitchedPaths[0])
        let result = try compare(
            "stitched playlists, \(snapshot.stitchedPaths.count) sessions round-robin, gzip, 64 connections", path: "/",
            connections: 64, headers: [Self.gzipHeader],
            environment: (["HEADWATER_PATHS": headwaterList.path], ["HEADWATER_PATHS": nginxList.path]),
            check: Self.bytesCheck(0, smallestIdentityResponse, "gzip, under the smallest identity response"))
        let windowAfter = try await http.window(snapshot.stitchedPaths[0])
        let snapshotWindow = Self.window(snapshot.stitched[0])
        print(
            "  Headwater's stitched playlists showed \(windowBefore) → \(windowAfter) (ads: a pod; break: a break that began before"
                + " the session, content in its slots; content: no break); nginx's snapshot shows \(snapshotWindow)")
        var extra: (text: String, met: Bool) = ("÷ shared gzip c64 ≥ 0.5: run with shared", false)
        if let shared = sharedGzip64 {
            let ratio = result.headwater.requestsPerSecond / shared.requestsPerSecond
            let cpuRatio = shared.serverMicrosecondsPerRequest / result.headwater.serverMicrosecondsPerRequest
            print(
                "  stitched ÷ shared gzip (Headwater, 64 connections): req/s \(format(ratio, decimals: 2)) (target ≥ 0.5); "
                    + "by CPU per request (shared µs ÷ stitched µs) \(format(cpuRatio, decimals: 2))")
            extra = ("÷ shared gzip c64 = \(format(ratio, decimals: 2)) (≥ 0.5)", ratio >= 0.5)
        }
        rows.append(
            row(
                "stitched playlists, gzip, \(snapshot.stitchedPaths.count) sessions, c64", result, .requests,
                targets: Targets(cpu: 1.0, extra: extra)))
    }

    /// What a stitched playlist shows, as ``LoopbackClient/window(_:)`` says it.
    static func window(_ playlist: [UInt8]) -> String {
        let text = String(decoding: playlist, as: UTF8.self)
        return text.contains("/ads/") ? "ads" : text.contains("CLASS=\"com.headwater.ad-break\"") ? "break" : "content"
    }

    /// The 1 MiB segment, whole, by sendfile on both.
    func segment() throws {
        let size = Double(snapshot.segment.count)
        let result = try compare(
            "segment \(OriginFixture.segmentPath) (1 MiB), \(settings.byteConnections) connections", path: OriginFixture.segmentPath,
            connections: settings.byteConnections, check: Self.segmentBytesCheck(size, connections: settings.byteConnections))
        rows.append(row("1 MiB segment, c\(settings.byteConnections)", result, .bytes, targets: Targets(rate: 0.9, cpu: 1.0)))
    }

    /// A content key with a key token (`Authorization: Bearer`), 64 connections: Headwater checks
    /// the token (HMAC-SHA256), derives the key (HKDF-SHA256) and answers `private, no-store`;
    /// nginx sends the same 16 bytes from a file, checking nothing: the price of entitlement, with no
    /// target (a reference, not a like-for-like race).
    func keys() throws {
        let result = try compare(
            "content key \(OriginFixture.keyPath) with a key token (Bearer), 64 connections", path: OriginFixture.keyPath,
            connections: 64, headers: ["Authorization: Bearer \(snapshot.keyToken)"],
            check: Self.bytesCheck(16, 16 + 1024, "16 bytes and headers"))
        rows.append(row("content key with a key token, c64", result, .requests, targets: Targets()))
    }

    /// `Range: bytes=a-b` of 188 × 1024 bytes at random 188-aligned offsets in the range file.
    func ranges() throws {
        let size = settings.rangeBytes
        let spec = "\(OriginFixture.rangeFilePath),\(snapshot.rangeFileLength),\(size),188"
        let result = try compare(
            "ranges: \(size) bytes (188 × 1024) at random 188-aligned offsets of \(OriginFixture.rangeFilePath) "
                + "(\(snapshot.rangeFileLength >> 20) MiB), \(settings.byteConnections) connections",
            path: OriginFixture.rangeFilePath, connections: settings.byteConnections,
            environment: (["HEADWATER_RANGE": spec], ["HEADWATER_RANGE": spec]),
            check: Self.bytesCheck(Double(size), Double(size) + 1024, "\(size) bytes and headers, a 206"))
        rows.append(row("188 KiB ranges (\(size) B), c\(settings.byteConnections)", result, .requests, targets: Targets(cpu: 1.0)))
    }

    /// Resident memory per idle keep-alive connection: `idleConnections` connections from this
    /// process to each server in turn, one request answered on each, then left idle.
    func idleConnections() async throws {
        guard let headwater, let nginx else { throw ValidationError("the servers are not running") }
        let count = settings.idleConnections
        print("")
        print("idle keep-alive connections: \(count) to each server in turn (GET \(Self.sharedPath) answered on each, then idle)")
        fflush(nil)
        var perConnection: [Double] = []
        for (server, port) in [(headwater, headwaterPort), (nginx, nginxPort)] {
            // Headwater: its one process; nginx: its worker(s), where connections live.
            let measured = server.name == "nginx" ? ProcessStat.children(of: server.pid) : [server.pid]
            func resident() throws -> Int { try measured.reduce(0) { $0 + (try ProcessStat.residentKiB(of: $1)) } }
            try await Task.sleep(for: .seconds(1))
            let before = try resident()
            let clock = ContinuousClock()
            let started = clock.now
            let connections = IdleConnections()
            try connections.open(count: count, port: port, path: Self.sharedPath)
            let opened = BenchTools.seconds(clock.now - started)
            try await Task.sleep(for: .seconds(1))
            let after = try resident()
            let stillOpen = connections.sockets.count
            connections.closeAll()
            let kib = Double(after - before) / Double(count)
            perConnection.append(kib)
            defer { fflush(nil) }
            print(
                "  \(pad(server.name, 10)) RSS \(before) KiB → \(after) KiB with \(stillOpen) open: \(format(kib, decimals: 2)) KiB per connection"
                    + " (opened in \(format(opened, decimals: 1)) s)")
            if opened > 45 { problems.append("idle connections, \(server.name): opening took \(Int(opened)) s, near the 60 s idle timeout") }
            try await Task.sleep(for: .seconds(1))  // the servers close their side
        }
        let verdict: ResultRow.Verdict = perConnection[0] <= 16 ? .met : .notMet
        rows.append(
            ResultRow(
                workload: "RSS per idle keep-alive connection (\(count))",
                headwater: "\(format(perConnection[0], decimals: 2)) KiB/connection",
                nginx: "\(format(perConnection[1], decimals: 2)) KiB/connection", target: "≤ 16 KiB", verdict: verdict))
    }

    /// Headwater's resident memory over distinct sessions, each started and its stitched playlist
    /// served once (wrk with `session-memory.lua`).
    func sessionMemory() async throws {
        guard let headwater else { throw ValidationError("Headwater is not running") }
        print("")
        print(
            "session memory: \(settings.memoryWarmUpSessions) sessions of warm-up, then \(settings.memorySessions) distinct sessions,"
                + " each started (/ssai/demo/master.m3u8) and its stitched v1.m3u8 served once (wrk, 32 connections)")
        _ = try runSessions(settings.memoryWarmUpSessions, limit: 120)
        try await Task.sleep(for: .seconds(1))
        let before = try ProcessStat.residentKiB(of: headwater.pid)
        let (fetched, seconds) = try runSessions(settings.memorySessions, limit: settings.memorySessionSeconds)
        try await Task.sleep(for: .seconds(1))
        let after = try ProcessStat.residentKiB(of: headwater.pid)
        let perSession = Double(after - before) * 1024 / Double(max(1, fetched))
        print(
            "  Headwater RSS \(before) KiB → \(after) KiB over \(fetched) sessions in \(format(seconds, decimals: 1)) s"
                + " (\(format(Double(fetched) / seconds, decimals: 0)) sessions/s): \(format(perSession, decimals: 1)) bytes per session")
        rows.append(
            ResultRow(
                workload: "RSS growth per session (\(fetched) sessions)",
                headwater: "\(format(perSession, decimals: 1)) B/session (RSS \(before / 1024) → \(after / 1024) MiB)",
                nginx: "—", target: "≈ 0 (≤ 100 B)", verdict: perSession <= 100 ? .met : .notMet))
    }

    /// Starts `count` sessions; returns how many had their playlist served, and the seconds taken.
    private func runSessions(_ count: Int, limit: Int) throws -> (Int, Double) {
        let runner = WrkRunner(wrk: tools.wrk, taskset: tools.taskset, script: tools.sessionScript, connections: 32)
        let clock = ContinuousClock()
        let started = clock.now
        let (status, text) = try runner.execute(
            runner.arguments(url: headwaterBase, seconds: limit), environment: ["HEADWATER_SESSIONS": String(count)], limit: limit + 30)
        let seconds = BenchTools.seconds(clock.now - started)
        guard status == 0, let fields = WrkRunner.fields(in: text, prefix: "HEADWATER_SESSIONS") else {
            throw ValidationError("wrk (sessions) failed (status \(status)):\n\(text)")
        }
        let fetched = Int(fields["fetched"] ?? 0)
        let bad = Int(fields["bad"] ?? 0)
        let missing = Int(fields["missing"] ?? 0)
        if fetched < count || bad > 0 || missing > 0 {
            problems.append(
                "sessions: \(fetched) of \(count) stitched playlists served within \(limit) s, \(bad) non-200 responses, "
                    + "\(missing) multivariant playlists without a session URI")
        }
        return (fetched, seconds)
    }

    /// In process, after the servers stopped: `Stitcher.render` µs against window length and history.
    func scaling() throws {
        print("")
        print("render cost in process (headwater-bench stitch's cases; the servers are stopped):")
        fflush(nil)
        let setup = try StitchBenchmark.setUp(sessions: settings.quick ? 16 : 256)
        try StitchBenchmark.check(setup)
        print("  setup \(format(BenchTools.seconds(setup.duration), decimals: 1)) s (a day of 2 s segments through the BreakTracker)")
        for window in try StitchBenchmark.windowLengths(setup, counts: [10, 100, 1_200], milliseconds: settings.scalingMilliseconds) {
            let micros = window.render.nanosecondsPerIteration / 1000
            print(
                "  window \(leftPad(String(window.segments), 5)) segments (24 h of history, at a break): render \(format(micros, decimals: 1)) µs, "
                    + "\(format(micros / Double(window.segments), decimals: 2)) µs/segment, +serialize+gzip "
                    + "\(format(window.compressed.nanosecondsPerIteration / 1000, decimals: 1)) µs")
            rows.append(
                ResultRow(
                    workload: "render, window of \(window.segments) segments",
                    headwater: "\(format(micros, decimals: 1)) µs (\(format(micros / Double(window.segments), decimals: 2)) µs/segment)"))
        }
        let history = StitchBenchmark.historyRender(
            setup, name: "at a break", milliseconds: settings.scalingMilliseconds, pairs: settings.scalingPairs)
        let hour = history.hour.nanosecondsPerIteration / 1000
        let day = history.day.nanosecondsPerIteration / 1000
        print(
            "  history (15-segment window, at a break): 1 h \(format(hour, decimals: 1)) µs, 24 h \(format(day, decimals: 1)) µs; "
                + "24 h / 1 h measured alternately (median of \(settings.scalingPairs) pairs): \(format(history.ratio, decimals: 2))")
        rows.append(
            ResultRow(
                workload: "render, 24 h vs 1 h of breaks",
                headwater: "1 h \(format(hour, decimals: 1)) µs, 24 h \(format(day, decimals: 1)) µs, 24 h/1 h \(format(history.ratio, decimals: 2))",
                target: "24 h/1 h ≈ 1.0 (0.8–1.25)", verdict: (0.8...1.25).contains(history.ratio) ? .met : .notMet))
    }
}
