public import HeadwaterHLS

/// A segment of packaged media on disk (a loop channel's package, the slate): its file and the
/// duration its playlist lists.
public struct PackagedSegment: Sendable, Hashable {
    public var file: SegmentFile
    public var duration: HLSDuration

    public init(file: SegmentFile, duration: HLSDuration) {
        self.file = file
        self.duration = duration
    }
}
