/// What to send for a `GET` that may carry `Range` (RFC 9110 §14), already resolved against the
/// representation's length: the whole representation (200), one inclusive byte range (206 with
/// ``contentRange(first:last:length:)``), or 416 with ``unsatisfiedContentRange(length:)``.
///
/// Unlike Hummingbird's `FileMiddleware`, `bytes=-500` is the **last** 500 bytes (§14.1.2).
/// Open-ended preload-hint requests (`bytes=<start>-9007199254740991`, HLS-RULES G4) are clamped,
/// never 416.
public enum ByteRangeRequest: Equatable, Sendable {
    /// Ignore `Range`: send 200 with the whole representation.
    case full
    /// Send 206 with bytes `first...last` (inclusive, `0 <= first <= last < length`).
    case partial(first: Int64, last: Int64)
    /// Send 416 with `Content-Range: bytes */<length>`.
    case unsatisfiable

    /// Resolves `Range` (and `If-Range`) for a representation of `length` bytes.
    ///
    /// Decisions, in order:
    /// - No `Range` → ``full``.
    /// - `If-Range` present and not matching (§13.1.5) → ``full``. It matches when it is a strong
    ///   entity-tag equal to `entityTag` (strong comparison: a weak tag on either side never
    ///   matches), or an HTTP-date exactly equal to `lastModifiedSeconds`. An unparseable
    ///   `If-Range` does not match.
    /// - A unit other than `bytes` (compared case-insensitively, §14.1) → ``full`` (§14.2: an
    ///   origin "MUST ignore" a unit it does not understand).
    /// - An invalid ranges-specifier → ``full`` (§14.2 lets a server ignore it): bad syntax, no
    ///   range-spec, or an int-range with `last < first` (`bytes=5-1`). Whitespace is accepted
    ///   only where the ABNF allows it: at the ends of the field value and around the commas of
    ///   the list, whose empty elements are skipped (RFC 9110 §5.6.1.2); `bytes = 0-1`,
    ///   `bytes= 0-1` and `bytes=0 - 1` are invalid, `bytes= ,0-1` is not.
    /// - More than one range-spec → ``full``. Headwater never sends `multipart/byteranges`:
    ///   players and CDNs fetching segments ask for one range, and §14.2 permits ignoring `Range`.
    /// - One int-range: `first >= length` → ``unsatisfiable``; otherwise `last` (absent, or past
    ///   the end) is clamped to `length - 1`.
    /// - One suffix-range `-n`: `n == 0` → ``unsatisfiable``; `n >= length` → the whole
    ///   representation as a 206 (`bytes 0-<length-1>/<length>`), as §14.1.2 specifies.
    /// - A zero-length representation: every int-range is unsatisfiable (`first >= 0`). A non-zero
    ///   suffix-range *is* satisfiable there (§14.1.2), but no `Content-Range` can describe zero
    ///   bytes, so it gets ``full`` (an empty 200).
    ///
    /// Positions too large for `Int64` saturate, so they clamp or are unsatisfiable as above.
    public static func evaluate(
        range: String?,
        ifRange: String?,
        length: Int64,
        entityTag: String,
        lastModifiedSeconds: Int64?
    ) -> ByteRangeRequest {
        precondition(length >= 0, "a representation length cannot be negative")
        guard var range else { return .full }
        if let ifRange, !ifRangeMatches(ifRange, entityTag: entityTag, lastModifiedSeconds: lastModifiedSeconds) {
            return .full
        }
        return range.withUTF8 { resolve($0, length: length) }
    }

    /// ``evaluate(range:ifRange:length:entityTag:lastModifiedSeconds:)`` for a `Range` field's
    /// bytes as received and no `If-Range`: what ``OriginFastPath`` asks, without making a `String`.
    static func evaluate(rangeField: UnsafeBufferPointer<UInt8>, length: Int64) -> ByteRangeRequest {
        precondition(length >= 0, "a representation length cannot be negative")
        return resolve(rangeField, length: length)
    }

    /// `Content-Range` of a 206 (§14.4): `bytes 0-499/1234`.
    public static func contentRange(first: Int64, last: Int64, length: Int64) -> String {
        "bytes \(first)-\(last)/\(length)"
    }

    /// `Content-Range` of a 416 (§14.4): `bytes */1234`.
    public static func unsatisfiedContentRange(length: Int64) -> String {
        "bytes */\(length)"
    }

    // MARK: - If-Range (§13.1.5)

