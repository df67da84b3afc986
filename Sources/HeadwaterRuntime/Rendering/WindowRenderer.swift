public import HeadwaterLiveWindow

/// Turns a live window's versions into channel snapshots, rendering (and compressing) each playlist
/// once per version: a playlist whose version did not change keeps the bytes rendered before.
/// One per channel, kept beside its window and used under the same lock.
public struct WindowRenderer: Sendable {
    private var media: [String: (version: UInt64, playlist: RenderedPlaylist)] = [:]
    private var multivariant: (version: UInt64, playlist: RenderedPlaylist)?
    private let metrics: OriginMetrics

    /// - Parameter metrics: where each render is counted (`headwater_playlist_renders_total`).
    public init(metrics: OriginMetrics) {
        self.metrics = metrics
    }

    /// The snapshot of `version`, rendering only the playlists whose version is new.
    public mutating func snapshot(of version: WindowVersion) -> ChannelSnapshot {
        var playlists: [String: RenderedPlaylist] = [:]
        for (name, playlist) in version.media {
            if let kept = media[name], kept.version == playlist.version {
                playlists[name] = kept.playlist
                continue
            }
            let rendered = PlaylistRendering.render(
                playlist.model, tag: playlist.tag, version: playlist.version, publishedAt: version.publishedAt)
            metrics.playlistRendered(.media)
            media[name] = (playlist.version, rendered)
            playlists[name] = rendered
        }
        var renderedMultivariant: RenderedPlaylist?
        if let wanted = version.multivariant {
            if let kept = multivariant, kept.version == wanted.version {
                renderedMultivariant = kept.playlist
            } else {
                let rendered = PlaylistRendering.render(
                    wanted.model, tag: wanted.tag, version: wanted.version, publishedAt: version.publishedAt)
                metrics.playlistRendered(.multivariant)
                multivariant = (wanted.version, rendered)
                renderedMultivariant = rendered
            }
        }
        return ChannelSnapshot(
            name: version.channel, state: version.state, multivariant: renderedMultivariant, mediaPlaylists: playlists,
            segments: version.segments, targetDuration: version.targetDuration, status: version.status,
            content: version.content)
    }
}
