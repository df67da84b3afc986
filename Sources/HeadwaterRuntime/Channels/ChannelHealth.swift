public import HeadwaterLiveWindow

extension ChannelHealth {
    /// The health of `snapshot` at `now` (µs since the epoch), from `status.lastSegmentAt`.
    public init(_ snapshot: ChannelSnapshot, now: Int64) {
        self.init(
            name: snapshot.name, state: snapshot.state, targetDuration: snapshot.targetDuration,
            liveEdgeAge: snapshot.status.lastSegmentAt.map { max(0, now - $0) })
    }

    /// A configured channel with no snapshot at all: starting.
    public init(missing name: String) {
        self.init(name: name, state: .starting, targetDuration: 0, liveEdgeAge: nil)
    }

    /// The health of every channel of `content`, by name.
    public static func all(_ content: any OriginContent, now: Int64) -> [ChannelHealth] {
        content.channelNames.map { name in
            content.snapshot(of: name).map { ChannelHealth($0, now: now) } ?? ChannelHealth(missing: name)
        }
    }
}
