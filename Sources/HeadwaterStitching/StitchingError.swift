public import HeadwaterHLS

/// Why a stitched playlist could not be rendered. Every case is a broken contract between the
/// stitcher's inputs (a rule set that was not validated, a rule set version dropped while a break
/// still pins it, a content version without dates): the caller should have rejected it earlier.
public enum StitchingError: Error, Hashable, CustomStringConvertible {
    /// The content is a Playlist Delta Update; stitch the full playlist.
    case deltaUpdate
    /// The content has no PROGRAM-DATE-TIME for this segment; breaks and dates need one.
    case contentWithoutDates(msn: UInt64)
    /// A break pins a rule-set version that was not passed in.
    case missingRuleSet(version: UInt64, breakID: String)
    case unknownCreative(String, ruleSetVersion: UInt64)
    case missingRendition(creative: String, rendition: String)
    case emptySlate(ruleSetVersion: UInt64)
    /// A creative segment whose EXTINF rounds above the content's target duration (B1).
    case exceedsTargetDuration(uri: String, duration: HLSDuration, targetDuration: Int)
    /// MPEG-TS content after fMP4 creatives: an EXT-X-MAP cannot be switched off again.
    case initializationSectionCannotBeCleared(msn: UInt64)
    /// The break log does not describe this content (its discontinuity numbering disagrees).
    case breakLogMismatch(msn: UInt64)

    public var description: String {
        switch self {
        case .deltaUpdate: return "the content is a delta update (EXT-X-SKIP); the stitcher needs the full playlist"
        case .contentWithoutDates(let msn):
            return "the content has no EXT-X-PROGRAM-DATE-TIME for MSN \(msn); stitching needs dates"
        case .missingRuleSet(let version, let id):
            return "break \(id.debugDescription) pins ad rule set version \(version), which was not provided"
        case .unknownCreative(let id, let version): return "rule set version \(version) has no creative \(id.debugDescription)"
        case .missingRendition(let creative, let rendition):
            return "creative \(creative.debugDescription) has no segments for rendition \(rendition.debugDescription)"
        case .emptySlate(let version): return "rule set version \(version) has a slate with no duration"
        case .exceedsTargetDuration(let uri, let duration, let targetDuration):
            return "\(uri): EXTINF \(duration) rounds above EXT-X-TARGETDURATION \(targetDuration)"
        case .initializationSectionCannotBeCleared(let msn):
            return "MSN \(msn) has no EXT-X-MAP after segments with one; fMP4 creatives need fMP4 content"
        case .breakLogMismatch(let msn):
            return "the break log's discontinuity numbering does not match the content at MSN \(msn)"
        }
    }
}

/// How stitched playlists are decorated. Part of the stitcher's input: the same options give the
/// same bytes.
public struct StitchOptions: Sendable, Hashable {
    /// Also write `EXT-X-CUE-OUT` / `EXT-X-CUE-OUT-CONT` / `EXT-X-CUE-IN` (HLS-RULES H1) for players
    /// and tools that read them (the channel's `adMarkers` setting).
    public var cueMarkers: Bool
    /// `CLASS` of the one `EXT-X-DATERANGE` per break.
    public var breakClass: String
    /// `CLASS` of the `EXT-X-DATERANGE` of each ad.
    public var adClass: String

    /// List only the newest segments whose stitched EXTINFs add up to at least this (all of them when
    /// they don't). Pods shorter than the content they replace shorten a stitched window, which must
    /// keep 3×TD (C5): give the stitcher content reaching further back than the shared playlist (the
    /// segments still retained) and the shared window's length here. `nil` lists the whole content.
    public var minimumDuration: HLSDuration?

    public init(
        cueMarkers: Bool = false,
        breakClass: String = "com.headwater.ad-break",
        adClass: String = "com.headwater.ad",
        minimumDuration: HLSDuration? = nil
    ) {
        self.cueMarkers = cueMarkers
        self.breakClass = breakClass
        self.adClass = adClass
        self.minimumDuration = minimumDuration
    }
}
