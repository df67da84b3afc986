public import HeadwaterHLS

/// One media segment of an ad creative or of the slate, in one rendition.
public struct CreativeSegment: Sendable, Hashable {
    /// The URI written in stitched playlists, as given (relative URIs resolve against the stitched
    /// playlist's URL, so they are usually absolute or root-relative, e.g. `/ads/a/video/0.ts`).
    public var uri: String
    /// The EXTINF: the segment's exact media duration.
    public var duration: HLSDuration
    /// A sub-range of `uri`, with an explicit offset (a stitched neighbour is never the same resource).
    public var byteRange: ByteRange?

    public init(uri: String, duration: HLSDuration, byteRange: ByteRange? = nil) {
        self.uri = uri
        self.duration = duration
        self.byteRange = byteRange
    }
}

/// A creative in one rendition: its segments and, for fMP4, its initialization section.
public struct CreativeRendition: Sendable, Hashable {
    /// `EXT-X-MAP` of the creative's segments (fMP4), `nil` for MPEG-TS.
    public var map: MediaInitializationSection?
    public var segments: [CreativeSegment]

    public init(map: MediaInitializationSection? = nil, segments: [CreativeSegment]) {
        self.map = map
        self.segments = segments
    }

    /// Σ EXTINF.
    public var duration: HLSDuration { segments.reduce(.zero) { $0 + $1.duration } }
}

/// An ad creative (or the slate): a short VOD asset packaged once per content rendition, with the
/// same segmentation (segment count and EXTINFs) in every rendition, so that a player can switch
/// variants inside an ad and alternate audio stays aligned with video (DESIGN invariant 3).
public struct Creative: Sendable, Hashable, Identifiable {
    public var id: String
    /// By content rendition name (the `{rendition}` of `/live/{channel}/{rendition}.m3u8`).
    public var renditions: [String: CreativeRendition]

    public init(id: String, renditions: [String: CreativeRendition]) {
        self.id = id
        self.renditions = renditions
    }

    /// The creative's duration: that of its first rendition in name order (all renditions agree
    /// once ``AdRuleSet/validate(renditions:targetDuration:maximumSegmentDuration:)`` accepted them).
    public var duration: HLSDuration {
        guard let name = renditions.keys.min() else { return .zero }
        return renditions[name]!.duration
    }
}
