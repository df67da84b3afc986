public import HeadwaterHLS
public import NIOCore

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
    /// Where a media playlist ends in segments and parts, for blocking reloads (`nil` for a
    /// multivariant playlist, or one that lists nothing).
    public var edge: PlaylistEdge?
    /// The Playlist Delta Updates of this version (`_HLS_skip`, F14/F15), rendered with it; `nil`
    /// when the playlist offers none (no CAN-SKIP-UNTIL).
    public var deltas: DeltaUpdates?
    /// The URI of this version's `EXT-X-PRELOAD-HINT:TYPE=PART` as written (relative to the
    /// playlist), `nil` without one: a request for it is held until the part is published
    /// (HLS-RULES F5), where any other unlisted name is a 404.
    public var hintedPart: String?

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

/// The delta updates of one playlist version: `_HLS_skip=YES`, and `_HLS_skip=v2` when the playlist
/// skips date ranges too (CAN-SKIP-DATERANGES=YES); else `v2` is answered like `YES` (F15 leaves it
/// unspecified, and skipping only segments is always correct). A class: a playlist value carries it
/// by reference, rendered once.
public final class DeltaUpdates: Sendable {
    public let segments: RenderedPlaylist
    public let segmentsAndDateRanges: RenderedPlaylist?

    public init(segments: RenderedPlaylist, segmentsAndDateRanges: RenderedPlaylist?) {
        self.segments = segments
        self.segmentsAndDateRanges = segmentsAndDateRanges
    }
}
