public import HeadwaterHLS

/// How one channel is encrypted and who gets its keys: what its playlists write in `EXT-X-KEY`,
/// which key each segment is under, and the policy ``KeyRequest`` applies at `/keys/…`.
public struct ChannelKeying: Sendable {
    /// Who may fetch a key through a `/live` playlist's key URI. A `/ssai` key URI always carries
    /// the viewer's session token, and the session entitles it.
    public enum Access: Sendable {
        /// Anyone (demos and tests).
        case open
        /// A key token (``KeyTokenSigner``) in the URI's `token` query or `Authorization: Bearer`.
        case token(KeyTokenSigner)
    }

    public let channel: String
    public let keys: ContentKeys
    /// Segments per key; 0 keeps key 0 for the channel's life.
    public let rotateEvery: UInt64
    public let access: Access

    public init(channel: String, keys: ContentKeys, rotateEvery: UInt64, access: Access) {
        self.channel = channel
        self.keys = keys
        self.rotateEvery = rotateEvery
        self.access = access
    }

    /// The key index segment `mediaSequence` is encrypted under.
    public func keyIndex(of mediaSequence: UInt64) -> UInt64 {
        ContentKeys.keyIndex(mediaSequence: mediaSequence, rotateEvery: rotateEvery)
    }

    /// `/keys/{channel}/{index}.key`: root-relative, so the same URI works from `/live` and `/ssai`.
    public func keyURI(index: UInt64) -> String { "/keys/\(channel)/\(index).key" }

    /// The `EXT-X-KEY` of segment `mediaSequence` of `rendition`: its key and its explicit IV.
    /// Written on every segment, since every segment has its own IV.
    public func keyTag(rendition: String, mediaSequence: UInt64) -> Key {
        Key(
            method: "AES-128", uri: keyURI(index: keyIndex(of: mediaSequence)),
            iv: keys.iv(channel: channel, rendition: rendition, mediaSequence: mediaSequence).bytes)
    }

    /// `playlist` (a media playlist of `rendition`, clear) with every segment's `EXT-X-KEY`.
    public func encrypting(_ playlist: MediaPlaylist, rendition: String) -> MediaPlaylist {
        var playlist = playlist
        for index in playlist.segments.indices {
            playlist.segments[index].tags.keys = [
                keyTag(rendition: rendition, mediaSequence: playlist.mediaSequenceNumber(at: index))
            ]
        }
        playlist.version = max(playlist.version ?? 1, PlaylistValidator.requiredVersion(playlist).version)
        return playlist
    }
}
