public import HeadwaterLiveWindow
public import HeadwaterStitching

/// One version of a channel as the stitcher sees it: the content playlists with root-relative URIs
/// (a stitched playlist is served from `/ssai/{channel}/`, its content segments stay the shared
/// `/live/{channel}/…` URLs), and the break log as of this version.
///
/// A reference to one immutable version (copied per request for a single retain), which also holds
/// the stitched playlists prepared from it (``StitchCache``): they live and die with the version.
public struct StitchingInput: Sendable {
    let cache: StitchCache

    public init(content: ChannelContent, breaks: BreakLog) {
        self.cache = StitchCache(content: content, log: breaks)
    }

    public var content: ChannelContent { cache.content }
    public var breaks: BreakLog { cache.log }
}
