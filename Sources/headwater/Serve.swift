import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeadwaterCore
import HeadwaterHTTP
import HeadwaterPull
import Logging
import ServiceLifecycle
import UnixSignals

/// `headwater serve`: the origin. Loads the configuration, starts every channel's publisher and the
/// HTTP server, and runs until SIGTERM/SIGINT (graceful: in-flight responses finish).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the origin (default: Config/headwater.yaml, else the embedded demo channel)."
    )

    @Option(name: .long, help: "Configuration file.") var config: String?
    @Option(name: .long, help: "Listen address HOST:PORT, overriding server.listen.") var listen: String?
    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel: String = "info"

    func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "headwater")

        let configuration: HeadwaterConfiguration
        let packages: [String: LoopPackage]
        do {
            (configuration, packages, _) = try ConfigurationLoading.load(path: config)
        } catch {
            ConfigurationLoading.exit(with: error)
        }
        var host = configuration.server.host
        var port = configuration.server.port
        if let listen {
            guard let colon = listen.lastIndex(of: ":"), let value = Int(listen[listen.index(after: colon)...]),
                (0...65535).contains(value)
            else {
                throw ValidationError("--listen must be HOST:PORT, got \"\(listen)\"")
            }
            host = String(listen[..<colon]).trimmingCharacters(in: ["[", "]"])
            port = value
        }

        let clock = SystemWallClock()
        let registry = ChannelRegistry()
        var services: [any Service] = []
        for channel in configuration.channels {
            guard let package = packages[channel.name] else { continue }
            let loop = LoopChannel(name: channel.name, package: package, windowSeconds: channel.windowSeconds, startedAt: clock.now())
            let publisher = LoopChannelPublisher(
                channel: loop, registry: registry, clock: clock,
                logger: logger.with(metadataKey: "hls.channel.id", value: "\(channel.name)"))
            publisher.publishNow()  // live before the first request
            services.append(publisher)
        }

        var serverConfiguration = OriginServerConfiguration()
        serverConfiguration.host = host
        serverConfiguration.port = port
        serverConfiguration.publicDirectory = configuration.server.publicDirectory
        serverConfiguration.cors = configuration.server.cors
        // Push channels: encoders PUT segments and playlists to /ingest/{channel}/…
        var ingest: (any IngestSink)?
        if configuration.channels.contains(where: { if case .push = $0.source { true } else { false } }) {
            let push: PushIngest
            do {
                push = try PushIngest(configuration: configuration, registry: registry, clock: clock, logger: logger)
            } catch {
                ConfigurationLoading.exit(with: ConfigurationError(problems: [
                    .init(file: "server.state", line: nil, keyPath: "server.state", message: error.message)
                ]))
            }
            services.append(push)
            ingest = PushIngestSink(push)
        }
        // Directory and pull channels: one call each builds a source (a reload-capable supervisor
        // will own them later). Pull sources share one HTTP client, shut down after they end.
        let sources = Self.directoryAndPullSources(configuration, registry: registry, clock: clock, logger: logger)
        services += sources.services

        let server = OriginServer(configuration: serverConfiguration, content: registry, ingest: ingest, logger: logger)
        services.append(server)

        let group = ServiceGroup(
            configuration: .init(services: services.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        logger.info("listening", metadata: ["address": "http://\(host):\(port)", "channels": "\(configuration.channels.map(\.name))"])
        do {
            try await group.run()
        } catch {
            await sources.finish()
            throw error
        }
        await sources.finish()
    }

    /// The services of the directory and pull channels, and what to release once they ended: the
    /// shared HTTP client and a temporary state directory (when `server.state` is not set).
    static func directoryAndPullSources(
        _ configuration: HeadwaterConfiguration, registry: ChannelRegistry, clock: SystemWallClock, logger: Logger
    ) -> (services: [any Service], finish: @Sendable () async -> Void) {
        let channels = configuration.channels.filter {
            switch $0.source {
            case .directory, .pull: true
            case .loop, .push: false
            }
        }
        guard !channels.isEmpty else { return ([], {}) }
        let temporary = configuration.server.stateDirectory == nil
        let state = configuration.server.stateDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("headwater-\(UUID().uuidString)").path
        let runTag = WindowedChannel.newRunTag(startedAt: clock.now())
        let needsClient = channels.contains { if case .pull = $0.source { true } else { false } }
        let client = needsClient ? HTTPClient(eventLoopGroupProvider: .singleton) : nil
        var services: [any Service] = []
        for channel in channels {
            do {
                switch channel.source {
                case .directory(let source):
                    services.append(
                        try DirectoryChannelSource(
                            channel: channel, source: source, stateDirectory: state, runTag: runTag, registry: registry,
                            clock: clock, logger: logger))
                case .pull(let source):
                    services.append(
                        try PullChannelSource(
                            channel: channel, source: source, stateDirectory: state, runTag: runTag, registry: registry,
                            clock: clock, logger: logger, httpClient: client!))
                case .loop, .push:
                    break
                }
            } catch {
                ConfigurationLoading.exit(with: ConfigurationError(problems: [
                    .init(file: "server.state", line: nil, keyPath: "channels.\(channel.name).source", message: error.message)
                ]))
            }
        }
        return (services, {
            try? await client?.shutdown()
            if temporary { try? FileManager.default.removeItem(atPath: state) }
        })
    }
}

extension Logger {
    func with(metadataKey key: String, value: Logger.MetadataValue) -> Logger {
        var copy = self
        copy[metadataKey: key] = value
        return copy
    }
}
