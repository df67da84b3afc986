public import NIOCore
import HeadwaterStitching

/// One version of a playlist as it goes on the wire: the bytes, their gzip form, and the validators
/// and cache lifetime. Rendered and compressed once per version by the channel's publisher, then
/// shared read-only by every request (DESIGN.md "Rendering the shared playlist happens once per
/// version, not once per request").
public struct RenderedPlaylist: Sendable {
    /// The identity body.
    public var body: ByteBuffer
    /// The gzip body (`Content-Encoding: gzip`).
    public var gzipBody: ByteBuffer
    /// Strong ETag of the identity body, quoted (`"demo-v0-v42"`).
    public var entityTag: String
    /// Strong ETag of the gzip body, distinct from the identity one.
    public var gzipEntityTag: String
    /// When this version was published (Unix seconds), for `Last-Modified`.
    public var lastModified: Int64
    /// The target duration the cache lifetime derives from; `nil` for a multivariant playlist.
    public var targetDuration: Int?

    public init(
        body: ByteBuffer, gzipBody: ByteBuffer, entityTag: String, gzipEntityTag: String, lastModified: Int64,
        targetDuration: Int?
    ) {
        self.body = body
        self.gzipBody = gzipBody
        self.entityTag = entityTag
        self.gzipEntityTag = gzipEntityTag
        self.lastModified = lastModified
        self.targetDuration = targetDuration
    }
}

/// A media segment file the origin can send with `sendfile`: immutable once listed.
public struct SegmentFile: Sendable, Hashable {
    /// Absolute path on disk.
    public var path: String
    /// Size in bytes.
    public var length: Int64
    /// Strong ETag, quoted. Stable for the life of the segment (its bytes never change).
    public var entityTag: String
    /// `Content-Type`, e.g. `video/mp2t`.
    public var contentType: String
    /// Unix seconds, for `Last-Modified`.
    public var lastModified: Int64

    public init(path: String, length: Int64, entityTag: String, contentType: String, lastModified: Int64) {
        self.path = path
        self.length = length
        self.entityTag = entityTag
        self.contentType = contentType
        self.lastModified = lastModified
    }
}

/// What the HTTP layer can ask of one channel at one instant: an immutable snapshot. Readers never
/// lock beyond fetching the current snapshot; the publisher replaces it with the next version.
public struct ChannelSnapshot: Sendable {
    public enum State: Sendable, Hashable {
        /// Not live yet (no segment published): playlists answer 503.
        case starting
        case live
        /// The source stalled past 1½ target durations (issue: operations).
        case degraded(reason: String)
    }

    public var name: String
    public var state: State
    /// The multivariant playlist (`/live/{channel}/master.m3u8`), with media URIs relative to it.
    public var multivariant: RenderedPlaylist?
    /// Media playlists by rendition name (`/live/{channel}/{rendition}.m3u8`).
    public var mediaPlaylists: [String: RenderedPlaylist]
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
