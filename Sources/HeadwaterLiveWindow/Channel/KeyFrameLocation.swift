public import HeadwaterMedia

/// Where a transport stream segment's first key frame lies: what its I-frame playlist entry lists
/// (``IFramePlaylist``). Found once, when the segment is stored or a package is loaded, and kept
/// with its ``SegmentFile``, so an I-frame playlist is made from values, never by reading media.
public struct KeyFrameLocation: Sendable, Hashable {
    /// The segment's PAT and PMT, from byte 0: the entry's `EXT-X-MAP` byte range.
    public var initialization: Range<Int>
    /// The key frame's PES packets (never the PAT and PMT, HLS-RULES B19): its `EXT-X-BYTERANGE`.
    public var frame: Range<Int>
    /// The video stream: the I-frame variant's CODECS and RESOLUTION.
    public var video: VideoInfo

    public init(initialization: Range<Int>, frame: Range<Int>, video: VideoInfo) {
        self.initialization = initialization
        self.frame = frame
        self.video = video
    }

    /// The first key frame of an indexed segment; `nil` when it has none or no PAT and PMT before it.
    public init?(_ index: IFrameIndex) {
        guard let first = index.entries.first, let tables = index.initializationSection else { return nil }
        self.init(initialization: tables, frame: first.range, video: index.video)
    }

    /// Finds the first key frame of `bytes`, a whole MPEG-TS segment whose probe is `probe`.
    public init?(transportStream bytes: [UInt8], probe: SegmentProbe) {
        guard let index = IFrameIndex(transportStream: bytes, probe: probe) else { return nil }
        self.init(index)
    }

    /// The bytes a player fetches for the entry: the tables and the frame.
    public var byteCount: Int { initialization.count + frame.count }
}
