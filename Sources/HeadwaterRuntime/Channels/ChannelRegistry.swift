import NIOConcurrencyHelpers
import Synchronization

/// The current snapshot of every channel. Publishers replace a channel's snapshot atomically;
/// readers copy it out under a short lock and never hold it across work (STYLE.md §8.7).
public final class ChannelRegistry: OriginContent {
    private let snapshots: NIOLockedValueBox<[String: ChannelSnapshot]>
    private let breaks: NIOLockedValueBox<[String: ChannelBreaks]>
    private let publishes = Atomic<UInt64>(0)
    /// Each snapshot's ``ChannelSnapshot/stitching``, apart: read per stitched playlist request
    /// without copying the snapshot.
    private let stitchings: NIOLockedValueBox<[String: StitchingInput]>
    private let observers = NIOLockedValueBox<[@Sendable (String) -> Void]>([])

    public init() {
        self.snapshots = NIOLockedValueBox([:])
        self.breaks = NIOLockedValueBox([:])
        self.stitchings = NIOLockedValueBox([:])
    }

    public func snapshot(of channel: String) -> ChannelSnapshot? {
        snapshots.withLockedValue { $0[channel] }
    }

    /// What stitching needs of `channel`'s current snapshot (``ChannelSnapshot/stitching``), without
    /// copying the rest of it: per stitched playlist request. `nil` when the channel is unknown or
    /// does not stitch (ask ``snapshot(of:)`` why).
    public func stitching(of channel: String) -> StitchingInput? {
        stitchings.withLockedValue { $0[channel] }
    }

    public var channelNames: [String] { snapshots.withLockedValue { $0.keys.sorted() } }

    /// Publishes `snapshot` as the current version of its channel. When the channel stitches ads,
    /// its break log is first brought up to date with this version and published with it.
    public func publish(_ snapshot: ChannelSnapshot) {
        var snapshot = snapshot
        if let content = snapshot.content, let desk = breaks(of: snapshot.name) {
            snapshot.stitching = desk.advance(with: content)
        }
        snapshots.withLockedValue { $0[snapshot.name] = snapshot }
        stitchings.withLockedValue { $0[snapshot.name] = snapshot.stitching }
        publishes.add(1, ordering: .releasing)
        notify(snapshot.name)
    }

    public func observePublishes(_ observer: @escaping @Sendable (String) -> Void) {
        observers.withLockedValue { $0.append(observer) }
    }

    private func notify(_ channel: String) {
        for observer in observers.withLockedValue({ $0 }) { observer(channel) }
    }

    public var publishCount: UInt64? { publishes.load(ordering: .acquiring) }

    /// The ad breaks of `channel`, when it stitches ads.
    public func breaks(of channel: String) -> ChannelBreaks? {
        breaks.withLockedValue { $0[channel] }
    }

    /// Makes `channel` stitch ads with `desk` (or stop, with `nil`) from its next published version.
    public func setBreaks(_ desk: ChannelBreaks?, for channel: String) {
        breaks.withLockedValue { $0[channel] = desk }
    }

    /// Removes a channel (config reload).
    public func remove(_ channel: String) {
        _ = snapshots.withLockedValue { $0.removeValue(forKey: channel) }
        _ = stitchings.withLockedValue { $0.removeValue(forKey: channel) }
        _ = breaks.withLockedValue { $0.removeValue(forKey: channel) }
        publishes.add(1, ordering: .releasing)
        notify(channel)
    }
}
