public import HeadwaterLiveWindow

/// The LL-HLS delivery directives of a media playlist request (RFC 8216bis §6.2.5): blocking reload
/// (`_HLS_msn`, `_HLS_part`) and delta updates (`_HLS_skip`). Parsed by ``Route`` (a malformed one is
/// a 400, F10) and again by the responder from the same target, so both read them one way.
public struct DeliveryDirectives: Sendable, Hashable {
    /// `_HLS_msn`: answer once the playlist lists this segment.
    public var msn: UInt64?
    /// `_HLS_part`: … and this part of it (only with ``msn``).
    public var part: UInt64?
    /// `_HLS_skip`: a Playlist Delta Update.
    public var skip: Skip?

    public enum Skip: String, Sendable, Hashable {
        /// `YES`: skip segments older than the Skip Boundary (F14).
        case segments = "YES"
        /// `v2`: also skip old date ranges and list recently removed ones (F15).
        case segmentsAndDateRanges = "v2"
    }

    public init(msn: UInt64? = nil, part: UInt64? = nil, skip: Skip? = nil) {
        self.msn = msn
        self.part = part
        self.skip = skip
    }

    /// No directive: a plain reload.
    public var isEmpty: Bool { msn == nil && part == nil && skip == nil }

    /// The directives of `query`; a malformed one is a 400 with a one-line reason (F10, F13).
    public init(_ query: RequestTarget.Query) throws(Refusal) {
        self.init()
        if let value = query.first("_HLS_msn") {
            guard let msn = UInt64(value) else { throw Refusal.badTarget("_HLS_msn must be a non-negative integer") }
            self.msn = msn
        }
        if let value = query.first("_HLS_part") {
            guard let part = UInt64(value) else { throw Refusal.badTarget("_HLS_part must be a non-negative integer") }
            guard msn != nil else { throw Refusal.badTarget("_HLS_part requires _HLS_msn") }
            self.part = part
        }
        if let value = query.first("_HLS_skip") {
            guard let skip = Skip(rawValue: value) else { throw Refusal.badTarget("_HLS_skip must be YES or v2") }
            self.skip = skip
        }
    }

    /// The directives of a request-target, for the responder (the route already refused malformed
    /// ones; here they read as none). Cheap when the target has no `_HLS_`.
    static func of(target: String) -> DeliveryDirectives {
        guard target.utf8.contains(UInt8(ascii: "?")), target.contains("_HLS_"),
            case .success(let parsed) = RequestTarget.parse(target)
        else { return DeliveryDirectives() }
        return (try? DeliveryDirectives(parsed.query)) ?? DeliveryDirectives()
    }
}
