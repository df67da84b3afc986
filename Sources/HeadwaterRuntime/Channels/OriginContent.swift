/// The origin's content as the HTTP layer sees it. Implemented by ``ChannelRegistry``; tests provide
/// their own.
public protocol OriginContent: Sendable {
    /// The current snapshot of `channel`, or `nil` if there is no such channel.
    func snapshot(of channel: String) -> ChannelSnapshot?
    /// Names of all configured channels.
    var channelNames: [String] { get }
    /// Grows with every snapshot published (of any channel), so a reader that kept something
    /// derived from a snapshot knows it is still current without fetching it again; `nil` if the
    /// content does not count (readers then fetch every time).
    var publishCount: UInt64? { get }
    /// Calls `observer` with a channel's name after each snapshot of it is published (or the channel
    /// removed), on the publishing thread: how requests held for a later version learn of it.
    func observePublishes(_ observer: @escaping @Sendable (String) -> Void)
}

extension OriginContent {
    public var publishCount: UInt64? { nil }
    /// Content that never changes has nothing to tell.
    public func observePublishes(_ observer: @escaping @Sendable (String) -> Void) {}
}
