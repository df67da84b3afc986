public import HeadwaterHLS
import NIOCore

/// Turns playlist values into ``RenderedPlaylist``s: serialized and gzip-compressed once per version.
/// Pure apart from the allocation: whoever renders counts the render (``OriginMetrics/playlistRendered(_:)``).
public enum PlaylistRendering {
    /// Renders a media playlist. `tag` identifies the resource in the ETag (`"demo-v0-…"`); the
    /// version (the last media sequence number, monotonic) completes it.
    ///
    /// EXT-X-VERSION is set here, for every producer: what the playlist's features require, and at
    /// least 3, because the serializer writes EXTINF in decimal form (A8/A9, §4.4.4.1).
    public static func render(
        _ playlist: MediaPlaylist, tag: String, version: UInt64, publishedAt: Int64
    ) -> RenderedPlaylist {
        var playlist = playlist.datingOnlyCompleteSegments
        playlist.version = max(playlist.version ?? 0, 3, PlaylistValidator.requiredVersion(playlist).version)
        var rendered = render(PlaylistSerializer.serialize(playlist), tag: tag, version: version, publishedAt: publishedAt,
            targetDuration: playlist.targetDuration)
        rendered.edge = PlaylistEdge(playlist)
        rendered.hintedPart = playlist.preloadHints.first { $0.type == "PART" }?.uri
        rendered.deltas = deltas(of: playlist, tag: tag, version: version, publishedAt: publishedAt)
        return rendered
    }

    /// The delta updates of `playlist` (F14, F15), when it advertises CAN-SKIP-UNTIL: rendered with the
    /// full playlist, once per version. Its date ranges are all taken as recent and none as removed:
    /// exact for playlists without date ranges (the loop channel's shared ones), safe for others (a
    /// range sent again is redundant; one left out would be lost).
    static func deltas(of playlist: MediaPlaylist, tag: String, version: UInt64, publishedAt: Int64) -> DeltaUpdates? {
        func rendered(_ kind: PlaylistDeltaUpdate.Kind, _ suffix: String) -> RenderedPlaylist? {
            PlaylistDeltaUpdate.make(playlist, kind: kind).map { delta in
                var delta = delta
                delta.version = max(delta.version ?? 0, 3)
                return render(PlaylistSerializer.serialize(delta), tag: "\(tag)-\(suffix)", version: version,
                    publishedAt: publishedAt, targetDuration: playlist.targetDuration)
            }
        }
        guard let segments = rendered(.segments, "skip") else { return nil }
        let withDateRanges = playlist.serverControl?.canSkipDateRanges == true ? rendered(.segmentsAndDateRanges, "skip2") : nil
        return DeltaUpdates(segments: segments, segmentsAndDateRanges: withDateRanges)
    }

    /// Renders a multivariant playlist.
    public static func render(_ playlist: MultivariantPlaylist, tag: String, version: UInt64, publishedAt: Int64)
        -> RenderedPlaylist
    {
        return render(PlaylistSerializer.serialize(playlist), tag: tag, version: version, publishedAt: publishedAt,
            targetDuration: nil)
    }

    static func render(_ bytes: [UInt8], tag: String, version: UInt64, publishedAt: Int64, targetDuration: Int?)
        -> RenderedPlaylist
    {
        let gzip = Gzip.compress(bytes) ?? bytes
        let allocator = ByteBufferAllocator()
        var body = allocator.buffer(capacity: bytes.count)
        body.writeBytes(bytes)
        var gzipBody = allocator.buffer(capacity: gzip.count)
        gzipBody.writeBytes(gzip)
        return RenderedPlaylist(
            body: body, gzipBody: gzipBody, entityTag: "\"\(tag)-\(version)\"", gzipEntityTag: "\"\(tag)-\(version)-gz\"",
            lastModified: publishedAt, targetDuration: targetDuration)
    }
}
