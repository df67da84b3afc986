public import HeadwaterHLS

/// One version of a live window as values: the playlists it lists, the segments that can be fetched,
/// and what the status page shows. The runtime turns it into bytes (rendered and compressed once
/// per playlist version), so this target never touches buffers, compression or metrics.
public struct WindowVersion: Sendable {
    /// A playlist and the version that identifies it: for a media playlist its last media sequence
    /// number, for the multivariant playlist a count of its changes. Both only grow, so a renderer
    /// that kept the bytes of an equal version can reuse them.
    public struct Versioned<Model: Sendable>: Sendable {
        public var model: Model
        /// Names the resource in its ETag (`"demo-v0-{run}"`).
        public var tag: String
        public var version: UInt64

        public init(model: Model, tag: String, version: UInt64) {
            self.model = model
            self.tag = tag
            self.version = version
        }
    }

    public typealias Playlist = Versioned<MediaPlaylist>
    public typealias Multivariant = Versioned<MultivariantPlaylist>

    public var channel: String
    public var state: ChannelState
    /// `nil` until a rendition is live.
    public var multivariant: Multivariant?
    /// Live renditions' playlists, by rendition name.
    public var media: [String: Playlist]
    /// I-frame playlists of the live video renditions, by rendition name, with the version of their
    /// media playlist (``IFramePlaylist``).
    public var iFrames: [String: Playlist] = [:]
    /// What can be fetched now, by rendition and segment name (HLS-RULES C7).
    public var segments: [String: [String: SegmentFile]]
    public var targetDuration: Int
    public var status: ChannelStatus
    /// When this version was made, Unix seconds (`Last-Modified` of what it renders).
    public var publishedAt: Int64

    public init(
        channel: String, state: ChannelState, multivariant: Multivariant?, media: [String: Playlist],
        segments: [String: [String: SegmentFile]], targetDuration: Int, status: ChannelStatus, publishedAt: Int64
    ) {
        self.channel = channel
        self.state = state
        self.multivariant = multivariant
        self.media = media
        self.segments = segments
        self.targetDuration = targetDuration
        self.status = status
        self.publishedAt = publishedAt
    }

    /// The playlists as values, for per-viewer stitching; `nil` while nothing is live.
    public var content: ChannelContent? {
        media.isEmpty ? nil : ChannelContent(multivariant: multivariant?.model, media: media.mapValues(\.model))
    }
}
