/// Why a playlist could not be parsed, and where: every error names a 1-based line number.
///
/// The set of codes is open (a struct with static members, as NIO does), so new codes do not break
/// callers that switch over the ones they know.
public struct PlaylistParseError: Error, Hashable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The document is empty or its first line is not `#EXTM3U` (§4.4.1.1, A1).
        public static let missingHeader = Code("missing-header")
        /// Not UTF-8, a byte-order mark, or a control character (§4.1, A2).
        public static let invalidEncoding = Code("invalid-encoding")
        /// Leading or trailing whitespace on a line (§4.1, A3).
        public static let unexpectedWhitespace = Code("unexpected-whitespace")
        /// An attribute list that does not follow §4.2 (A6).
        public static let malformedAttributeList = Code("malformed-attribute-list")
        /// The same attribute twice in one list (§4.2, A6).
        public static let duplicateAttribute = Code("duplicate-attribute")
        /// An attribute whose value is not of the type the tag defines (§4.2, A7).
        public static let invalidAttributeValue = Code("invalid-attribute-value")
        /// A required attribute is absent.
        public static let missingAttribute = Code("missing-attribute")
        /// A tag's value is malformed (`#EXTINF:abc`, `#EXT-X-TARGETDURATION:-1`, a bad date…).
        public static let invalidTagValue = Code("invalid-tag-value")
        /// A tag that may appear once appears again (A10, A11).
        public static let duplicateTag = Code("duplicate-tag")
        /// Media playlist tags and multivariant tags in one document (§4.1, A5).
        public static let mixedPlaylistKinds = Code("mixed-playlist-kinds")
        /// A media playlist without `EXT-X-TARGETDURATION` (§4.4.3.1, B1).
        public static let missingTargetDuration = Code("missing-target-duration")
        /// EXTINF (or another segment tag) not followed by a URI line (§4.4.4.1).
        public static let missingURI = Code("missing-uri")
        /// A URI line with no EXTINF before it (§4.4.4.1, B3).
        public static let missingEXTINF = Code("missing-extinf")
        /// `EXT-X-STREAM-INF` not followed by a URI line, or a URI line in a multivariant playlist
        /// with no STREAM-INF before it (§4.4.6.2, E1).
        public static let missingVariantURI = Code("missing-variant-uri")
        /// A tag in the wrong place, e.g. MEDIA-SEQUENCE after the first segment (§4.4.3.2, B4/B5).
        public static let misplacedTag = Code("misplaced-tag")
        /// Input larger than ``PlaylistParser/Limits`` allow.
        public static let limitExceeded = Code("limit-exceeded")
    }

    public var code: Code
    /// 1-based line number.
    public var line: Int
    /// What is wrong, in one line.
    public var message: String

    public init(_ code: Code, line: Int, _ message: String) {
        self.code = code
        self.line = line
        self.message = message
    }

    /// `line 12: invalid-attribute-value: EXT-X-STREAM-INF BANDWIDTH must be a decimal-integer, got "abc"`
    public var description: String { "line \(line): \(code): \(message)" }
}
