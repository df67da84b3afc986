import Foundation
public import HeadwaterRuntime
public import Logging
public import ServiceLifecycle

/// Publishes a ``LoopChannel``'s snapshot to the registry each time a segment completes, until
/// graceful shutdown. Each version is rendered (and gzip-compressed) once, here, not per request.
public final class LoopChannelPublisher: Service {
    private let channel: LoopChannel
    private let registry: ChannelRegistry
    private let clock: any WallClock
    private let logger: Logger
    private let metrics: OriginMetrics
    private let encryption: SegmentEncryption?

    /// - Parameter stateDirectory: where an encrypted channel keeps its encrypted segments.
    public init(
        channel: LoopChannel, registry: ChannelRegistry, clock: any WallClock, logger: Logger,
        metrics: OriginMetrics = .shared, stateDirectory: String? = nil
    ) throws {
        self.metrics = metrics
        if let keying = channel.keying {
            let base = stateDirectory ?? NSTemporaryDirectory()
            self.encryption = try SegmentEncryption(
                keying: keying, directory: "\(base)/encrypted-\(channel.name)", logger: logger)
        } else {
            self.encryption = nil
        }
        self.channel = channel
        self.registry = registry
        self.clock = clock
        self.logger = logger
    }

    /// Publishes the snapshot for the current instant; returns when the next one is due (µs): the end
    /// of the next part of a low-latency channel, else of the next segment.
    @discardableResult
    public func publishNow() -> Int64 {
        let now = clock.now()
        var snapshot = channel.snapshot(at: now)
        if let encryption { snapshot = encryption.encrypt(snapshot) }
        for _ in snapshot.mediaPlaylists { metrics.playlistRendered(.media) }
        registry.publish(snapshot)
        return channel.nextPublication(after: now)
    }

    public func run() async throws {
        logger.info(
            "channel is live", metadata: ["hls.channel.id": "\(channel.name)", "hls.renditions": "\(channel.package.renditions.count)"])
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    let due = self.publishNow()
                    let delay = max(1_000, due - self.clock.now())
                    try await Task.sleep(for: .microseconds(delay))
                }
            }
        } catch is CancellationError {
            // Graceful shutdown cancels the sleep: stopping is the expected outcome, not an error.
        }
        logger.info("channel stopped", metadata: ["hls.channel.id": "\(channel.name)"])
    }
}
