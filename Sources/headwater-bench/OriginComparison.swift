import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeadwaterRuntime
import NIOHTTP1

/// One run of `headwater-bench all`: starts Headwater, snapshots what it serves into the files
/// nginx serves (and the floor server's one response), starts nginx (and the floor), checks them,
/// runs the selected workloads and collects the table's rows. Used from one task, start to end.
final class OriginComparison {
    typealias Settings = AllBenchmark.Settings

    let settings: Settings
    let tools: AllBenchmark.Tools
    let fixture: OriginFixture
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    /// Clients for the TLS checks, trusting the bench's certificate: HTTP/1.1 only, and HTTP/2 by
    /// ALPN (made when a TLS row runs).
    var tlsClients: (http1: HTTPClient, http2: HTTPClient)?
    /// The final table, in the order measured.
    var rows: [ResultRow] = []
    /// Checks that failed: the run exits 1.
    var problems: [String] = []

    private(set) var headwater: ServerProcess?
    private(set) var nginx: ServerProcess?
    /// The minimal C server of the floor row (`nil` unless it runs).
    var floor: ServerProcess?
    private(set) var headwaterPort = 0
    private(set) var nginxPort = 0
    var floorPort = 0
    /// TLS ports: Headwater's listener, nginx's (HTTP/1.1 and h2), and nginx's logged check port.
    private(set) var headwaterTLSPort = 0
    private(set) var nginxTLSPort = 0
    private(set) var nginxTLSCheckPort = 0
    /// The last lines of both servers' logs, kept when the directory is removed.
    private var logTails = ""

    static let sharedPath = "/live/demo/v1.m3u8"
    static let masterPath = "/live/demo/master.m3u8"
    static let gzipHeader = "Accept-Encoding: gzip"

    /// What the snapshot holds, for the checks.
    struct Snapshot {
        var shared: [UInt8] = []
        var sharedGzip: [UInt8] = []
        var master: [UInt8] = []
        var masterGzip: [UInt8]?
        /// Headwater's `/ssai/demo/v1.m3u8?session=…` paths; the i-th was written to `/stitched/<i>.m3u8`.
        var stitchedPaths: [String] = []
        var stitched: [[UInt8]] = []
        var segment: [UInt8] = []
        var rangeFileLength = 0
        /// The encrypted channel's key, and the key token that opens it.
        var key: [UInt8] = []
        var keyToken = ""
        /// nginx's paths of the live-URL row's segments (Headwater's bytes at `/live/demo/v1/<msn>.ts`,
        /// written to `/bench/live/v1/<msn>.ts`), and their bytes.
        var liveSegmentPaths: [String] = []
        var liveSegments: [[UInt8]] = []
        /// The pushed 1 MiB segment's live path (`/live/bulk/v1/<run>-<msn>.ts`).
        var pushedPath = ""
        /// Headwater's whole response (head and gzip body) to the shared playlist: the floor's answer.
        var floorResponse: [UInt8] = []
    }

    var snapshot = Snapshot()
    /// Headwater's shared gzip playlist at 64 connections, for the stitched row's ratio.
    var sharedGzip64: WrkSummary?

    var headwaterBase: String { "http://127.0.0.1:\(headwaterPort)" }
    var nginxBase: String { "http://127.0.0.1:\(nginxPort)" }
    var floorBase: String { "http://127.0.0.1:\(floorPort)" }
    var headwaterTLSBase: String { "https://127.0.0.1:\(headwaterTLSPort)" }
    var nginxTLSBase: String { "https://127.0.0.1:\(nginxTLSPort)" }

    init(settings: Settings, tools: AllBenchmark.Tools) throws {
        self.settings = settings
        self.tools = tools
        let workloads = settings.workloads
        if settings.usesTLS { headwaterTLSPort = try BenchTools.freePort() }
        self.fixture = try OriginFixture.create(
            repository: tools.repository, encryptedChannel: workloads.contains(.key), pushChannel: workloads.contains(.pushedSegment),
            tlsPort: settings.usesTLS ? headwaterTLSPort : nil, openssl: tools.openssl)
    }

    func selected(_ workload: AllBenchmark.Workload) -> Bool { settings.workloads.contains(workload) }

    // MARK: The run

