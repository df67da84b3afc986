#if DEBUG
@testable import HeadwaterHTTP

/// `Range` and `If-Range` (``ByteRangeRequest``), as segments and static files are served. The
/// input is `length` (its first 8 bytes, big-endian, as a non-negative `Int64`), then the `Range`
/// field, then, after a line feed, `If-Range`.
enum RangeFuzzing {
    static let entityTag = "\"fuzz-tag\""
    static let lastModified: Int64 = 1_700_000_000

    static func run(_ bytes: [UInt8]) {
        guard bytes.count >= 8 else { return }
        let length = Int64(bitPattern: bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }) & .max
        let rest = bytes[8...]
        let newline = rest.firstIndex(of: UInt8(ascii: "\n")) ?? rest.endIndex
        let range = String(decoding: rest[..<newline], as: UTF8.self)
        let ifRange = newline < rest.endIndex ? String(decoding: rest[(newline + 1)...], as: UTF8.self) : nil

        let decision = ByteRangeRequest.evaluate(
            range: range, ifRange: ifRange, length: length, entityTag: entityTag, lastModifiedSeconds: lastModified)
        check(decision, length: length)
        // The fast path's entry point reads the field's bytes; without If-Range it must decide alike.
        var field = range
        let fromBytes = field.withUTF8 { ByteRangeRequest.evaluate(rangeField: $0, length: length) }
        let withoutIfRange = ByteRangeRequest.evaluate(
            range: range, ifRange: nil, length: length, entityTag: entityTag, lastModifiedSeconds: lastModified)
        precondition(fromBytes == withoutIfRange, "bytes: \(fromBytes), string: \(withoutIfRange) for \(range)")
        // Whitespace at the ends of a field value is not part of it (RFC 9110 §5.5).
        let padded = ByteRangeRequest.evaluate(
            range: " \t" + range + "\t ", ifRange: nil, length: length, entityTag: entityTag, lastModifiedSeconds: lastModified)
        precondition(padded == withoutIfRange, "OWS at the ends changed \(withoutIfRange) to \(padded) for \(range)")
        if let ifRange, decision != withoutIfRange {
            precondition(decision == .full, "If-Range \(ifRange) made \(decision), not the whole representation")
        }
    }

    /// What a 206 may send: `0 <= first <= last < length`; a zero-length representation has no range.
    private static func check(_ decision: ByteRangeRequest, length: Int64) {
        switch decision {
        case .full, .unsatisfiable:
            break
        case .partial(let first, let last):
            precondition(0 <= first && first <= last && last < length, "bytes \(first)-\(last) of \(length)")
            _ = ByteRangeRequest.contentRange(first: first, last: last, length: length)
        }
    }
}
#endif
