public import HeadwaterLiveWindow

/// What the HTTP layer can ask of one channel at one instant: an immutable snapshot. Readers never
/// lock beyond fetching the current snapshot; the publisher replaces it with the next version.
public struct ChannelSnapshot: Sendable {
    public typealias State = ChannelState

    public var name: String
    public var state: State
    /// The multivariant playlist (`/live/{channel}/master.m3u8`), with media URIs relative to it.
    public var multivariant: RenderedPlaylist?
    /// Media playlists by rendition name (`/live/{channel}/{rendition}.m3u8`).
    public var mediaPlaylists: [String: RenderedPlaylist]
    /// I-frame playlists by rendition name (`/live/{channel}/{rendition}.iframes.m3u8`): those of
    /// the video renditions whose segments have key frames, when the channel is not encrypted.
    public var iFramePlaylists: [String: RenderedPlaylist] = [:]
    /// How the channel is encrypted, `nil` when it is clear.
    public var keying: ChannelKeying?
    /// The key indexes of the segments that can be fetched now: the keys `/keys/…` serves.
    public var keyIndexes: ClosedRange<UInt64>?
    /// The segments that can be fetched now, by rendition name and then segment name: every listed
    /// segment plus those removed recently enough to stay fetchable (HLS-RULES C7).
    public var segments: [String: [String: SegmentFile]]
    /// Target duration, for cache lifetimes of errors and not-yet-available segments.
    public var targetDuration: Int
    /// What the status page and `/api/status` show of this version.
    public var status: ChannelStatus
    /// The playlists behind ``multivariant`` and ``mediaPlaylists`` as values, for per-viewer
    /// stitching (`/ssai/…`); `nil` for a source that does not provide them.
    public var content: ChannelContent?
    /// What per-viewer stitching needs of this version, when the channel stitches ads: set by
    /// ``ChannelRegistry/publish(_:)`` from this very version (``BreakLog``'s contract), so a
    /// stitched playlist rendered from one snapshot is always consistent.
    public var stitching: StitchingInput?

    public init(
        name: String, state: State, multivariant: RenderedPlaylist?, mediaPlaylists: [String: RenderedPlaylist],
        segments: [String: [String: SegmentFile]], targetDuration: Int, status: ChannelStatus? = nil,
        content: ChannelContent? = nil
    ) {
        self.content = content
        self.name = name
        self.state = state
        self.multivariant = multivariant
        self.mediaPlaylists = mediaPlaylists
        self.segments = segments
        self.targetDuration = targetDuration
        self.status = status ?? ChannelStatus(source: "unknown", targetDuration: targetDuration, windowSeconds: 0)
    }
}