    func execute() async throws {
        try printHeader()
        try await startHeadwater()
        try await takeSnapshot()
        try await startNginx()
        try await checkBothServers()
        if selected(.floor) { try await startFloor() }
        if settings.usesTLS { try await checkTLS() }

        if selected(.shared) { try sharedPlaylists() }
        if selected(.floor) { try floorRow() }
        if selected(.stitched) { try await stitchedPlaylists() }
        if selected(.segment) { try segment() }
        if selected(.liveSegments) { try liveSegmentsRow() }
        if selected(.pushedSegment) { try pushedSegmentRow() }
        if selected(.range) { try ranges() }
        if selected(.key) { try keys() }
        if selected(.tlsShared) { try tlsSharedRow() }
        if selected(.tlsReconnects) { try tlsReconnectsRow() }
        if selected(.tlsHandshakes) { try tlsHandshakesRow() }
        if selected(.tlsSegment) { try tlsSegmentRow() }
        if selected(.h2Shared) { try h2SharedRow() }
        if selected(.h2Stitched) { try h2StitchedRow() }
        if selected(.blockingReload) { try await blockingReloadRows() }
        if selected(.connections) { try await idleConnections() }
        if selected(.sessions) { try await sessionMemory() }
        stopServers()
        if selected(.scaling) { try scaling() }
    }

    /// Stops both servers, shuts the HTTP client down and removes the directory; keeps the logs' tails.
    func tearDown() async {
        stopServers()
        try? await client.shutdown()
        if let tlsClients {
            try? await tlsClients.http1.shutdown()
            try? await tlsClients.http2.shutdown()
        }
        fixture.remove()
    }

    /// The last lines of the servers' logs (stderr, nginx's error log), for a failed run.
    func serverLogs() -> String? { logTails.isEmpty ? nil : logTails }

    func stopServers() {
        for server in [headwater, nginx, floor].compactMap({ $0 }) {
            server.stop()
            let tail = server.logTail()
            if !tail.isEmpty { logTails += "\(server.name) log (last lines):\n\(tail)\n" }
        }
        let nginxLog = fixture.directory.appendingPathComponent("nginx-error.log")
        if let text = try? String(contentsOf: nginxLog, encoding: .utf8), !text.isEmpty {
            logTails += "nginx error log (last lines):\n" + text.split(separator: "\n").suffix(20).joined(separator: "\n") + "\n"
            try? FileManager.default.removeItem(at: nginxLog)
        }
        headwater = nil
        nginx = nil
        floor = nil
    }

    // MARK: Header and servers

