public import HeadwaterStitching

/// One version of a channel as the stitcher sees it: the content playlists with root-relative URIs
/// (a stitched playlist is served from `/ssai/{channel}/`, its content segments stay the shared
/// `/live/{channel}/…` URLs), and the break log as of this version.
public struct StitchingInput: Sendable {
    public var content: ChannelContent
    public var breaks: BreakLog

    public init(content: ChannelContent, breaks: BreakLog) {
        self.content = content
        self.breaks = breaks
    }
}
