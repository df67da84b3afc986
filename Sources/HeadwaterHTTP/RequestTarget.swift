/// An HTTP request-target in origin-form (RFC 9112 §3.2.1: `absolute-path [ "?" query ]`),
/// validated and decoded. This is a security boundary: every path segment that reaches a router,
/// a segment store or the `Public/` file server has been through ``parse(_:)``.
///
/// Accepted:
/// - `/` (no ``segments``) and `/a/b/c`; a trailing slash gives a final empty segment
///   (`/a/` → `["a", ""]`), which no route matches.
/// - Percent-encoding (RFC 3986 §2.1, either case), decoded exactly once, so `%252e` is the
///   literal three bytes `%2e`, never `.`. Decoded segments must be valid UTF-8.
///
/// Rejected, each with a one-line ``RequestTargetError/reason`` for the 400 body:
/// - absolute-form, authority-form and asterisk-form targets, and a fragment (`#`);
/// - a path over ``maximumPathLength`` bytes or a query over ``maximumQueryLength`` bytes;
/// - `.` and `..` segments, raw or encoded (`%2e%2e`, `%2E.`, `.%2e`);
/// - `/` inside a segment (`%2f`) and `\` anywhere in the path, raw or encoded (`%5c`);
/// - control bytes (`%00`–`%1f`, `%7f`), raw or encoded, in the path or the query;
/// - raw space and raw non-ASCII bytes (they must be percent-encoded);
/// - empty segments (`//`) other than the trailing one, including a leading `//host/…`;
/// - malformed percent-encoding (`%zz`, a truncated `%4`).
///
/// Dot-files (`/.env`) are not rejected here; serving only what a route names is the router's job.
public struct RequestTarget: Sendable, Hashable {
    /// Longest accepted path, in bytes as received.
    public static let maximumPathLength = 2048
    /// Longest accepted query (after `?`), in bytes as received; room for a session token and
    /// targeting parameters.
    public static let maximumQueryLength = 4096

    /// The path as received (still percent-encoded), for logs (`url.path`).
    public let path: Substring
    /// The decoded path segments.
    public let segments: [String]
    /// The query as received, without `?`; `nil` when the target has no `?`. Use it to verify
    /// signatures over the exact bytes the client sent.
    public let rawQuery: Substring?
    /// The decoded query parameters.
    public let query: Query

    /// Parses an origin-form request-target.
    public static func parse(_ target: String) -> Result<RequestTarget, RequestTargetError> {
        var copy = target
        let parts = copy.withUTF8 { bytes -> Result<Parts, RequestTargetError> in
            do throws(RequestTargetError) {
                return .success(try parse(bytes: bytes))
            } catch {
                return .failure(error)
            }
        }
        return parts.map { parts in
            let utf8 = target.utf8
            let pathEnd = utf8.index(utf8.startIndex, offsetBy: parts.pathEnd)
            let rawQuery = pathEnd == utf8.endIndex ? nil : target[utf8.index(after: pathEnd)...]
            return RequestTarget(
                path: target[..<pathEnd],
                segments: parts.segments,
                rawQuery: rawQuery,
                query: Query(items: parts.query)
            )
        }
    }

    /// One `name=value` pair, decoded (`+` is a space).
    public struct QueryItem: Sendable, Hashable {
        public let name: String
        public let value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Query parameters in the order received (`a=b&c=d`). Duplicate names are kept; an item
    /// without `=` has an empty value; empty items (`a=1&&b=2`, a trailing `&`) are skipped.
    public struct Query: Sendable, Hashable {
        public let items: [QueryItem]

        public init(items: [QueryItem]) {
            self.items = items
        }

        /// The value of the first item called `name`, if any.
        public func first(_ name: String) -> String? {
            items.first { $0.name == name }?.value
        }

        /// Every value of items called `name`, in order.
        public func all(_ name: String) -> [String] {
            items.compactMap { $0.name == name ? $0.value : nil }
        }
    }

    // MARK: - Parsing

    private typealias Parts = (pathEnd: Int, segments: [String], query: [QueryItem])

    private static func parse(bytes b: UnsafeBufferPointer<UInt8>) throws(RequestTargetError) -> Parts {
        guard !b.isEmpty else { throw .empty }
        guard b[0] == UInt8(ascii: "/") else { throw .notOriginForm }

        // One pass for the structure: where the path ends, and how many segments and items to expect.
        var pathEnd = b.count
        var slashes = 0
        var ampersands = 0
        for i in 0..<b.count {
            let c = b[i]
            if c == UInt8(ascii: "/") {
                if pathEnd == b.count { slashes += 1 }
            } else if c == UInt8(ascii: "&") {
                if pathEnd < b.count { ampersands += 1 }
            } else if c == UInt8(ascii: "?"), pathEnd == b.count {
                pathEnd = i
            }
        }
        guard pathEnd <= maximumPathLength else { throw .tooLong(.path, limit: maximumPathLength) }
        if pathEnd < b.count, b.count - pathEnd - 1 > maximumQueryLength {
            throw .tooLong(.query, limit: maximumQueryLength)
        }

        var segments: [String] = []
        if pathEnd > 1 {
            segments.reserveCapacity(slashes)
            var start = 1
            while start <= pathEnd {
                var end = start
                while end < pathEnd, b[end] != UInt8(ascii: "/") { end += 1 }
                if start == end, end != pathEnd { throw .emptySegment }
                let segment = try decode(b, start..<end, in: .path)
                if segment == "." || segment == ".." { throw .dotSegment }
                segments.append(segment)
                start = end + 1
            }
        }

        var items: [QueryItem] = []
        if pathEnd < b.count {
            items.reserveCapacity(ampersands + 1)
            var start = pathEnd + 1
            while start < b.count {
                var end = start
                var equals: Int? = nil
                while end < b.count, b[end] != UInt8(ascii: "&") {
                    if equals == nil, b[end] == UInt8(ascii: "=") { equals = end }
                    end += 1
                }
                if start < end {
                    let nameEnd = equals ?? end
                    let name = try decode(b, start..<nameEnd, in: .query)
                    let value = equals.map { $0 + 1 } ?? end
                    items.append(QueryItem(name: name, value: try decode(b, value..<end, in: .query)))
                }
                start = end + 1
            }
        }
        return (pathEnd, segments, items)
    }

