import ArgumentParser
import Foundation
import HeadwaterHLS
import HeadwaterRuntime

#if canImport(Glibc)
import Glibc
#endif

/// The blocking-playlist-reload rows (LL-HLS `_HLS_msn`): many requests for the demo's v1 playlist
/// held by Headwater until one publish lists the segment they ask for, then all answered at once.
/// nginx cannot hold a request until content exists, so these rows have absolute figures only.
///
/// The publish instant is known without asking the server: the loop channel is laid on the wall
/// clock, so segment M is published when it ends, at its `EXT-X-PROGRAM-DATE-TIME` (carried forward
/// by the `EXTINF`s) plus its `EXTINF`. The bench reads the playlist, picks an M at least
/// ``BlockingReload/lead`` ahead (within the two segments a client may ask ahead, F10), sends every
/// request before that instant, and measures each response's last byte against it; the instant is
/// read again afterwards from a playlist that lists M (exact, rather than the estimate the sending
/// was timed by). Memory per held request is VmRSS with the requests held (a quarter second before
/// the publish) less VmRSS before them; CPU per released request is the server's time on CPU
/// (every thread's schedstat, ns) from 50 ms before the publish to the last response.
extension OriginComparison {
    enum BlockingReload {
        /// How long before the publish the requests are sent: enough for a debug server on one core
        /// to read and hold thousands of them.
        static let lead: Int64 = 1_500_000
        /// Streams per HTTP/2 connection: under Headwater's `SETTINGS_MAX_CONCURRENT_STREAMS` (128).
        static let h2Streams = 100
        /// The memory target per held request, bytes, and the p99 target, µs.
        static let memoryTarget = 4096.0
        static let p99Target: Int64 = 10_000
    }

    /// One release: every response's completion less the publish instant, sorted (µs).
    struct Release {
        var latencies: [Int64]
        /// VmRSS growth with the requests held, bytes per request; for HTTP/1.1 also the same from
        /// before the connections were opened (connection and request).
        var bytesPerHeld: Double
        var bytesPerConnectionAndHeld: Double?
        var cpuMicrosPerRequest: Double
        /// `headwater_held_requests` a quarter second before the publish (`nil`: not exported).
        var heldGauge: Int?
        /// How long before the publish the last request went out, µs.
        var sentAhead: Int64

