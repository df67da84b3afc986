import ArgumentParser
import Foundation

/// `headwater-bench all`: the release `headwater serve` against nginx serving the same bytes, over
/// loopback, in one run: shared and stitched playlists, segments by their live URLs and a 1 MiB
/// one, byte ranges, the same over TLS and HTTP/2, a floor (a minimal C server answering the shared
/// playlist from memory), memory per idle connection and per session, and the in-process render
/// cost against window length and history. One table of absolute figures and Headwater ÷ nginx
/// ratios at the end.
struct AllBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "all",
        abstract: "Headwater vs nginx serving the same bytes (loopback, wrk): every workload, one table of figures and ratios.",
        discussion: """
            Workloads (for --only, comma-separated): \(Workload.allCases.map(\.rawValue).joined(separator: ", ")).

            Needs wrk, nginx, taskset, h2load (HTTP/2 rows), openssl (TLS rows), cc and the OpenSSL headers \
            (the floor server, the full-handshake client): \
            bash Tests/tools/install-bench-tools.sh. Exits 1 when a run or a check fails; a target not met \
            is reported in the table, not an error.
            """
    )

    @Option(help: "Seconds per wrk run (default 10; --quick: 1).") var duration: Int?
    @Option(help: "Rounds per workload, Headwater and nginx alternately; medians are compared (default 3; --quick: 1).")
    var rounds: Int?
    @Option(help: "Distinct sessions for the stitched row (default 2000; --quick: 200).") var sessions: Int?
    @Flag(help: "Smoke run of every code path in about two minutes: 1 s runs, 1 round, fewer sessions and connections, an 8 MiB range file.")
    var quick = false
    @Option(help: "The headwater binary (default: next to this one, so a release build).") var server: String?
    @Option(help: "The nginx binary (default: nginx on PATH, or /usr/sbin/nginx).") var nginx: String?
    @Option(help: "Only these workloads, comma-separated (default: all).") var only: String?
    @Option(help: "The repository root (Config/ads.yaml, Public/demo, Tests/tools); default: the working directory, or above this binary.")
    var repository: String?

    enum Workload: String, CaseIterable {
        case shared, floor, stitched, segment
        case liveSegments = "live-segments"
        case pushedSegment = "pushed-segment"
        case range, key
        case tlsShared = "tls-shared"
        case tlsReconnects = "tls-reconnects"
        case tlsHandshakes = "tls-handshakes"
        case tlsSegment = "tls-segment"
        case h2Shared = "h2-shared"
        case h2Stitched = "h2-stitched"
        case blockingReload = "blocking-reload"
        case connections, sessions, scaling

        /// Over TLS (the certificate, both servers' TLS listeners).
        var usesTLS: Bool { [.tlsShared, .tlsReconnects, .tlsHandshakes, .tlsSegment, .h2Shared, .h2Stitched].contains(self) }
        /// With h2load (the blocking-reload row's HTTP/2 half: h2c on the plain port).
        var usesH2Load: Bool { [.h2Shared, .h2Stitched, .blockingReload].contains(self) }
    }

    /// Every size and duration of a run, from the options.
    struct Settings {
        var seconds: Int
        var rounds: Int
        var warmUpSeconds: Int
        var stitchedSessions: Int
        var idleConnections: Int
        var memoryWarmUpSessions: Int
        var memorySessions: Int
        /// The longest the session-memory run may take, seconds.
        var memorySessionSeconds: Int
        var rangeFileMebibytes: Int
        var scalingMilliseconds: Int
        var scalingPairs: Int
        var workloads: Set<Workload>
        var quick: Bool

        var usesTLS: Bool { workloads.contains { $0.usesTLS } }

        /// Connections of the playlist rows (each at both), and of the byte rows.
        let playlistConnections = [64, 256]
        let byteConnections = 64
        /// 188 × 1024: whole MPEG-TS packets.
        let rangeBytes = 192_512
    }

    func run() async throws {
        let settings = try makeSettings()
        let tools = try findTools(for: settings)
        BenchTools.raiseFileLimit()
        let signalSources = BenchCleanup.shared.installSignalHandlers()
        defer { withExtendedLifetime(signalSources) {} }

        let comparison = try OriginComparison(settings: settings, tools: tools)
        var failure: (any Error)?
        do {
            try await comparison.execute()
        } catch {
            failure = error
        }
        await comparison.tearDown()
        print("")
        print(ResultTable.render(comparison.rows))
        print("H/n: Headwater ÷ nginx (÷ the floor on the floor row). req/s H/n (MB/s for segments) above 1: Headwater served")
        print("more; CPU H/n (server CPU µs per request, per MiB for segments) below 1: Headwater spent less. Rates are medians")
        print("of alternate runs.")
        for problem in comparison.problems { print("check failed: \(problem)") }
        if let failure {
            print("error: \(failure)")
            if let log = comparison.serverLogs(), !log.isEmpty { print(log) }
            throw ExitCode(1)
        }
        guard comparison.problems.isEmpty else { throw ExitCode(1) }
    }

    private func makeSettings() throws -> Settings {
        var workloads = Set(Workload.allCases)
        if let only {
            workloads = []
            for name in only.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty {
                guard let workload = Workload(rawValue: name) else {
                    throw ValidationError(
                        "--only: no workload \(name); choose from \(Workload.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                workloads.insert(workload)
            }
        }
        let settings = Settings(
            seconds: duration ?? (quick ? 1 : 10), rounds: rounds ?? (quick ? 1 : 3), warmUpSeconds: quick ? 1 : 2,
            stitchedSessions: sessions ?? (quick ? 200 : 2_000), idleConnections: quick ? 500 : 10_000,
            memoryWarmUpSessions: quick ? 500 : 5_000, memorySessions: quick ? 2_000 : 100_000,
            memorySessionSeconds: quick ? 60 : 300, rangeFileMebibytes: quick ? 8 : 100, scalingMilliseconds: quick ? 30 : 400,
            scalingPairs: quick ? 3 : 9, workloads: workloads, quick: quick)
        guard settings.seconds > 0, settings.rounds > 0, settings.stitchedSessions > 0, !workloads.isEmpty else {
            throw ValidationError("--duration, --rounds and --sessions must be positive, and --only must name a workload")
        }
        return settings
    }

    /// The programs and files a run needs, checked before anything starts.
    struct Tools {
        var wrk: String
        var nginx: String
        /// `nil`: not pinned.
        var taskset: String?
        var headwater: String
        var repository: URL
        var wrkScript: String
        var sessionScript: String
        /// For the HTTP/2 rows (`nil` when none runs).
        var h2load: String?
        /// For the TLS rows' certificate and handshake checks (`nil` when none runs).
        var openssl: String?
        /// The C compiler for the floor server and the full-handshake client (`nil` when neither
        /// runs), and their sources.
        var cc: String?
        var floorSource: String
        var handshakeClientSource: String
    }

    private func findTools(for settings: Settings) throws -> Tools {
        guard let wrk = BenchTools.executable(named: "wrk") else {
            print("wrk is not installed: bash Tests/tools/install-bench-tools.sh")
            throw ExitCode(69)
        }
        guard let nginx = nginx ?? BenchTools.executable(named: "nginx") else {
            print("nginx is not installed: bash Tests/tools/install-bench-tools.sh")
            throw ExitCode(69)
        }
        guard FileManager.default.isExecutableFile(atPath: nginx) else { throw ValidationError("no nginx binary at \(nginx)") }
        let root = try repositoryRoot()
        let headwater = server ?? BenchTools.siblingServer()
        if server == nil, !FileManager.default.isExecutableFile(atPath: headwater), headwater.contains("/release/") {
            try Self.buildServer(in: root)
        }
        guard FileManager.default.isExecutableFile(atPath: headwater) else {
            throw ValidationError("no headwater binary at \(headwater): swift build -c release --product headwater")
        }
        if let stale = Self.newerSource(than: headwater, in: root) {
            print("warning: \(stale) is newer than \(headwater): rebuild it (swift build -c release --product headwater)")
        }
        // Only what the selected rows use is required, so that `--only` runs without the others' tools.
        func required(_ name: String, _ needed: Bool, package: String) throws -> String? {
            guard needed else { return nil }
            guard let path = BenchTools.executable(named: name) else {
                print("\(name) is not installed (\(package)): bash Tests/tools/install-bench-tools.sh")
                throw ExitCode(69)
            }
            return path
        }
        let workloads = settings.workloads
        let tools = Tools(
            wrk: wrk, nginx: nginx, taskset: BenchTools.executable(named: "taskset"), headwater: headwater, repository: root,
            wrkScript: root.appendingPathComponent("Tests/tools/origin-bench.lua").path,
            sessionScript: root.appendingPathComponent("Tests/tools/session-memory.lua").path,
            h2load: try required("h2load", workloads.contains { $0.usesH2Load }, package: "nghttp2-client"),
            openssl: try required("openssl", settings.usesTLS, package: "openssl"),
            cc: try required(
                "cc", workloads.contains(.floor) || workloads.contains(.tlsHandshakes) || workloads.contains(.blockingReload), package: "gcc"),
            floorSource: root.appendingPathComponent("Tests/tools/floor-server.c").path,
            handshakeClientSource: root.appendingPathComponent("Tests/tools/tls-handshake-client.c").path)
        for path in [tools.wrkScript, tools.sessionScript, tools.floorSource, tools.handshakeClientSource] where !FileManager.default.fileExists(atPath: path) {
            throw ValidationError("no \(path): pass --repository")
        }
        return tools
    }

    /// `swift build -c release --product headwater`, for a first run of `swift run … headwater-bench all`
    /// (`swift run` builds only the bench).
    private static func buildServer(in repository: URL) throws {
        guard let swift = BenchTools.executable(named: "swift") else { return }
        print("building the server: swift build -c release --product headwater")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: swift)
        process.arguments = ["build", "-c", "release", "--product", "headwater"]
        process.currentDirectoryURL = repository
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ValidationError("swift build --product headwater failed") }
    }

    /// A file of the server's sources (`Sources/`, not the bench's) modified after `binary` was built.
    private static func newerSource(than binary: String, in repository: URL) -> String? {
        guard let built = try? FileManager.default.attributesOfItem(atPath: binary)[.modificationDate] as? Date else { return nil }
        let sources = repository.appendingPathComponent("Sources")
        guard let files = FileManager.default.enumerator(atPath: sources.path) else { return nil }
        for case let file as String in files
        where file.hasSuffix(".swift") && !file.hasPrefix("headwater-bench/") && !file.hasPrefix("headwater-fuzz/") {
            let path = sources.appendingPathComponent(file).path
            if let modified = try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date, modified > built {
                return "Sources/" + file
            }
        }
        return nil
    }

    /// `--repository`, else the working directory if it is the repository, else the first
    /// directory above this binary that is (`.build/<triple>/release/headwater-bench`).
    private func repositoryRoot() throws -> URL {
        func isRepository(_ url: URL) -> Bool {
            ["Package.swift", "Config/ads.yaml", "Public/demo/master.m3u8"].allSatisfy {
                FileManager.default.fileExists(atPath: url.appendingPathComponent($0).path)
            }
        }
        if let repository {
            let url = URL(fileURLWithPath: repository).standardizedFileURL
            guard isRepository(url) else { throw ValidationError("--repository \(repository): no Package.swift, Config/ads.yaml, Public/demo") }
            return url
        }
        let working = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        if isRepository(working) { return working }
        var candidate = URL(fileURLWithPath: BenchTools.ownPath).deletingLastPathComponent()
        while candidate.path != "/" {
            if isRepository(candidate) { return candidate }
            candidate = candidate.deletingLastPathComponent()
        }
        throw ValidationError("cannot find the repository (Config/ads.yaml, Public/demo): run from its root or pass --repository")
    }
}