    static func ifRangeMatches(_ ifRange: String, entityTag: String, lastModifiedSeconds: Int64?) -> Bool {
        var ifRange = ifRange
        return ifRange.withUTF8 { field in
            let start = HTTPSyntax.skipOWS(field, from: 0)
            // An entity-tag starts with DQUOTE or `W/`; an HTTP-date never does ("Wed, …" has no `/`).
            let looksLikeTag =
                start < field.count
                && (field[start] == UInt8(ascii: "\"")
                    || (field[start] == UInt8(ascii: "W") && start + 1 < field.count
                        && field[start + 1] == UInt8(ascii: "/")))
            if looksLikeTag {
                guard let theirs = EntityTag.parseSingle(field) else { return false }
                var entityTag = entityTag
                return entityTag.withUTF8 { current in
                    guard let ours = EntityTag.parseSingle(current) else { return false }
                    return EntityTag.equal(theirs, in: field, ours, in: current, weak: false)
                }
            }
            guard let lastModifiedSeconds, let date = HTTPDate.parse(bytes: field, now: nil) else { return false }
            return date == lastModifiedSeconds
        }
    }

    // MARK: - Range (§14.1.1, §14.2)

    private enum Spec {
        case int(first: Int64, last: Int64?)
        case suffix(length: Int64)
    }

    private static func resolve(_ field: UnsafeBufferPointer<UInt8>, length: Int64) -> ByteRangeRequest {
        var i = HTTPSyntax.skipOWS(field, from: 0)
        var end = field.count
        while end > i, HTTPSyntax.isOWS(field[end - 1]) { end -= 1 }
        let b = UnsafeBufferPointer(rebasing: field[0..<end])

        // range-unit "="
        let unitStart = i
        while i < b.count, b[i] != UInt8(ascii: "=") {
            guard HTTPSyntax.isTokenCharacter(b[i]) else { return .full }
            i += 1
        }
        guard i < b.count, HTTPSyntax.equalsLowercase(b, unitStart..<i, "bytes") else { return .full }
        i += 1

        // range-set = 1#range-spec, read as a recipient must (RFC 9110 §5.6.1.2):
        // [ element ] *( OWS "," OWS [ element ] ), with at least one element.
        var spec: Spec? = nil
        while i < b.count {
            if HTTPSyntax.isOWS(b[i]) {  // only right after "=": OWS must lead to a comma
                i = HTTPSyntax.skipOWS(b, from: i)
                guard i < b.count, b[i] == UInt8(ascii: ",") else { return .full }
            }
            if b[i] == UInt8(ascii: ",") {
                i = HTTPSyntax.skipOWS(b, from: i + 1)
                continue
            }
            guard spec == nil else { return .full }  // a second range-spec: serve the whole thing
            guard let (parsed, next) = parseSpec(b, at: i) else { return .full }
            spec = parsed
            i = HTTPSyntax.skipOWS(b, from: next)
            guard i == b.count || b[i] == UInt8(ascii: ",") else { return .full }
        }

        switch spec {
        case nil:
            return .full
        case .int(let first, let last?) where last < first:
            return .full
        case .int(let first, let last):
            guard first < length else { return .unsatisfiable }
            return .partial(first: first, last: min(last ?? .max, length - 1))
        case .suffix(let suffixLength):
            guard suffixLength > 0 else { return .unsatisfiable }
            guard length > 0 else { return .full }
            return .partial(first: suffixLength >= length ? 0 : length - suffixLength, last: length - 1)
        }
    }

    /// `first-pos "-" [ last-pos ]` or `"-" suffix-length`.
    private static func parseSpec(_ b: UnsafeBufferPointer<UInt8>, at index: Int) -> (Spec, next: Int)? {
        if b[index] == UInt8(ascii: "-") {
            guard let (suffix, next) = parseDigits(b, at: index + 1) else { return nil }
            return (.suffix(length: suffix), next)
        }
        guard let (first, afterFirst) = parseDigits(b, at: index),
            afterFirst < b.count, b[afterFirst] == UInt8(ascii: "-")
        else { return nil }
        if let (last, next) = parseDigits(b, at: afterFirst + 1) {
            return (.int(first: first, last: last), next)
        }
        return (.int(first: first, last: nil), afterFirst + 1)
    }

    /// `1*DIGIT`, saturating at `Int64.max`.
    private static func parseDigits(_ b: UnsafeBufferPointer<UInt8>, at index: Int) -> (Int64, next: Int)? {
        var i = index
        var value: Int64 = 0
        while i < b.count {
            let digit = b[i] &- UInt8(ascii: "0")
            guard digit <= 9 else { break }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int64(digit))
            value = o1 || o2 ? .max : sum
            i += 1
        }
        return i == index ? nil : (value, i)
    }
}