    private func printHeader() throws {
        let machine = Machine.current()
        let pinned = tools.taskset != nil
        let nginxVersion = BenchTools.output(of: tools.nginx, ["-v"]) ?? "unknown"
        let runner = WrkRunner(wrk: tools.wrk, taskset: tools.taskset, script: tools.wrkScript, connections: 64)
        print("headwater-bench all — Headwater vs nginx serving the same bytes, loopback, wrk; median of \(settings.rounds) round(s)")
        print("machine:   \(machine.cores) cores, \(machine.model), load average \(machine.loadAverage)")
        print("nginx:     \(nginxVersion) (\(tools.nginx)), worker_processes 1")
        print("headwater: \(tools.headwater)")
        print("wrk:       \(runner.commandLine(url: "http://127.0.0.1:PORT/PATH", seconds: settings.seconds, headers: ["…"]))")
        print("           -c64 and -c256 for playlists, -c\(settings.byteConnections) for segments and ranges; -H and the")
        print("           script's mode (one path / a path list / ranges) as each workload says; \(settings.warmUpSeconds) s warm-up each")
        if let h2load = tools.h2load, selected(.h2Shared) || selected(.h2Stitched) {
            let h2 = H2LoadRunner(
                h2load: h2load, taskset: tools.taskset, directory: fixture.directory, clients: h2Clients, streams: Self.h2Streams)
            let version = BenchTools.output(of: h2load, ["--version"]) ?? "unknown"
            print("h2load:    \(h2.commandLine(url: "https://127.0.0.1:PORT/PATH", seconds: settings.seconds, headers: ["…"])) (\(version))")
        }
        if let tls = fixture.tls {
            print("TLS:       TLS 1.3, both servers present \(tls.certificate.lastPathComponent) (ECDSA P-256, self-signed, made with openssl now)")
        }
        print(
            "pinning:   "
                + (pinned
                    ? "Headwater, nginx (master and worker) and the floor on CPU 0 (taskset -c 0); wrk, h2load and the handshake client on CPU 1"
                    : "not pinned (taskset missing)"))
        print("files:     \(BenchTools.raiseFileLimit()) open files (soft limit raised to the hard limit; servers inherit it)")
        print("temporary: \(fixture.directory.path)")
        if tools.headwater.contains("/debug/") {
            print("warning:   \(tools.headwater) looks like a debug build; benchmarks need release builds")
        }
        if settings.quick { print("mode:      --quick (smoke run: the figures mean nothing)") }
        if selected(.pushedSegment) {
            print("push:      channel \(OriginFixture.pushChannel) (push, stall: none): not live until the bench pushes, so /readyz waits for it")
        }
    }

    private func startHeadwater() async throws {
        headwaterPort = try BenchTools.freePort()
        headwater = try ServerProcess.start(
            name: "headwater", executable: tools.headwater,
            arguments: [
                "serve", "--config", fixture.headwaterConfig.path, "--listen", "127.0.0.1:\(headwaterPort)", "--log-level", "warning",
            ],
            taskset: tools.taskset,
            environment: [
                "HEADWATER_SESSION_KEY": "headwater-bench-session-key-0123456789",
                "HEADWATER_KEY_SECRET": OriginFixture.keySecret, "HEADWATER_KEY_TOKEN_SECRET": OriginFixture.keyTokenSecret,
                OriginFixture.ingestTokenVariable: OriginFixture.ingestToken,
            ],
            log: fixture.directory.appendingPathComponent("headwater.log"))
        let http = LoopbackClient(client: client, base: headwaterBase)
        do {
            // /readyz stays 503 while the push channel has had no push: then wait for the demo's playlist.
            try await http.waitUntilReady(
                process: headwater!.process, path: selected(.pushedSegment) ? Self.sharedPath : "/readyz", timeout: .seconds(60))
        } catch {
            throw ValidationError("Headwater did not start: \(error)")
        }
        let version = try await headwaterVersion(http)
        print(
            "           version \(version), listening on \(headwaterBase)"
                + (settings.usesTLS ? " and \(headwaterTLSBase)" : "") + ", pid \(headwater!.pid)")
    }

    /// `headwater --version` or `headwater version` when the binary has one, else what its
    /// `/api/status` reports.
    private func headwaterVersion(_ http: LoopbackClient) async throws -> String {
        for arguments in [["--version"], ["version"]] {
            if let text = BenchTools.output(of: tools.headwater, arguments), !text.isEmpty, !text.contains("\n") { return text }
        }
        let (status, _, body) = try await http.get("/api/status")
        guard status == 200,
            let document = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let server = document["server"] as? [String: Any], let version = server["version"] as? String
        else { return "unknown" }
        return version + " (from /api/status)"
    }

    private func startNginx() async throws {
        nginxPort = try BenchTools.freePort()
        var tls: (port: Int, checkPort: Int)?
        if settings.usesTLS {
            (nginxTLSPort, nginxTLSCheckPort) = (try BenchTools.freePort(), try BenchTools.freePort())
            tls = (nginxTLSPort, nginxTLSCheckPort)
        }
        let modules = BenchTools.output(of: tools.nginx, ["-V"]) ?? ""
        try fixture.nginxConf(port: nginxPort, tls: tls, modules: modules)
            .write(to: fixture.nginxConfig, atomically: true, encoding: .utf8)
        let errorLog = fixture.directory.appendingPathComponent("nginx-error.log").path
        nginx = try ServerProcess.start(
            name: "nginx", executable: tools.nginx,
            arguments: ["-p", fixture.directory.path + "/", "-c", fixture.nginxConfig.path, "-e", errorLog, "-g", "daemon off;"],
            taskset: tools.taskset, log: fixture.directory.appendingPathComponent("nginx-stderr.log"))
        let http = LoopbackClient(client: client, base: nginxBase)
        do {
            try await http.waitUntilReady(process: nginx!.process, path: Self.sharedPath, timeout: .seconds(20))
        } catch {
            throw ValidationError("nginx did not start: \(error)")
        }
        let workers = ProcessStat.children(of: nginx!.pid)
        guard workers.count == 1 else { throw ValidationError("nginx runs \(workers.count) workers; expected 1") }
        print(
            "nginx:     listening on \(nginxBase)" + (tls == nil ? "" : " and \(nginxTLSBase) (listen … ssl http2; check port \(nginxTLSCheckPort))")
                + ", master pid \(nginx!.pid), worker pid \(workers[0]) (\(fixture.nginxConfig.lastPathComponent))")
    }

    // MARK: The same bytes

    /// Writes what Headwater serves into the files nginx serves: the shared playlists (identity and
    /// gzip, the same version), the stitched playlists of distinct sessions, and the byte files.
    private func takeSnapshot() async throws {
        let http = LoopbackClient(client: client, base: headwaterBase)
        (snapshot.master, snapshot.masterGzip) = try await snapshotPlaylist(Self.masterPath, http)
        let (shared, sharedGzip) = try await snapshotPlaylist(Self.sharedPath, http)
        guard let sharedGzip else { throw ValidationError("GET \(Self.sharedPath) with gzip accepted: not gzip") }
        (snapshot.shared, snapshot.sharedGzip) = (shared, sharedGzip)
        print(
            "snapshot:  \(Self.sharedPath) \(shared.count) bytes, gzip \(sharedGzip.count) bytes; \(Self.masterPath) \(snapshot.master.count) bytes"
        )
        if selected(.stitched) || selected(.h2Stitched) {
            let clock = ContinuousClock()
            let started = clock.now
            snapshot.stitchedPaths = try await http.openSessions(count: settings.stitchedSessions, channel: "demo", rendition: "v1")
            for (index, path) in snapshot.stitchedPaths.enumerated() {
                let (status, headers, body) = try await http.fetch(path)
                guard status == 200, headers.first(name: "content-encoding") == nil, body.starts(with: Array("#EXTM3U".utf8)) else {
                    throw ValidationError("GET \(path): \(status); expected 200 and an identity playlist")
                }
                try fixture.write(body, to: "/stitched/\(index).m3u8")
                snapshot.stitched.append(body)
            }
            let average = snapshot.stitched.reduce(0) { $0 + $1.count } / max(1, snapshot.stitched.count)
            let gzipAverage =
                snapshot.stitched.reduce(0) { $0 + (Gzip.compress($1, level: 1)?.count ?? 0) } / max(1, snapshot.stitched.count)
            print(
                "           \(snapshot.stitchedPaths.count) sessions (device=tv/phone/other) opened, their stitched playlists written to /stitched/<i>.m3u8"
                    + " (average \(average) bytes, \(gzipAverage) gzip level 1) in \(format(BenchTools.seconds(clock.now - started), decimals: 1)) s")
        }
        if selected(.segment) || selected(.pushedSegment) || selected(.tlsSegment) {
            snapshot.segment = try fixture.writeSegment()
            print("           \(OriginFixture.segmentPath): \(snapshot.segment.count) bytes (the demo's v1 segments, cut at 1 MiB)")
        }
        if selected(.liveSegments) { try await snapshotLiveSegments(http) }
        if selected(.pushedSegment) { try await pushSegment(http) }
        if selected(.floor) {
            snapshot.floorResponse = try RawHTTP.get(port: headwaterPort, path: Self.sharedPath, headers: [Self.gzipHeader])
            try Data(snapshot.floorResponse).write(to: fixture.directory.appendingPathComponent("floor-response.bin"))
            print("           floor-response.bin: Headwater's whole response to GET \(Self.sharedPath) with gzip, \(snapshot.floorResponse.count) bytes")
        }
        if selected(.key) {
            snapshot.keyToken = try KeyTokenSigner(secretText: OriginFixture.keyTokenSecret)
                .mint(channel: "secure", expiry: UInt64(Date().timeIntervalSince1970) + 3600)
            let (status, _, key) = try await http.fetch(OriginFixture.keyPath, headers: [("Authorization", "Bearer \(snapshot.keyToken)")])
            guard status == 200, key.count == 16 else { throw ValidationError("GET \(OriginFixture.keyPath) with a key token: \(status)") }
            snapshot.key = key
            try fixture.write(key, to: OriginFixture.keyPath)
            print("           \(OriginFixture.keyPath): the encrypted channel's key (16 bytes), with a key token; written for nginx")
        }
        if selected(.range) {
            try fixture.writeRangeFile(mebibytes: settings.rangeFileMebibytes)
            snapshot.rangeFileLength = settings.rangeFileMebibytes << 20
            print("           \(OriginFixture.rangeFilePath): \(snapshot.rangeFileLength) bytes (pseudo-random)")
        }
    }

    /// One version of a playlist, identity and gzip (nil when Headwater does not gzip it): both
    /// requests are retried until the gzip body decompresses to the identity body.
    private func snapshotPlaylist(_ path: String, _ http: LoopbackClient) async throws -> ([UInt8], [UInt8]?) {
        for _ in 0..<50 {
            let (status, plainHeaders, plain) = try await http.fetch(path)
            let (gzipStatus, headers, gzip) = try await http.fetch(path, headers: [("Accept-Encoding", "gzip")])
            guard status == 200, gzipStatus == 200, plainHeaders.first(name: "content-encoding") == nil else {
                throw ValidationError("GET \(path): \(status) / \(gzipStatus); expected 200")
            }
            guard headers.first(name: "content-encoding") == "gzip" else {
                try fixture.write(plain, to: path)
                return (plain, nil)
            }
            if Gzip.decompress(gzip) == plain {
                try fixture.write(plain, to: path)
                try fixture.write(gzip, to: path + ".gz")
                return (plain, gzip)
            }
            try await Task.sleep(for: .milliseconds(100))  // a new version came between the two requests
        }
        throw ValidationError("GET \(path): no identity and gzip bodies of the same version in 50 tries")
    }

    /// Before measuring: each server answers each path 200 (206 for ranges), with gzip where
    /// expected, and nginx serves exactly the snapshot's bytes.
    private func checkBothServers() async throws {
        let headwater = LoopbackClient(client: client, base: headwaterBase)
        let nginx = LoopbackClient(client: client, base: nginxBase)
        func expect(
            _ server: LoopbackClient, _ path: String, gzip: Bool, headers: [(String, String)] = [], status expected: Int = 200,
            body: [UInt8]? = nil
        ) async throws -> HTTPHeaders {
            let (status, responseHeaders, received) = try await server.fetch(
                path, headers: headers + (gzip ? [("Accept-Encoding", "gzip")] : []))
            let encoding = responseHeaders.first(name: "content-encoding")
            let what = "\(server.base == headwaterBase ? "Headwater" : "nginx") GET \(path)"
            guard status == expected else { throw ValidationError("\(what): \(status), expected \(expected)") }
            guard (encoding == "gzip") == gzip else { throw ValidationError("\(what): Content-Encoding \(encoding ?? "none")") }
            let plain = gzip ? Gzip.decompress(received) : received
            guard let plain else { throw ValidationError("\(what): the gzip body does not decompress") }
            if let body, plain != body { throw ValidationError("\(what): not the snapshot's bytes") }
            if body == nil, path.hasSuffix(".m3u8") || path.contains(".m3u8?"), !plain.starts(with: Array("#EXTM3U".utf8)) {
                throw ValidationError("\(what): not a playlist")
            }
            return responseHeaders
        }
        for gzip in [false, true] {
            _ = try await expect(headwater, Self.sharedPath, gzip: gzip)
            _ = try await expect(nginx, Self.sharedPath, gzip: gzip, body: snapshot.shared)
            _ = try await expect(headwater, Self.masterPath, gzip: gzip && snapshot.masterGzip != nil)
            _ = try await expect(nginx, Self.masterPath, gzip: gzip && snapshot.masterGzip != nil, body: snapshot.master)
        }
        for (index, path) in snapshot.stitchedPaths.enumerated() {
            _ = try await expect(headwater, path, gzip: true)
            _ = try await expect(nginx, "/stitched/\(index).m3u8", gzip: true, body: snapshot.stitched[index])
        }
        if !snapshot.key.isEmpty {
            let token = [("Authorization", "Bearer \(snapshot.keyToken)")]
            for server in [headwater, nginx] {
                _ = try await expect(server, OriginFixture.keyPath, gzip: false, headers: token, body: snapshot.key)
            }
            _ = try await expect(headwater, OriginFixture.keyPath, gzip: false, status: 403)
        }
        if !snapshot.segment.isEmpty {
            for server in [headwater, nginx] {
                _ = try await expect(server, OriginFixture.segmentPath, gzip: false, body: snapshot.segment)
            }
        }
        for (index, path) in snapshot.liveSegmentPaths.enumerated() {
            _ = try await expect(nginx, path, gzip: false, body: snapshot.liveSegments[index])
        }
        if selected(.liveSegments) {
            for path in try currentLiveSegmentPaths() { _ = try await expect(headwater, path, gzip: false) }
        }
        if !snapshot.pushedPath.isEmpty {
            _ = try await expect(headwater, snapshot.pushedPath, gzip: false, body: snapshot.segment)
        }
        if snapshot.rangeFileLength > 0 {
            let size = settings.rangeBytes
            for first in [0, 188 * 1000, (snapshot.rangeFileLength - size) / 188 * 188] {
                let last = first + size - 1
                let bytes = try fixture.rangeFileBytes(first, last)
                for server in [headwater, nginx] {
                    let headers = try await expect(
                        server, OriginFixture.rangeFilePath, gzip: false, headers: [("Range", "bytes=\(first)-\(last)")], status: 206,
                        body: bytes)
                    guard headers.first(name: "content-range") == "bytes \(first)-\(last)/\(snapshot.rangeFileLength)" else {
                        throw ValidationError("GET \(OriginFixture.rangeFilePath) bytes=\(first)-\(last): Content-Range \(headers.first(name: "content-range") ?? "missing")")
                    }
                }
            }
        }
        print("checks:    every path answers 200 (ranges 206) on both, gzip where expected; nginx serves the snapshot's bytes")
    }
}
