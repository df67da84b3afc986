/// A multivariant playlist (RFC 8216bis §4.4.6): the variants and renditions of one presentation.
///
/// Written in a canonical order: header, session data and keys, content steering, renditions,
/// variants, I-frame variants; unknown tags keep their order at the end.
public struct MultivariantPlaylist: Sendable, Hashable {
    public var version: Int?
    /// `EXT-X-INDEPENDENT-SEGMENTS` (§4.4.2.1): applies to every media playlist.
    public var independentSegments: Bool = false
    public var start: StartPoint?
    public var definitions: [VariableDefinition] = []
    public var sessionData: [SessionData] = []
    public var sessionKeys: [SessionKey] = []
    public var contentSteering: ContentSteering?
    /// `EXT-X-MEDIA` tags.
    public var renditions: [Rendition] = []
    /// `EXT-X-STREAM-INF` tags with their URIs.
    public var variants: [VariantStream] = []
    /// `EXT-X-I-FRAME-STREAM-INF` tags.
    public var iFrameVariants: [IFrameVariantStream] = []
    public var unknownTags: [UnknownTag] = []

    public init(variants: [VariantStream] = [], renditions: [Rendition] = []) {
        self.variants = variants
        self.renditions = renditions
    }
}

/// Either kind of playlist; which one a document is follows from its tags (§4.1).
public enum Playlist: Sendable, Hashable {
    case media(MediaPlaylist)
    case multivariant(MultivariantPlaylist)
}
