/// Why an ingest request was refused: an HTTP status code and a one-line reason for the body.
///
/// Core stays free of NIO's HTTP types; the HTTP adapter turns `status` into a response status and
/// sends `message` as the body (DESIGN.md: "Every error body says what was wrong in one line").
public struct IngestRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status code: 400, 401, 403, 404, 409, 413, 415, 422 or 500.
    public var status: Int
    /// What was wrong, in one line.
    public var message: String
    /// Which counter of ``IngestCounters`` the refusal counts under.
    public var reason: IngestCounters.Reason

    public init(status: Int, _ message: String, reason: IngestCounters.Reason) {
        self.status = status
        self.message = message
        self.reason = reason
    }

    public var description: String { "\(status) \(message)" }

    static func badPath(_ message: String) -> IngestRefusal { IngestRefusal(status: 400, message, reason: .badPath) }
}

/// Counts of refused uploads by reason and of problems found in accepted input, so that operators
/// can tell a misconfigured encoder from an attack without reading logs (metrics come later and
/// will export these).
public struct IngestCounters: Sendable, Hashable {
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        /// No `Authorization` header, or not a bearer token (401).
        case missingCredentials = "missing_credentials"
        /// A bearer token that does not match (403).
        case wrongToken = "wrong_token"
        /// The token's environment variable was not set at start (403).
        case disabled
        /// The channel does not exist or does not take push ingest (404).
        case unknownChannel = "unknown_channel"
        /// Traversal, an absolute path, an empty or NUL-carrying component (400).
        case badPath = "bad_path"
        /// An extension that is neither a playlist nor a segment type (415).
        case unsupportedType = "unsupported_type"
        /// Larger than `max_upload_bytes` (or 1 MiB for a playlist) (413).
        case tooLarge = "too_large"
        /// The body ended before `Content-Length` bytes (400), or the upload was aborted.
        case truncated
        /// A playlist that does not parse (422).
        case malformedPlaylist = "malformed_playlist"
        /// Two playlist paths that map to one rendition name (409).
        case renditionConflict = "rendition_conflict"
        /// The disk refused a write (500).
        case storage
    }

    /// Refusals by reason.
    public private(set) var rejections: [Reason: Int] = [:]
    /// Listed segments whose EXTINF rounds above the target duration (B1): the encoder's problem,
    /// accepted and reported.
    public var segmentsOverTargetDuration = 0
    /// Segments listed by the encoder that never arrived in time and were published as EXT-X-GAP.
    public var missingSegments = 0
    /// Encoder restarts (media sequence went back or its playlist started over).
    public var encoderRestarts = 0
    /// Stalls: the source delivered nothing for 1½ target durations (channel-wide or one rendition).
    public var stalls = 0

    public init() {}

    package mutating func count(_ reason: Reason) { rejections[reason, default: 0] += 1 }

    /// Refusals for `reason` so far.
    public subscript(reason: Reason) -> Int { rejections[reason] ?? 0 }
}
