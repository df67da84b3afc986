/// A media segment file the origin can send with `sendfile`: immutable once listed.
public struct SegmentFile: Sendable, Hashable {
    /// Absolute path on disk.
    public var path: String
    /// Size in bytes.
    public var length: Int64
    /// Strong ETag, quoted. Stable for the life of the segment (its bytes never change).
    public var entityTag: String
    /// `Content-Type`, e.g. `video/mp2t`.
    public var contentType: String
    /// Unix seconds, for `Last-Modified`.
    public var lastModified: Int64
    /// The first key frame of an MPEG-TS segment with video, for I-frame playlists; `nil` for
    /// other media, audio-only segments and encrypted bytes.
    public var keyFrame: KeyFrameLocation?

    public init(
        path: String, length: Int64, entityTag: String, contentType: String, lastModified: Int64,
        keyFrame: KeyFrameLocation? = nil
    ) {
        self.keyFrame = keyFrame
        self.path = path
        self.length = length
        self.entityTag = entityTag
        self.contentType = contentType
        self.lastModified = lastModified
    }
}
