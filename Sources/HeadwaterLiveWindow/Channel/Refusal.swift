/// Why the origin refuses a request, in its own terms: the kind of refusal and one line saying what
/// was wrong (DESIGN.md: "Every error body says what was wrong in one line"). Every layer that
/// refuses — ingest, sessions and targeting, the admin API, routing, serving — says it with this
/// value, so none of them needs HTTP's types; HeadwaterHTTP turns a kind into a status in exactly one
/// place (`OriginResponse.refused`).
public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The request is malformed: a bad path, query, range unit or value (400).
        case badRequest = "bad_request"
        /// Credentials are missing (401).
        case unauthorized
        /// Credentials or a session token were presented and are not good enough (403).
        case forbidden
        /// No such channel, rendition, segment or resource (404).
        case notFound = "not_found"
        /// The method is not one this resource answers (405).
        case methodNotAllowed = "method_not_allowed"
        /// The request conflicts with current state: a break already open, two playlists for one
        /// rendition (409).
        case conflict
        /// A conditional request whose precondition failed (412).
        case preconditionFailed = "precondition_failed"
        /// A body larger than allowed (413).
        case tooLarge = "too_large"
        /// A file type the origin does not take (415).
        case unsupportedMediaType = "unsupported_media_type"
        /// A byte range outside the resource (416).
        case rangeNotSatisfiable = "range_not_satisfiable"
        /// A request-target longer than the origin reads (414).
        case uriTooLong = "uri_too_long"
        /// A request head larger than the origin reads (431).
        case headerFieldsTooLarge = "header_fields_too_large"
        /// A method the origin does not implement on any resource (501); one it implements but not
        /// on this resource is ``methodNotAllowed``.
        case notImplemented = "not_implemented"
        /// Well-formed HTTP whose content is invalid: a playlist that does not parse (422).
        case unprocessable
        /// The origin failed (a write refused by the disk, zlib): logged, never the client's fault (500).
        case failed
        /// Not available yet or not now: a starting channel, a stitcher with no configuration (503).
        case unavailable
        /// The origin cannot store what was sent: the state directory's file system is full (507).
        case insufficientStorage = "insufficient_storage"
    }

    public var kind: Kind
    /// One line; line breaks are replaced when written. Never echo credentials.
    public var reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String { reason }
}
