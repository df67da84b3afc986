public import HeadwaterHLS

/// A viewer session, as carried in its signed token: nothing about it is stored on the server.
public struct ViewerSession: Sendable, Hashable {
    /// Unique per session (the token's id, or `X-Playback-Session-Id`); seeds the pod rotation.
    public var id: String
    /// When the session started. Breaks that started before it are not stitched for it (it sees the
    /// channel's own content there, see ``Stitcher``); breaks from then on are.
    public var startDate: ProgramDateTime
    /// Targeting attributes (query parameters such as `device=tv`) that ad rules match on.
    public var targeting: [String: String]

    public init(id: String, startDate: ProgramDateTime, targeting: [String: String] = [:]) {
        self.id = id
        self.startDate = startDate
        self.targeting = targeting
    }
}
