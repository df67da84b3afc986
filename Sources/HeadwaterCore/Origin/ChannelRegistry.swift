import NIOConcurrencyHelpers

/// The current snapshot of every channel. Publishers replace a channel's snapshot atomically;
/// readers copy it out under a short lock and never hold it across work (STYLE.md §8.7).
public final class ChannelRegistry: OriginContent {
    private let snapshots: NIOLockedValueBox<[String: ChannelSnapshot]>

    public init() { self.snapshots = NIOLockedValueBox([:]) }

    public func snapshot(of channel: String) -> ChannelSnapshot? {
        snapshots.withLockedValue { $0[channel] }
    }

    public var channelNames: [String] { snapshots.withLockedValue { $0.keys.sorted() } }

    /// Publishes `snapshot` as the current version of its channel.
    public func publish(_ snapshot: ChannelSnapshot) {
        snapshots.withLockedValue { $0[snapshot.name] = snapshot }
    }

    /// Removes a channel (config reload).
    public func remove(_ channel: String) {
        _ = snapshots.withLockedValue { $0.removeValue(forKey: channel) }
    }
}
