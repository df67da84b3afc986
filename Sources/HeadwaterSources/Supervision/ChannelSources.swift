public import AsyncHTTPClient
public import HeadwaterConfiguration
import HeadwaterLiveWindow
public import HeadwaterRuntime
public import Logging
public import ServiceLifecycle

/// Makes the service that runs a channel of the configuration, for every source but push (which
/// ``PushIngest`` runs): used at start and on every reload.
public struct ChannelSources: Sendable {
    let registry: ChannelRegistry
    let clock: any WallClock
    let logger: Logger
    /// Where sources that store files keep them.
    let stateDirectory: String
    /// Prefix of this run's stored and served names.
    let runTag: String
    /// Whether directory and pull channels save their windows and restore them at start (a
    /// configured `server.state`, ``PushIngest/isDurable``).
    let durable: Bool
    /// Shared by pull sources.
    let httpClient: HTTPClient
    /// What encrypted channels are keyed from.
    let keyring: ChannelKeyring

    public init(
        registry: ChannelRegistry, clock: any WallClock, logger: Logger, stateDirectory: String, runTag: String,
        durable: Bool = false, httpClient: HTTPClient, keyring: ChannelKeyring = ChannelKeyring()
    ) {
        self.durable = durable
        self.keyring = keyring
        self.registry = registry
        self.clock = clock
        self.logger = logger
        self.stateDirectory = stateDirectory
        self.runTag = runTag
        self.httpClient = httpClient
    }

    /// The service for `channel`, or `nil` when push ingest runs it.
    public func make(_ channel: HeadwaterConfiguration.Channel, _ loaded: ChannelSupervisor.Loaded) throws -> (any Service)? {
        var logger = self.logger
        logger[metadataKey: "hls.channel.id"] = "\(channel.name)"
        switch channel.source {
        case .loop:
            guard let publisher = try loopPublisher(channel, loaded, logger: logger) else { return nil }
            publisher.publishNow()  // live before the first request
            return publisher
        case .push:
            return nil
        case .directory(let source):
            return try DirectoryChannelSource(
                channel: channel, source: source, stateDirectory: stateDirectory, runTag: runTag, registry: registry,
                clock: clock, logger: logger, stall: StallPolicy(fill: channel.stall, slate: loaded.slate), keyring: keyring,
                durable: durable)
        case .pull(let source):
            return try PullChannelSource(
                channel: channel, source: source, stateDirectory: stateDirectory, runTag: runTag, registry: registry,
                clock: clock, logger: logger, httpClient: httpClient,
                stall: StallPolicy(fill: channel.stall, slate: loaded.slate), keyring: keyring, durable: durable)
        }
    }

    private func loopPublisher(
        _ channel: HeadwaterConfiguration.Channel, _ loaded: ChannelSupervisor.Loaded, logger: Logger
    ) throws -> LoopChannelPublisher? {
        guard let package = loaded.packages[channel.name] else { return nil }
        let loop = LoopChannel(
            name: channel.name, package: package, windowSeconds: channel.windowSeconds, startedAt: clock.now(),
            keying: try keyring.keying(for: channel))
        return try LoopChannelPublisher(
            channel: loop, registry: registry, clock: clock, logger: logger, stateDirectory: stateDirectory)
    }
}
