
/// How a channel whose window Headwater keeps reacts when its source delivers nothing for 1½
/// target durations (RFC 8216 §6.2.2: a new playlist version every ½–1½ target durations).
public struct StallPolicy: Sendable, Hashable {
    /// What keeps a stalled channel's playlist advancing (a channel's `stall` setting).
    public enum Fill: String, Sendable, Hashable, CaseIterable {
        /// Slate segments, then a discontinuity back to the source.
        case slate
        /// `EXT-X-GAP` segments of one target duration.
        case gap
        /// Nothing: the playlist stops advancing (the channel is still marked degraded).
        case none
    }

    public var fill: Fill
    /// Slate segments for `fill: slate` (without them, slate falls back to gap).
    public var slate: SlateLibrary?

    public init(fill: Fill = .none, slate: SlateLibrary? = nil) {
        self.fill = fill
        self.slate = slate
    }
}

/// Slate media, one rendition per quality: a channel rendition gets the slate rendition of the
/// same name, else the one of the same resolution, else (audio-only renditions) the audio-only
/// one, else the first video one. Segments must round to at most the channel's target duration.
public struct SlateLibrary: Sendable, Hashable {
    public struct Rendition: Sendable, Hashable {
        public var name: String
        public var segments: [PackagedSegment]
        public var resolution: String?

        public init(name: String, segments: [PackagedSegment], resolution: String?) {
            self.name = name
            self.segments = segments
            self.resolution = resolution
        }

        var isAudioOnly: Bool { resolution == nil }
    }

    public var renditions: [Rendition]

    public init(renditions: [Rendition]) { self.renditions = renditions }

    /// The slate rendition for a channel rendition named `name` whose media has `resolution`
    /// (`nil` when unknown or audio only) and is audio only or not.
    func rendition(for name: String, resolution: String?, audioOnly: Bool) -> Rendition? {
        let usable = renditions.filter { !$0.segments.isEmpty }
        if let same = usable.first(where: { $0.name == name }) { return same }
        if let resolution, let same = usable.first(where: { $0.resolution == resolution }) { return same }
        if audioOnly { return usable.first(where: \.isAudioOnly) }
        return usable.first(where: { !$0.isAudioOnly }) ?? usable.first
    }

    /// Every slate file: never deleted by a window (they belong to `Public/`).
    var paths: Set<String> { Set(renditions.flatMap { $0.segments.map(\.file.path) }) }
}
