public import HeadwaterLiveWindow

/// Turns a live window's versions into channel snapshots, rendering (and compressing) each playlist
/// once per version: a playlist whose version did not change keeps the bytes rendered before.
/// One per channel, kept beside its window and used under the same lock.
public struct WindowRenderer: Sendable {
    private typealias Kept = (version: UInt64, playlist: RenderedPlaylist)
    private var media: [String: Kept] = [:]
    private var iFrames: [String: Kept] = [:]
    private var multivariant: Kept?
    private let metrics: OriginMetrics

    /// - Parameter metrics: where each render is counted (`headwater_playlist_renders_total`).
    public init(metrics: OriginMetrics) {
        self.metrics = metrics
    }

    /// The snapshot of `version`, rendering only the playlists whose version is new.
    public mutating func snapshot(of version: WindowVersion) -> ChannelSnapshot {
        let publishedAt = version.publishedAt
        var playlists: [String: RenderedPlaylist] = [:]
        for (name, playlist) in version.media {
            playlists[name] = reuse(&media[name], playlist, .media) {
                PlaylistRendering.render($0.model, tag: $0.tag, version: $0.version, publishedAt: publishedAt)
            }
        }
        var iFramePlaylists: [String: RenderedPlaylist] = [:]
        for (name, playlist) in version.iFrames {
            iFramePlaylists[name] = reuse(&iFrames[name], playlist, .media) {
                PlaylistRendering.render($0.model, tag: $0.tag, version: $0.version, publishedAt: publishedAt)
            }
        }
        let multivariant = version.multivariant.map { wanted in
            reuse(&self.multivariant, wanted, .multivariant) {
                PlaylistRendering.render($0.model, tag: $0.tag, version: $0.version, publishedAt: publishedAt)
            }
        }
        var snapshot = ChannelSnapshot(
            name: version.channel, state: version.state, multivariant: multivariant, mediaPlaylists: playlists,
            segments: version.segments, targetDuration: version.targetDuration, status: version.status,
            content: version.content)
        snapshot.iFramePlaylists = iFramePlaylists
        return snapshot
    }

    /// `kept`'s bytes when they are of `wanted`'s version, else `wanted` rendered (and counted) and kept.
    private func reuse<Model>(
        _ kept: inout Kept?, _ wanted: WindowVersion.Versioned<Model>, _ kind: OriginMetrics.PlaylistKind,
        render: (WindowVersion.Versioned<Model>) -> RenderedPlaylist
    ) -> RenderedPlaylist {
        if let kept, kept.version == wanted.version { return kept.playlist }
        let rendered = render(wanted)
        metrics.playlistRendered(kind)
        kept = (wanted.version, rendered)
        return rendered
    }
}
