/// What kind of response is being cached; each gets one ``CachePolicy``.
public enum CacheClass: Sendable, Hashable {
    /// The shared multivariant playlist (`/live/{channel}/master.m3u8`).
    case multivariantPlaylist
    /// A shared live media playlist, with the channel's `EXT-X-TARGETDURATION`.
    case mediaPlaylist(targetDuration: Int)
    /// A shared media playlist answering a blocking reload (`_HLS_msn`): it names a version that
    /// never changes, so a CDN may keep it 6 × TD (F19).
    case blockingPlaylist(targetDuration: Int)
    /// A blocking reload that failed (503 past its deadline, F11): 4 × TD (F19).
    case blockingError(targetDuration: Int)
    /// A per-session (stitched) playlist, or anything else carrying a viewer session.
    case personalizedPlaylist
    /// A content, ad or slate segment, an init section, a key: immutable under its URI.
    case segment
    /// 404 for a segment the playlist will list soon, but not yet.
    case notYetAvailable
    /// Any other error response (4xx, 5xx). Pass the channel's target duration when known.
    case error(targetDuration: Int?)
    /// A file of the status page (`Public/`): HTML, JS, CSS, images.
    case staticFile
    /// `/healthz`, `/metrics` and the status JSON: always fresh.
    case health
}

/// `Cache-Control` (and the lifetime for `Expires`) for a ``CacheClass``, so that a CDN collapses
/// requests without ever holding a live playlist longer than a player tolerates (DESIGN.md,
/// "Target-duration refresh").
///
/// | class | `Cache-Control` | rule |
/// | --- | --- | --- |
/// | multivariant playlist | `public, max-age=3` | G8 (½ segment duration; 3 s is ½ of the 6 s TD that G12 recommends) |
/// | media playlist | `public, max-age=<max(1, ⌊TD/2⌋)>` | G7, F19 (non-blocking 200: 0.5×TD), G8 |
/// | blocking reload (`_HLS_msn`) | `public, max-age=<6×TD>` | F19, G7 (successful blocking playlist) |
/// | blocking reload that failed | `public, max-age=<4×TD>` | F19, G7 (unsuccessful blocking playlist) |
/// | personalized playlist | `private, no-store` | G8, DESIGN.md (a CDN must never share one) |
/// | segment | `public, max-age=1209600, immutable` | G8 (14 days); C7, C8, G6 (outlives the availability deadline) |
/// | not yet available (404) | `public, max-age=1` | below F19's 1×TD: a cached 404 on the newest segment stalls AVPlayer |
/// | error | `public, max-age=<clamp(TD, 1...6)>`, `1` without a TD | G7, F19 (non-blocking error: 1×TD) |
/// | static file | `public, max-age=60` | (not HLS; short so a redeploy shows within a minute) |
/// | health | `no-store` | (must reflect the present) |
public struct CachePolicy: Sendable, Hashable {
    /// The `Cache-Control` field value.
    public let cacheControl: String
    /// Freshness lifetime in seconds: send `Expires: <now + maxAge>`. `nil` for `no-store`
    /// classes, which send no `Expires`.
    public let maxAge: Int?

    /// Longest `max-age` given to an error, even with a long target duration: a CDN must not keep
    /// serving a 503 for long after a channel recovers.
    public static let maximumErrorMaxAge = 6
    /// Segments, init sections and keys: 14 days (G8).
    public static let segmentMaxAge = 1_209_600
    public static let multivariantMaxAge = 3
    public static let staticFileMaxAge = 60

    public init(_ cacheClass: CacheClass) {
        switch cacheClass {
        case .multivariantPlaylist:
            self.init(publicMaxAge: Self.multivariantMaxAge)
        case .mediaPlaylist(let targetDuration):
            self.init(publicMaxAge: Self.mediaPlaylistMaxAge(targetDuration: targetDuration))
        case .blockingPlaylist(let targetDuration):
            self.init(publicMaxAge: 6 * max(1, targetDuration))
        case .blockingError(let targetDuration):
            self.init(publicMaxAge: 4 * max(1, targetDuration))
        case .personalizedPlaylist:
            self.init(cacheControl: "private, no-store", maxAge: nil)
        case .segment:
            self.init(cacheControl: "public, max-age=1209600, immutable", maxAge: Self.segmentMaxAge)
        case .notYetAvailable:
            self.init(publicMaxAge: 1)
        case .error(let targetDuration):
            self.init(publicMaxAge: min(max(targetDuration ?? 1, 1), Self.maximumErrorMaxAge))
        case .staticFile:
            self.init(publicMaxAge: Self.staticFileMaxAge)
        case .health:
            self.init(cacheControl: "no-store", maxAge: nil)
        }
    }

    private init(cacheControl: String, maxAge: Int?) {
        self.cacheControl = cacheControl
        self.maxAge = maxAge
    }

    private init(publicMaxAge maxAge: Int) {
        self.cacheControl =
            maxAge < publicMaxAgeValues.count ? publicMaxAgeValues[maxAge] : "public, max-age=\(maxAge)"
        self.maxAge = maxAge
    }

    /// `max(1, ⌊targetDuration / 2⌋)`: rounding down keeps `max-age` at or below half the target
    /// duration (G7/F19's 0.5×TD; 7 → 3), except that it is never below 1 s, so a CDN can still
    /// collapse requests. The one case above half is TD = 1 (max-age 1); a target duration of 0
    /// or less (invalid) also gets 1.
    public static func mediaPlaylistMaxAge(targetDuration: Int) -> Int {
        max(1, targetDuration / 2)
    }

    /// The `Expires` instant (Unix seconds) for a response generated at `now`, or `nil`.
    /// Format it with ``HTTPDate``.
    public func expires(now: Int64) -> Int64? {
        maxAge.map { now + Int64($0) }
    }
}

/// `public, max-age=N` for small N, built once so the per-request path does not allocate.
private let publicMaxAgeValues: [String] = (0...64).map { "public, max-age=\($0)" }
