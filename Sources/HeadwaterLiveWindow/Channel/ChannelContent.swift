public import HeadwaterHLS

/// One version of a channel's playlists as values — what the shared playlists were rendered from —
/// for the stitcher, which needs the model, not the bytes.
public struct ChannelContent: Sendable {
    /// The shared multivariant playlist; its media URIs are `{rendition}.m3u8`.
    public var multivariant: MultivariantPlaylist?
    /// Each rendition's live media playlist, by rendition name, with URIs as published under
    /// `/live/{channel}/` (usually relative).
    public var media: [String: MediaPlaylist]

    public init(multivariant: MultivariantPlaylist?, media: [String: MediaPlaylist]) {
        self.multivariant = multivariant
        self.media = media
    }

    /// The same playlists with every relative URI (segments, EXT-X-MAP, EXT-X-KEY) made root-relative
    /// under `base` (e.g. `/live/demo/`): a stitched playlist is served from `/ssai/{channel}/`,
    /// and its content segments must stay the shared, CDN-cached `/live/…` URLs.
    public func resolvingURIs(against base: String) -> ChannelContent {
        var copy = self
        for (name, playlist) in media { copy.media[name] = Self.resolving(playlist, against: base) }
        return copy
    }

    static func resolving(_ playlist: MediaPlaylist, against base: String) -> MediaPlaylist {
        var playlist = playlist
        for index in playlist.segments.indices {
            playlist.segments[index].uri = resolve(playlist.segments[index].uri, base)
            resolving(&playlist.segments[index].tags, against: base)
        }
        // Low latency: the open segment's parts and tags, and the hints.
        resolving(&playlist.trailingTags, against: base)
        playlist.preloadHints = playlist.preloadHints.map { hint in
            var hint = hint
            if let uri = hint.attributes.string("URI") { hint.attributes["URI"] = .quoted(resolve(uri, base)) }
            return hint
        }
        return playlist
    }

    /// The URIs of a segment's MAP, KEYs and parts under `base`.
    private static func resolving(_ tags: inout SegmentTags, against base: String) {
        if var map = tags.map {
            map.uri = resolve(map.uri, base)
            tags.map = map
        }
        let keys = tags.keys
        if !keys.isEmpty {
            tags.keys = keys.map { key in
                var key = key
                if let uri = key.uri { key.attributes["URI"] = .quoted(resolve(uri, base)) }
                return key
            }
        }
        let parts = tags.parts
        if !parts.isEmpty {
            tags.parts = parts.map { part in
                var part = part
                part.attributes["URI"] = .quoted(resolve(part.uri, base))
                return part
            }
        }
    }

    /// `uri` under `base` unless it is already absolute (`scheme:`) or root-relative (`/…`).
    static func resolve(_ uri: String, _ base: String) -> String {
        if uri.utf8.first == UInt8(ascii: "/") { return uri }
        for byte in uri.utf8 {
            if byte == UInt8(ascii: ":") { return uri }
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
        }
        return base + uri
    }
}