        func percentile(_ fraction: Double) -> Int64 {
            latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * fraction))]
        }
    }

    var blockingRequests: Int { settings.quick ? 500 : 5_000 }
    /// HTTP/2 connections: `blockingRequests` ÷ ``BlockingReload/h2Streams``.
    var blockingH2Connections: Int { max(1, blockingRequests / BlockingReload.h2Streams) }

    func blockingReloadRows() async throws {
        guard let headwater else { throw ValidationError("Headwater is not running") }
        let count = blockingRequests
        let path = Self.sharedPath + "?_HLS_msn=M"
        print("")
        print("blocking playlist reload: \(count) requests for \(path) (gzip) held until the publish of segment M, released by it")
        print("  HTTP/1.1: the bench's client (one thread, poll): \(count) keep-alive connections opened and each answered one GET first,")
        print("            then one blocking request on each, sent \(BlockingReload.lead / 1000) ms before the publish; nothing closed until the last response")
        let h2 = h2loadArguments(url: headwaterBase + path, log: "LOG")
        print("  HTTP/2:   " + BenchCommand.commandLine((tools.taskset.map { [$0, "-c", "1"] } ?? []) + [tools.h2load ?? "h2load"] + h2)
            + " (h2c, prior knowledge), started \(BlockingReload.lead / 1000) ms before the publish")
        print("  publish:  the end of segment M by the playlist's PROGRAM-DATE-TIME and EXTINFs (the loop channel is on the wall clock);")
        print("            latency = the response's last byte − that instant; server CPU from 50 ms before it to the last response")
        print("  floor:    Tests/tools/floor-server.c hold (C, epoll) on the same CPU: the HTTP/1.1 requests held on as many connections,")
        print("            all answered with Headwater's bytes from memory on SIGUSR1; latency from the signal (what 5,000 writes cost here)")
        print(
            "  " + pad("round", 7) + pad("protocol", 10) + leftPad("p50 ms", 10) + leftPad("p99 ms", 10) + leftPad("max ms", 10)
                + leftPad("min ms", 10) + leftPad("µs/req", 8) + leftPad("B/held", 8) + leftPad("gauge", 7) + leftPad("sent ahead", 12))
        fflush(nil)
        var results: [(name: String, rounds: [Release])] = [("HTTP/1.1", []), ("HTTP/2", []), ("floor/1.1", [])]
        let problemsBefore = problems.count
        for round in 1...settings.rounds {
            for index in results.indices {
                let release =
                    switch index {
                    case 0: try await releaseHTTP1(headwater, count: count)
                    case 1: try await releaseHTTP2(headwater, count: count)
                    default: try await releaseFloorHTTP1(count: count)
                    }
                results[index].rounds.append(release)
                print("  " + pad(String(round), 7) + pad(results[index].name, 10) + Self.detail(release))
                fflush(nil)
                try await Task.sleep(for: .seconds(1))  // the closed connections go
            }
        }
        if let first = results[0].rounds.first, let perConnection = first.bytesPerConnectionAndHeld {
            print(
                "  memory (round 1): HTTP/1.1 \(format(first.bytesPerHeld, decimals: 0)) B per held request on an idle keep-alive connection,"
                    + " \(format(perConnection, decimals: 0)) B with the connection; HTTP/2 \(format(results[1].rounds[0].bytesPerHeld, decimals: 0)) B"
                    + " per held stream (\(blockingH2Connections) connections included)")
        }
        let failed = problems.count > problemsBefore
        /// A protocol's medians over the rounds, as the table shows them.
        func summary(_ rounds: [Release]) -> (p99: Double, memory: Double, text: String) {
            func median(_ value: (Release) -> Double) -> Double { rounds.map(value).sorted()[rounds.count / 2] }
            let p50 = median { Double($0.percentile(0.5)) }
            let p99 = median { Double($0.percentile(0.99)) }
            let worst = rounds.map { $0.latencies.last ?? 0 }.max() ?? 0
            let cpu = median(\.cpuMicrosPerRequest)
            // Memory from the first round: later rounds reuse what the allocator kept from it.
            let memory = rounds[0].bytesPerHeld
            let text = "\(format(p50 / 1000, decimals: 2))/\(format(p99 / 1000, decimals: 2)) ms (max \(format(Double(worst) / 1000, decimals: 1))),"
                + " \(format(memory, decimals: 0)) B/held, \(format(cpu, decimals: 1)) µs/req"
            return (p99, memory, text)
        }
        let floor = summary(results[2].rounds)
        for (name, rounds) in results.prefix(2) {
            let (p99, memory, text) = summary(rounds)
            let met = p99 < Double(BlockingReload.p99Target) && memory < BlockingReload.memoryTarget
            let shape = name == "HTTP/1.1" ? "\(count) connections" : "\(blockingH2Connections) × \(BlockingReload.h2Streams) streams"
            rows.append(
                ResultRow(
                    workload: "blocking reload, \(name), \(shape), one publish", headwater: text,
                    nginx: name == "HTTP/1.1" ? "n/a (cannot block); floor \(floor.text)" : "n/a (cannot block)",
                    target: "p99 < 10 ms, < 4 KiB/held", verdict: failed ? .failed : met ? .met : .notMet))
        }
    }

    static func detail(_ release: Release) -> String {
        func milliseconds(_ micros: Int64) -> String { format(Double(micros) / 1000, decimals: 2) }
        return leftPad(milliseconds(release.percentile(0.5)), 10) + leftPad(milliseconds(release.percentile(0.99)), 10)
            + leftPad(milliseconds(release.latencies.last ?? 0), 10) + leftPad(milliseconds(release.latencies.first ?? 0), 10)
            + leftPad(format(release.cpuMicrosPerRequest, decimals: 1), 8) + leftPad(format(release.bytesPerHeld, decimals: 0), 8)
            + leftPad(release.heldGauge.map(String.init) ?? "—", 7) + leftPad(milliseconds(release.sentAhead) + " ms", 12)
    }

    // MARK: HTTP/1.1

    /// `count` keep-alive connections to `port`, each answered one `GET` and then idle, with the
    /// client that will send the blocking requests on them, and the server's VmRSS (KiB) before
    /// they were opened and a second after. Shared by Headwater's release and the floor's.
    struct IdleClients {
        var connections: IdleConnections
        var client: HeldRequestClient
        var residentBefore: Int
        var residentIdle: Int
    }

    func openIdleClients(count: Int, port: Int, serverPID: Int32) async throws -> IdleClients {
        let before = try ProcessStat.residentKiB(of: serverPID)
        let connections = IdleConnections()
        do {
            try connections.open(count: count, port: port, path: Self.sharedPath)
            try await Task.sleep(for: .seconds(1))
            let idle = try ProcessStat.residentKiB(of: serverPID)
            return IdleClients(
                connections: connections, client: try HeldRequestClient(sockets: connections.sockets), residentBefore: before,
                residentIdle: idle)
        } catch {
            connections.closeAll()
            throw error
        }
    }

    /// The blocking request each connection sends: the shared playlist with `_HLS_msn`, gzip.
    static func blockingRequest(msn: UInt64, port: Int) -> [UInt8] {
        Array(
            ("GET \(sharedPath)?_HLS_msn=\(msn) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUser-Agent: headwater-bench\r\n"
                + "Accept-Encoding: gzip\r\n\r\n").utf8)
    }

    /// Records a problem when any of `responses` is not a `200`.
    func checkAllOK(_ responses: [HeldRequestClient.Response], protocolName: String) {
        let bad = responses.filter { $0.status != 200 }
        if !bad.isEmpty { problems.append("blocking reload, \(protocolName): \(bad.count) responses not 200 (first: \(bad[0].status))") }
    }

    private func releaseHTTP1(_ headwater: ServerProcess, count: Int) async throws -> Release {
        let idleClients = try await openIdleClients(count: count, port: headwaterPort, serverPID: headwater.pid)
        defer { idleClients.connections.closeAll() }
        let (client, before, idle) = (idleClients.client, idleClients.residentBefore, idleClients.residentIdle)
        let (msn, estimate) = try await blockingTarget()
        try await sleep(untilWall: estimate - BlockingReload.lead)
        try client.send(Self.blockingRequest(msn: msn, port: headwaterPort))
        let (held, gauge, cpuBefore) = try await atPublish(headwater, estimate: estimate, protocolName: "HTTP/1.1")
        checkGauge(gauge, count, protocolName: "HTTP/1.1")
        // Only meaningful before the publish (``atPublish`` reports when the bench got there late).
        let early = HeldRequestClient.wallMicroseconds() < estimate ? client.readableNow() : 0
        let responses = try client.receive(timeoutSeconds: 20)
        let cpuAfter = try ProcessStat.cpuNanoseconds(of: headwater.pid)

        let publish = try publishInstant(of: msn)
        if early > 0 { problems.append("blocking reload, HTTP/1.1: \(early) responses before the publish (not held)") }
        if client.sentMicros >= publish { problems.append("blocking reload, HTTP/1.1: the requests went out after the publish") }
        checkAllOK(responses, protocolName: "HTTP/1.1")
        try checkListed(msn, in: responses[0].body, protocolName: "HTTP/1.1")
        return Release(
            latencies: responses.map { $0.completedMicros - publish }.sorted(),
            bytesPerHeld: Double(held - idle) * 1024 / Double(count), bytesPerConnectionAndHeld: Double(held - before) * 1024 / Double(count),
            cpuMicrosPerRequest: Double(cpuAfter - cpuBefore) / 1000 / Double(count), heldGauge: gauge, sentAhead: publish - client.sentMicros)
    }

    // MARK: HTTP/2

    private func h2loadArguments(url: String, log: String) -> [String] {
        [
            "-t1", "-c\(blockingH2Connections)", "-m\(BlockingReload.h2Streams)", "-n\(blockingRequests)", "--log-file", log,
            "-H", "accept-encoding: gzip", url,
        ]
    }

    private func releaseHTTP2(_ headwater: ServerProcess, count: Int) async throws -> Release {
        guard let h2load = tools.h2load else { throw ValidationError("h2load is needed for the blocking-reload row") }
        let before = try ProcessStat.residentKiB(of: headwater.pid)
        let (msn, estimate) = try await blockingTarget()
        let log = fixture.directory.appendingPathComponent("h2load-blocking.tsv")
        defer { try? FileManager.default.removeItem(at: log) }
        let arguments = h2loadArguments(url: headwaterBase + Self.sharedPath + "?_HLS_msn=\(msn)", log: log.path)
        try await sleep(untilWall: estimate - BlockingReload.lead)
        let taskset = tools.taskset
        async let run = Self.inBackground { try BenchCommand.execute(h2load, arguments, taskset: taskset, environment: [:], limit: 30) }
        let (held, gauge, cpuBefore) = try await atPublish(headwater, estimate: estimate, protocolName: "HTTP/2")
        let (status, text) = try await run
        checkGauge(gauge, count, protocolName: "HTTP/2")
        let cpuAfter = try ProcessStat.cpuNanoseconds(of: headwater.pid)
        guard status == 0, let summary = H2LoadSummary(text), summary.protocolName == "h2c" || summary.protocolName == "h2" else {
            throw ValidationError("h2load (blocking reload) failed (status \(status)):\n\(text.suffix(3000))")
        }

        let publish = try publishInstant(of: msn)
        let requests = try Self.h2loadRequests(in: log)
        if requests.count != count || summary.status2xx != count {
            problems.append("blocking reload, HTTP/2: \(summary.status2xx) of \(count) answered 2xx (\(requests.count) logged)")
        }
        let late = requests.filter { $0.start >= publish }.count
        if late > 0 { problems.append("blocking reload, HTTP/2: \(late) requests sent after the publish") }
        let early = requests.filter { $0.start + $0.micros < publish }.count
        if early > 0 { problems.append("blocking reload, HTTP/2: \(early) answered before the publish (not held)") }
        return Release(
            latencies: requests.map { $0.start + $0.micros - publish }.sorted(),
            bytesPerHeld: Double(held - before) * 1024 / Double(count), bytesPerConnectionAndHeld: nil,
            cpuMicrosPerRequest: Double(cpuAfter - cpuBefore) / 1000 / Double(count), heldGauge: gauge,
            sentAhead: publish - (requests.map(\.start).max() ?? publish))
    }

    /// h2load's `--log-file`: per request, its start (µs since the epoch), status and duration (µs
    /// to the stream's end). Requests that never ended (status -1) are left out.
    static func h2loadRequests(in log: URL) throws -> [(start: Int64, status: Int, micros: Int64)] {
        try String(contentsOf: log, encoding: .utf8).split(separator: "\n").compactMap { line in
            let columns = line.split(separator: "\t")
            guard columns.count >= 3, let start = Int64(columns[0]), let status = Int(columns[1]), status != -1,
                let micros = Int64(columns[2])
            else { return nil }
            return (start, status, micros)
        }
    }

    /// Runs blocking work (a tool's whole run) on a Dispatch thread, off the concurrency pool.
    static func inBackground<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }

    // MARK: The publish

    /// A quarter second before the estimated publish: VmRSS (KiB) and the held-requests gauge; then,
    /// 50 ms before it, the server's CPU so far (ns). A server too busy to answer `/metrics` in
    /// time makes the bench late: reported as a failed check, since the round's figures are then off.
    private func atPublish(_ headwater: ServerProcess, estimate: Int64, protocolName: String) async throws -> (Int, Int?, Int64) {
        try await sleep(untilWall: estimate - 250_000)
        let resident = try ProcessStat.residentKiB(of: headwater.pid)
        let gauge = heldRequestsGauge()
        try await sleep(untilWall: estimate - 50_000)
        let cpu = try ProcessStat.cpuNanoseconds(of: headwater.pid)
        let late = HeldRequestClient.wallMicroseconds() - (estimate - 50_000)
        if late > 40_000 {
            problems.append(
                "blocking reload, \(protocolName): the bench sampled the server \(late / 1000) ms late (GET /metrics was slow): "
                    + "memory, CPU and the early-response check of this round are off")
        }
        return (resident, gauge, cpu)
    }

    /// A segment to wait for, at least ``BlockingReload/lead`` plus a quarter second ahead and at
    /// most two past the last listed (F10), and when it should be published: the last listed
    /// segment's end plus the shortest `EXTINF` of the window per segment, never later than the
    /// real instant, so the requests are never sent late.
    private func blockingTarget() async throws -> (msn: UInt64, estimate: Int64) {
        for _ in 0..<20 {
            let playlist = try currentV1Playlist()
            guard let (last, end) = Self.segmentEnds(playlist).last,
                let shortest = playlist.segments.map(\.duration.microseconds).min(), shortest > 0
            else { throw ValidationError("GET \(Self.sharedPath): no segments with a PROGRAM-DATE-TIME") }
            let now = HeldRequestClient.wallMicroseconds()
            for ahead in 1...2 {
                let estimate = end + Int64(ahead) * shortest
                if estimate - now >= BlockingReload.lead + 250_000 { return (last + UInt64(ahead), estimate) }
            }
            try await Task.sleep(for: .milliseconds(200))  // a publish is due: read the playlist after it
        }
        throw ValidationError("GET \(Self.sharedPath): no segment far enough ahead in 20 tries (are the clocks right?)")
    }

    /// When segment `msn` was published (its end, µs since the epoch), from a playlist listing it.
    private func publishInstant(of msn: UInt64) throws -> Int64 {
        guard let end = Self.segmentEnds(try currentV1Playlist()).first(where: { $0.msn == msn })?.end else {
            throw ValidationError("GET \(Self.sharedPath): segment \(msn) is not listed after its publish")
        }
        return end
    }

    /// With the gauge counting, every request must be held a quarter second before the publish. A
    /// 0 is a build that exports the gauge without counting yet (before LL-HLS parts); requests not
    /// held there show anyway, as responses before the publish.
    private func checkGauge(_ gauge: Int?, _ count: Int, protocolName: String) {
        if let gauge, gauge > 0, gauge < count {
            problems.append("blocking reload, \(protocolName): \(gauge) of \(count) requests held a quarter second before the publish")
        }
    }

    /// Whether a released (gzip) body lists segment `msn`.
    private func checkListed(_ msn: UInt64, in body: [UInt8], protocolName: String) throws {
        guard let plain = Gzip.decompress(body), let playlist = try? PlaylistParser().parseMedia(plain),
            Self.segmentEnds(playlist).contains(where: { $0.msn == msn })
        else {
            problems.append("blocking reload, \(protocolName): a released playlist does not list segment \(msn)")
            return
        }
    }

    private func currentV1Playlist() throws -> MediaPlaylist {
        guard let response = RawHTTP.split(try RawHTTP.get(port: headwaterPort, path: Self.sharedPath)), response.status == 200 else {
            throw ValidationError("GET \(Self.sharedPath): not 200")
        }
        do {
            return try PlaylistParser().parseMedia(response.body)
        } catch {
            throw ValidationError("GET \(Self.sharedPath): \(error)")
        }
    }

    /// Each segment's media sequence number and end (µs since the epoch): its PROGRAM-DATE-TIME, or
    /// the previous one's end, plus its duration. Segments before the first date are left out.
    static func segmentEnds(_ playlist: MediaPlaylist) -> [(msn: UInt64, end: Int64)] {
        var ends: [(msn: UInt64, end: Int64)] = []
        var start: Int64?
        for (index, segment) in playlist.segments.enumerated() {
            if let date = segment.tags.programDateTime {
                start = date.microsecondsSinceEpoch ?? date.millisecondsSinceEpoch * 1000
            }
            guard let begin = start else { continue }
            let end = begin + segment.duration.microseconds
            ends.append((playlist.mediaSequenceNumber(at: index), end))
            start = end
        }
        return ends
    }

    /// `headwater_held_requests` from `/metrics`, `nil` when the server does not export it.
    private func heldRequestsGauge() -> Int? {
        guard let bytes = try? RawHTTP.get(port: headwaterPort, path: "/metrics"), let response = RawHTTP.split(bytes),
            response.status == 200
        else { return nil }
        for line in String(decoding: response.body, as: UTF8.self).split(separator: "\n")
        where line.hasPrefix("headwater_held_requests ") || line.hasPrefix("headwater_held_requests{") {
            guard let value = line.split(separator: " ").last.flatMap({ Double($0) }) else { continue }
            return Int(value)
        }
        return nil
    }

    private func sleep(untilWall micros: Int64) async throws {
        let delay = micros - HeldRequestClient.wallMicroseconds()
        if delay > 0 { try await Task.sleep(for: .microseconds(delay)) }
    }
}
