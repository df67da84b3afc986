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
}

extension OriginContent {
    public var publishCount: UInt64? { nil }
}
