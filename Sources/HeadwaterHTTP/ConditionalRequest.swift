/// The result of evaluating a request's preconditions (RFC 9110 §13.2.2).
public enum ConditionalOutcome: Equatable, Sendable {
    /// Perform the method (and then consider `Range`, see ``ByteRangeRequest``).
    case proceed
    /// 304 Not Modified (only ever for `GET`/`HEAD`).
    case notModified
    /// 412 Precondition Failed.
    case preconditionFailed
}

/// Conditional requests (RFC 9110 §13.1–13.2) against the one current representation of a
/// resource. Call it only once the resource exists (a missing one is answered 404 before any
/// precondition); `If-Match: *` and `If-None-Match: *` therefore always see a representation.
public enum ConditionalRequest {
    /// The only distinction §13.2.2 makes between methods.
    public enum Method: Equatable, Sendable {
        /// `GET` or `HEAD`: a matching `If-None-Match`/`If-Modified-Since` gives 304.
        case getOrHead
        /// Anything else (`PUT`, `POST`, `DELETE` on ingest): a matching `If-None-Match` gives 412,
        /// and `If-Modified-Since` is ignored.
        case other
    }

    /// Evaluates the preconditions in §13.2.2's order:
    /// 1. `If-Match` present: no match (strong comparison, §13.1.1; `*` matches) → 412.
    /// 2. Else `If-Unmodified-Since` (a valid HTTP-date, and the resource has a modification
    ///    time): modified after the date → 412.
    /// 3. `If-None-Match` present: a match (weak comparison, §13.1.2; `*` matches) → 304 for
    ///    `GET`/`HEAD`, 412 otherwise.
    /// 4. Else, for `GET`/`HEAD`, `If-Modified-Since` (a valid HTTP-date, and the resource has a
    ///    modification time): not modified since the date → 304. So `If-None-Match` wins over
    ///    `If-Modified-Since` whenever both are sent.
    ///
    /// A date that does not parse is ignored (§13.1.3, §13.1.4). An entity-tag list that does not
    /// parse matches nothing (see ``EntityTag``): `If-Match` then fails and `If-None-Match`
    /// proceeds, so a garbled header can only cost a full response, never a wrong 304.
    ///
    /// - Parameters:
    ///   - entityTag: the current representation's `ETag` field value (`"…"` or `W/"…"`).
    ///   - lastModifiedSeconds: its `Last-Modified` in Unix seconds, if it has one.
    public static func evaluate(
        method: Method,
        ifMatch: String?,
        ifNoneMatch: String?,
        ifModifiedSince: String?,
        ifUnmodifiedSince: String?,
        entityTag: String,
        lastModifiedSeconds: Int64?
    ) -> ConditionalOutcome {
        if let ifMatch {
            guard listMatches(ifMatch, entityTag: entityTag, weak: false) else { return .preconditionFailed }
        } else if let ifUnmodifiedSince, let lastModifiedSeconds,
            let date = HTTPDate.parse(ifUnmodifiedSince), lastModifiedSeconds > date
        {
            return .preconditionFailed
        }

        if let ifNoneMatch {
            if listMatches(ifNoneMatch, entityTag: entityTag, weak: true) {
                return method == .getOrHead ? .notModified : .preconditionFailed
            }
        } else if method == .getOrHead, let ifModifiedSince, let lastModifiedSeconds,
            let date = HTTPDate.parse(ifModifiedSince), lastModifiedSeconds <= date
        {
            return .notModified
        }
        return .proceed
    }

    private static func listMatches(_ field: String, entityTag: String, weak: Bool) -> Bool {
        var field = field
        var entityTag = entityTag
        return field.withUTF8 { field in
            entityTag.withUTF8 { EntityTag.listMatches(field, current: $0, weak: weak) }
        }
    }
}