    /// Validates and decodes one path segment or query name/value.
    private static func decode(
        _ b: UnsafeBufferPointer<UInt8>,
        _ range: Range<Int>,
        in component: RequestTargetError.Component
    ) throws(RequestTargetError) -> String {
        // Pass 1: validate raw and decoded bytes; learn whether decoding changes anything.
        var transformed = false
        var nonASCII = false
        var i = range.lowerBound
        while i < range.upperBound {
            var c = b[i]
            if c == UInt8(ascii: "%") {
                guard i + 2 < range.upperBound, let high = hexValue(b[i + 1]), let low = hexValue(b[i + 2]) else {
                    throw .invalidPercentEncoding(component)
                }
                c = high << 4 | low
                transformed = true
                i += 3
                if c == UInt8(ascii: "/") && component == .path { throw .encodedSlash }
            } else {
                if c == 0x20 || c >= 0x80 { throw .disallowedByte(c, in: component) }
                if c == UInt8(ascii: "#") { throw .fragment }
                if c == UInt8(ascii: "+") && component == .query { transformed = true }
                i += 1
            }
            if c < 0x20 || c == 0x7F { throw .controlByte(component) }
            if c == UInt8(ascii: "\\") && component == .path { throw .backslash }
            if c >= 0x80 { nonASCII = true }
        }
        guard transformed else {
            return String(decoding: UnsafeBufferPointer(rebasing: b[range]), as: UTF8.self)
        }

        // Pass 2: decode into a stack buffer.
        let decoded: String? = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: range.count) { buffer in
            var count = 0
            var i = range.lowerBound
            while i < range.upperBound {
                let c = b[i]
                if c == UInt8(ascii: "%"), let high = hexValue(b[i + 1]), let low = hexValue(b[i + 2]) {
                    buffer[count] = high << 4 | low
                    i += 3
                } else {
                    buffer[count] = c == UInt8(ascii: "+") && component == .query ? UInt8(ascii: " ") : c
                    i += 1
                }
                count += 1
            }
            let bytes = UnsafeBufferPointer(rebasing: buffer[0..<count])
            return nonASCII
                ? String(validating: bytes, as: UTF8.self) : String(decoding: bytes, as: UTF8.self)
        }
        guard let decoded else { throw .invalidUTF8(component) }
        return decoded
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Why a request-target was rejected (answer 400 with ``reason``).
public enum RequestTargetError: Error, Sendable, Hashable {
    public enum Component: Sendable, Hashable, CustomStringConvertible {
        case path, query

        public var description: String {
            switch self {
            case .path: "path"
            case .query: "query"
            }
        }
    }

    case empty
    /// absolute-form (`http://h/p`), authority-form (`h:443`) or asterisk-form (`*`).
    case notOriginForm
    case tooLong(Component, limit: Int)
    case fragment
    /// A raw space or non-ASCII byte, which must be percent-encoded.
    case disallowedByte(UInt8, in: Component)
    case controlByte(Component)
    case invalidPercentEncoding(Component)
    case invalidUTF8(Component)
    case dotSegment
    case emptySegment
    case encodedSlash
    case backslash

    /// One line for a 400 body. It never echoes the request's bytes (at most one byte's hex value).
    public var reason: String {
        switch self {
        case .empty: "empty request target"
        case .notOriginForm: "request target must be an absolute path starting with '/'"
        case .tooLong(let component, let limit): "request \(component) is longer than \(limit) bytes"
        case .fragment: "request target must not contain a fragment ('#')"
        case .disallowedByte(let byte, let component):
            "request \(component) contains byte 0x\(String(byte, radix: 16, uppercase: true)); percent-encode it"
        case .controlByte(let component): "request \(component) contains a control character"
        case .invalidPercentEncoding(let component): "request \(component) has invalid percent-encoding"
        case .invalidUTF8(let component): "request \(component) does not decode to UTF-8"
        case .dotSegment: "request path contains a '.' or '..' segment"
        case .emptySegment: "request path contains an empty segment ('//')"
        case .encodedSlash: "request path contains an encoded '/' inside a segment"
        case .backslash: "request path contains a backslash"
        }
    }
}
