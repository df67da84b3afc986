import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeadwaterConfiguration
import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterSources
import HeadwaterStitching
import HeadwaterTracking
import Logging
import ServiceLifecycle
import UnixSignals

/// `headwater serve`: the origin. Loads the configuration, starts every channel and the HTTP
/// server, reloads the configuration on SIGHUP, and runs until SIGTERM/SIGINT (graceful:
/// in-flight responses finish).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the origin (default: Config/headwater.yaml, else the embedded demo channel)."
    )

    @Option(name: .long, help: "Configuration file.") var config: String?
    @Option(name: .long, help: "Listen address HOST:PORT, overriding server.listen.") var listen: String?
    @Option(name: .long, help: "TLS listen address HOST:PORT, overriding server.tls.listen (needs server.tls).")
    var tlsListen: String?
    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel: String = "info"

    func run() async throws {
        OriginMetrics.bootstrap()  // metrics: swift-metrics → the registry /metrics exports
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        // The access log (one line per request) goes as plain lines to server.access_log, standard
        // output until the configuration is read; everything else to standard error, with syslog
        // priorities under the journal. See README.md "Logs, metrics and health".
        let accessLog = AccessLogOutput()
        let journal = JournalStream.isStandardError(environment: ProcessInfo.processInfo.environment["JOURNAL_STREAM"])
        let rateLimit = LogRateLimit()
        LoggingSystem.bootstrap { label in
            if label == OriginServer.accessLogLabel { return AccessLogLineHandler(output: accessLog) }
            var handler = StandardErrorLogHandler(label: label, journal: journal, limit: rateLimit)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "headwater")
        let reopenSignals = await UnixSignalsSequence(trapping: .sigusr1)  // before anything can send it

        let loaded: ChannelSupervisor.Loaded
        let certificates: TLSCertificates?
        do {
            (loaded, certificates) = try ConfigurationLoading.loadWithCertificates(path: config)
        } catch {
            ConfigurationLoading.exit(with: error)
        }
        let configuration = loaded.configuration
        do {
            try accessLog.apply(configuration.server.accessLog)
        } catch {
            ConfigurationLoading.exit(with: ConfigurationError(problems: [
                .init(file: loaded.file, line: nil, keyPath: "server.access_log", message: "\(error)")
            ]))
        }
        var (host, port) = (configuration.server.host, configuration.server.port)
        if let listen { (host, port) = try ListenAddress.parse(listen, option: "--listen") }
        let tls: TLSListenerConfiguration?
        do {
            tls = try TLSWiring.listener(
                configuration.server.tls, certificates: certificates, override: tlsListen, file: loaded.file)
        } catch let error as ConfigurationError {
            ConfigurationLoading.exit(with: error)
        }

        // Encrypted channels' secrets: read once, before any channel starts (exit 78 when missing).
        let keyring: ChannelKeyring
        do throws(ConfigurationError) {
            keyring = try KeyWiring.keyring(configuration, file: loaded.file)
        } catch {
            ConfigurationLoading.exit(with: error)
        }
        let clock = SystemWallClock()
        let registry = ChannelRegistry()
        // Push ingest exists even without push channels, so a reload can add one.
        let push: PushIngest
        do {
            push = try PushIngest(
                configuration: configuration, registry: registry, clock: clock, logger: logger, slate: loaded.slate,
                keyring: keyring)
        } catch {
            ConfigurationLoading.exit(with: ConfigurationError(problems: [
                .init(file: loaded.file, line: nil, keyPath: "server.state", message: error.message)
            ]))
        }
        // Pull channels share one HTTP client (also those a reload adds), shut down at the end.
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
        let sources = ChannelSources(
            registry: registry, clock: clock, logger: logger, stateDirectory: push.stateDirectory, runTag: push.runTag,
            durable: push.isDurable, httpClient: httpClient, keyring: keyring)
        // Ad insertion: rule sets, session tokens, beacons; break trackers per channel (AdWiring).
        let ruleBook = AdRuleBook()
        let beacons = BeaconDispatcher(httpClient: httpClient, logger: logger)
        let adClass = StitchOptions().adClass
        let adInsertion = AdInsertion(
            registry: registry, ruleBook: ruleBook, signer: AdWiring.signer(configuration: configuration, logger: logger),
            adminToken: ProcessInfo.processInfo.environment[configuration.server.adminTokenEnvironmentVariable],
            logger: logger,
            onStitched: { playlist in
                // Once per shared stitched playlist; the action it returns runs per session served
                // (AdInsertion.Playlist.dueTracking, performed by the HTTP writer once a GET's body is
                // written: never for a HEAD, a 304 or a failed write): only the dedupe, and new URLs made its own.
                let due = AdTracking.dueBeacons(in: playlist, adClass: adClass)
                guard !due.isEmpty else { return nil }
                return { session in beacons.fire(session: session.id, due, personalize: session.personalize) }
            })
        let ads = AdWiring(registry: registry, ruleBook: ruleBook, adInsertion: adInsertion, logger: logger)
        // The same file again on SIGHUP (`--config`, else what was found at start).
        let path = config
        let supervisor = ChannelSupervisor(
            loaded: loaded, loader: { () throws(ConfigurationError) in try ConfigurationLoading.load(path: path) },
            push: push, registry: registry, logger: logger, makeSource: sources.make,
            onReload: { result in OriginMetrics.shared.configReload(result: result) },
            applyAds: { loaded in
                ads.apply(loaded)
                ReopenAccessLog.apply(loaded, to: accessLog, logger: logger)
            })
        // Every loop channel is live before the first request.
        await supervisor.prepare()  // every channel published before the server listens

        var serverConfiguration = OriginServerConfiguration()
        serverConfiguration.host = host
        serverConfiguration.port = port
        serverConfiguration.publicDirectory = configuration.server.publicDirectory
        serverConfiguration.followSymlinks =
            switch configuration.server.followSymlinks {
            case .never: .never
            case .inside: .inside
            }
        serverConfiguration.cors = configuration.server.cors
        serverConfiguration.eventLoopThreads = configuration.server.threads ?? OriginServerConfiguration.availableCPUs()
        serverConfiguration.tls = tls
        ServerLimitsWiring.apply(configuration.server, to: &serverConfiguration)
        let server = OriginServer(
            configuration: serverConfiguration, content: registry, ingest: PushIngestSink(push), logger: logger,
            accessLogger: Logger(label: OriginServer.accessLogLabel), clock: clock,
            adInsertion: adInsertion)

        let notifier = SystemdNotifier()
        let services: [any Service] = [
            push, supervisor, server, beacons,
            ReloadOnHangup(supervisor: supervisor, certificates: certificates, notifier: notifier, logger: logger),
            SystemdReadiness(server: server, tls: tls != nil, notifier: notifier, logger: logger),
            ReopenAccessLog(signals: reopenSignals, output: accessLog, logger: logger),
        ]
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        var listening: Logger.Metadata = ["address": "http://\(host):\(port)", "channels": "\(configuration.channels.map(\.name))"]
        if let tls { listening["address.tls"] = "https://\(tls.host):\(tls.port)" }
        if let ingest = serverConfiguration.ingestListener { listening["address.ingest"] = "http://\(ingest.host):\(ingest.port)" }
        logger.info("listening", metadata: listening)
        do {
            try await group.run()
        } catch {
            try? await httpClient.shutdown()
            throw error
        }
        try? await httpClient.shutdown()
    }
}

