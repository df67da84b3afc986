import NIOCore
import NIOHTTP1

/// One request as every framing delivers it to the responder — the fast HTTP/1 scanner
/// (``FastRequestScan``), NIO's HTTP/1 decoder, and HTTP/2 streams — carrying exactly the fields a
/// decision or the access log may read, and nothing else.
///
/// The fields are declared once, in ``Field``: each framing fills ``Fields`` from that list (NIO's
/// decoders and HTTP/2 through ``Fields/init(_:)``; the fast scanner by ``Field/init(lowercasedName:)``
/// and a `switch` over every case), so a field added here for a new decision is either read by the
/// fast scanner or sends the request to the full path — the compiler asks which.
struct OriginRequest: Sendable {
    var method: HTTPMethod
    /// The request-target as received (origin form: path and query).
    var target: String
    /// `HTTP/1.1`, `HTTP/1.0` or `HTTP/2.0`: what the access log records.
    var version: HTTPVersion
    var fields: Fields
    /// Every field as received, in order, for what a configuration may name at run time: the header
    /// fields ad rules target when a session starts. Empty where a framing kept only ``fields`` (the
    /// fast scanner, which never answers a session start).
    var allFields: [(name: String, value: String)] = []

    /// The fields decisions and the access log read.
    struct Fields: Sendable, Hashable {
        /// Joined (`, `) when repeated, as RFC 9110 §5.3 allows for list fields.
        var acceptEncoding: String?
        var range: String?
        var ifRange: String?
        var ifMatch: String?
        var ifNoneMatch: String?
        var ifModifiedSince: String?
        var ifUnmodifiedSince: String?
        /// Push ingest, the admin API and key tokens (`Bearer`).
        var authorization: String?
        /// For the access log.
        var referer: String?
        var userAgent: String?
        /// `X-Playback-Session-Id` (Apple's players): the access log, and a session's start.
        var playbackSessionID: String?

        init(
            acceptEncoding: String? = nil, range: String? = nil, ifRange: String? = nil, ifMatch: String? = nil,
            ifNoneMatch: String? = nil, ifModifiedSince: String? = nil, ifUnmodifiedSince: String? = nil,
            authorization: String? = nil, referer: String? = nil, userAgent: String? = nil, playbackSessionID: String? = nil
        ) {
            self.acceptEncoding = acceptEncoding
            self.range = range
            self.ifRange = ifRange
            self.ifMatch = ifMatch
            self.ifNoneMatch = ifNoneMatch
            self.ifModifiedSince = ifModifiedSince
            self.ifUnmodifiedSince = ifUnmodifiedSince
            self.authorization = authorization
            self.referer = referer
            self.userAgent = userAgent
            self.playbackSessionID = playbackSessionID
        }

        /// The declared fields of `headers`: list fields joined, others their first value.
        init(_ headers: HTTPHeaders) {
            self.init()
            for field in Field.allCases {
                let value = field.isList ? headers.joined(field.name) : headers.first(name: field.name)
                self[keyPath: field.keyPath] = value
            }
        }
    }

    /// A request field some decision or the access log reads, by its lower-case name.
    enum Field: CaseIterable, Sendable {
        case acceptEncoding, range, ifRange, ifMatch, ifNoneMatch, ifModifiedSince, ifUnmodifiedSince
        case authorization, referer, userAgent, playbackSessionID

        var name: String {
            switch self {
            case .acceptEncoding: "accept-encoding"
            case .range: "range"
            case .ifRange: "if-range"
            case .ifMatch: "if-match"
            case .ifNoneMatch: "if-none-match"
            case .ifModifiedSince: "if-modified-since"
            case .ifUnmodifiedSince: "if-unmodified-since"
            case .authorization: "authorization"
            case .referer: "referer"
            case .userAgent: "user-agent"
            case .playbackSessionID: "x-playback-session-id"
            }
        }

        /// A list field (RFC 9110 §5.3): repeated lines are one value joined by commas.
        var isList: Bool {
            switch self {
            case .acceptEncoding, .ifMatch, .ifNoneMatch: true
            default: false
            }
        }

        var keyPath: WritableKeyPath<Fields, String?> {
            switch self {
            case .acceptEncoding: \.acceptEncoding
            case .range: \.range
            case .ifRange: \.ifRange
            case .ifMatch: \.ifMatch
            case .ifNoneMatch: \.ifNoneMatch
            case .ifModifiedSince: \.ifModifiedSince
            case .ifUnmodifiedSince: \.ifUnmodifiedSince
            case .authorization: \.authorization
            case .referer: \.referer
            case .userAgent: \.userAgent
            case .playbackSessionID: \.playbackSessionID
            }
        }

        private static let byName: [String: Field] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })

        init?(lowercasedName: String) {
            guard let field = Self.byName[lowercasedName] else { return nil }
            self = field
        }
    }
}

extension OriginRequest {
    /// A request from NIO's HTTP/1 decoder or HTTP/2's codec.
    init(_ head: HTTPRequestHead) {
        self.init(
            method: head.method, target: head.uri, version: head.version, fields: Fields(head.headers),
            allFields: head.headers.map { ($0.name, $0.value) })
    }

    /// `GET` for `HEAD`: every decision is the same, the handler drops the body.
    var decidingMethod: HTTPMethod { method == .HEAD ? .GET : method }
}
