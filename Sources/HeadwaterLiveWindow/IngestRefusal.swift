/// Why input from a source (an upload, a watched file, an upstream response) was refused: the
/// counter it counts under and a one-line message. What kind of refusal it is follows from the
/// counter (``IngestCounters/Reason/kind``), so the two can never disagree.
public struct IngestRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, in one line.
    public var message: String
    /// Which counter of ``IngestCounters`` the refusal counts under.
    public var reason: IngestCounters.Reason

    public init(_ message: String, reason: IngestCounters.Reason) {
        self.message = message
        self.reason = reason
    }

    public var kind: Refusal.Kind { reason.kind }
    /// The refusal as a request's answer says it.
    public var refusal: Refusal { Refusal(kind, message) }
    public var description: String { message }

    static func badPath(_ message: String) -> IngestRefusal { IngestRefusal(message, reason: .badPath) }

    /// A write into the state directory failed because its file system is full (`ENOSPC`) or its
    /// user's quota is used up (`EDQUOT`); `detail` is the system's text for the error. The message
    /// names the directory, not the file, so every such refusal reads the same.
    public static func diskFull(_ detail: String) -> IngestRefusal {
        IngestRefusal("the state directory's file system is full (\(detail))", reason: .diskFull)
    }
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
        /// A segment opening a timeline (an encoder's first after a restart) longer than the target
        /// duration, left out of the window (B1): counted here, though its upload was accepted.
        case overTargetDuration = "over_target_duration"
        /// The state directory's file system is full, or the quota of its user is used up (507).
        /// Counted apart from ``storage`` because it is the operator's to fix, and it clears by
        /// itself once space is freed.
        case diskFull = "disk_full"

        /// What kind of refusal each counter is.
        public var kind: Refusal.Kind {
            switch self {
            case .missingCredentials: .unauthorized
            case .wrongToken, .disabled: .forbidden
            case .unknownChannel: .notFound
            case .badPath, .truncated: .badRequest
            case .unsupportedType: .unsupportedMediaType
            case .tooLarge: .tooLarge
            case .malformedPlaylist, .overTargetDuration: .unprocessable
            case .renditionConflict: .conflict
            case .storage: .failed
            case .diskFull: .insufficientStorage
            }
        }
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
    /// Parts listed by the encoder that never arrived and were published as GAP=YES (their hint
    /// dropped).
    public var missingParts = 0
    /// Deviations from F1 found in encoders' EXT-X-SERVER-CONTROL (each reported once per rendition).
    public var serverControlDeviations = 0

    public init() {}

    package mutating func count(_ reason: Reason) { rejections[reason, default: 0] += 1 }

    /// Refusals for `reason` so far.
    public subscript(reason: Reason) -> Int { rejections[reason] ?? 0 }
}