/// Turns SIGHUP (`systemctl reload`) into a configuration reload, telling systemd when it starts
/// and ends (`RELOADING=1` … `READY=1`), so `systemctl reload` returns once it is applied. An
/// applied reload also re-reads the TLS certificate and key (a renewal replaces the files and
/// reloads), as long as the configuration still has `server.tls`.
struct ReloadOnHangup: Service {
    let supervisor: ChannelSupervisor
    /// The TLS listener's certificates, `nil` without one.
    let certificates: TLSCertificates?
    let notifier: SystemdNotifier
    let logger: Logger

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in hangups {
                notify { try notifier.reloading(status: "reloading configuration") }
                var applied = await supervisor.reload()
                if applied, let certificates, let tls = await supervisor.loaded.configuration.server.tls {
                    applied = TLSWiring.reload(certificates, from: tls, logger: logger)
                }
                notify { try notifier.reloaded(status: applied ? "serving; configuration reloaded" : "serving; reload rejected, see the log") }
            }
        }
    }

    private func notify(_ send: () throws -> Void) {
        do { try send() } catch { logger.warning("sd_notify: \(error)") }
    }
}

/// `READY=1` once the server listens (the unit is `Type=notify`), `STOPPING=1` when graceful
/// shutdown begins. Nothing without `NOTIFY_SOCKET`. With `server.tls`, ready means both
/// listeners are bound, so `systemctl start` does not report success for a server whose TLS port
/// is taken.
struct SystemdReadiness: Service {
    let server: OriginServer
    /// Whether there is a TLS listener to wait for too.
    let tls: Bool
    let notifier: SystemdNotifier
    let logger: Logger

    func run() async throws {
        // A service that returns early stops the group: without systemd this one just waits.
        if notifier.isEnabled {
            var addresses = ["\(try await server.waitUntilListening())"]
            if tls { addresses.append("\(try await server.waitUntilTLSListening())") }
            do {
                try notifier.ready(status: "serving on \(addresses.joined(separator: " and "))")
            } catch {
                logger.warning("sd_notify: \(error)")
            }
        }
        try? await gracefulShutdown()
        if notifier.isEnabled { try? notifier.stopping(status: "finishing in-flight responses") }
    }
}

