import HeadwaterCore
import Logging
import ServiceLifecycle

/// The composition root for channel sources other than push: makes the service that runs a
/// channel of the configuration (used at start and on every reload).
struct ChannelSources: Sendable {
    let registry: ChannelRegistry
    let clock: any WallClock
    let logger: Logger
    /// Where sources that store files keep them.
    let stateDirectory: String

    /// The service for `channel`, or `nil` when push ingest runs it.
    func make(_ channel: HeadwaterConfiguration.Channel, _ loaded: ChannelSupervisor.Loaded) throws -> (any Service)? {
        let logger = self.logger.with(metadataKey: "hls.channel.id", value: "\(channel.name)")
        switch channel.source {
        case .loop:
            guard let publisher = loopPublisher(channel, loaded, logger: logger) else { return nil }
            publisher.publishNow()  // live before the first request
            return publisher
        case .push:
            return nil
        case .directory, .pull:
            logger.error("this build cannot run \(channel.source.typeName) sources yet")
            return nil
        }
    }

    /// Publishes a loop channel's first snapshot now (before the server accepts requests).
    func publishNow(_ channel: HeadwaterConfiguration.Channel, _ loaded: ChannelSupervisor.Loaded) {
        if case .loop = channel.source { loopPublisher(channel, loaded, logger: logger)?.publishNow() }
    }

    private func loopPublisher(
        _ channel: HeadwaterConfiguration.Channel, _ loaded: ChannelSupervisor.Loaded, logger: Logger
    ) -> LoopChannelPublisher? {
        guard let package = loaded.packages[channel.name] else { return nil }
        let loop = LoopChannel(
            name: channel.name, package: package, windowSeconds: channel.windowSeconds, startedAt: clock.now())
        return LoopChannelPublisher(channel: loop, registry: registry, clock: clock, logger: logger)
    }
}
