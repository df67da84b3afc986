public import HeadwaterLiveWindow

/// The targeting attributes of a new session, from the request that starts it
/// (`GET /ssai/{channel}/master.m3u8?device=tv&geo=fr`): the query's parameters, `channel`, and the
/// request headers the operator chose to copy. Pure: the HTTP layer passes the parts in.
///
/// Query parameters, at most ``maxParameters``:
/// - a key is 1…``maxKeyLength`` characters of `a-z 0-9 _ -`, appears once, and is not reserved:
///   `channel`, `session` and any `header.…` key are set by the server only;
/// - a value (after percent-decoding) is 0…``maxValueLength`` characters of printable ASCII
///   (space to `~`) other than `&` and `=`.
///
/// Anything else is refused with a ``SessionTargetingError`` (HTTP 400, one-line reason): a bad
/// query is a bug in the player's integration, better reported than silently dropped.
///
/// Copied headers become `header.<name>` (the name as configured, lower case); several lines of
/// one field are joined with `, ` (RFC 9110 §5.3), bytes outside printable ASCII become `?`, and the
/// value is cut to ``maxHeaderValueLength`` characters.
public enum SessionTargeting {
    public static let maxParameters = 16
    public static let maxKeyLength = 32
    public static let maxValueLength = 128
    public static let maxHeaderValueLength = 128
    /// The key the channel name is stored under.
    public static let channelKey = "channel"
    /// The prefix of copied request headers' keys.
    public static let headerPrefix = "header."
    /// Keys a query may not set (besides any key starting with ``headerPrefix``).
    public static let reservedKeys: Set<String> = ["channel", "session"]

    /// The targeting of a session on `channel` started by a request with these (decoded) query
    /// items and headers. `copyingHeaders` holds lower-case header names.
    public static func targeting(
        channel: String,
        query: some Sequence<(name: String, value: String)>,
        headers: some Sequence<(name: String, value: String)>,
        copyingHeaders: Set<String>
    ) throws(SessionTargetingError) -> [String: String] {
        var targeting: [String: String] = [:]
        var count = 0
        for (key, value) in query {
            count += 1
            guard count <= maxParameters else { throw .tooManyParameters(limit: maxParameters) }
            try validate(key: key)
            guard targeting[key] == nil else { throw .duplicateKey(key) }
            try validate(value: value, key: key)
            targeting[key] = value
        }
        targeting[channelKey] = channel
        guard !copyingHeaders.isEmpty else { return targeting }
        var copied: [String: String] = [:]
        for (name, value) in headers {
            let name = name.lowercased()
            guard copyingHeaders.contains(name) else { continue }
            copied[name] = copied[name].map { $0 + ", " + value } ?? value
        }
        for (name, value) in copied {
            let printable = value.utf8.prefix(maxHeaderValueLength).map { $0 >= 0x20 && $0 <= 0x7E ? $0 : UInt8(ascii: "?") }
            targeting[headerPrefix + name] = String(decoding: printable, as: UTF8.self)
        }
        return targeting
    }

    /// ``targeting(channel:query:headers:copyingHeaders:)`` from the raw query (after `?`, still
    /// percent-encoded; `+` is a space; an item without `=` has an empty value).
    public static func targeting(
        channel: String,
        rawQuery: Substring?,
        headers: some Sequence<(name: String, value: String)>,
        copyingHeaders: Set<String>
    ) throws(SessionTargetingError) -> [String: String] {
        try targeting(
            channel: channel,
            query: queryItems(rawQuery ?? ""),
            headers: headers,
            copyingHeaders: copyingHeaders
        )
    }

    /// The decoded `name=value` items of a raw query; empty items (`a=1&&b=2`) are skipped.
    public static func queryItems(_ rawQuery: Substring) throws(SessionTargetingError) -> [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        for item in rawQuery.utf8.split(separator: UInt8(ascii: "&")) {
            let equals = item.firstIndex(of: UInt8(ascii: "="))
            let name = try percentDecode(item[..<(equals ?? item.endIndex)])
            let value = try equals.map { (equals) throws(SessionTargetingError) in
                try percentDecode(item[item.index(after: equals)...])
            } ?? ""
            items.append((name, value))
        }
        return items
    }

    // MARK: - Rules

    static func validate(key: String) throws(SessionTargetingError) {
        guard !reservedKeys.contains(key), !key.hasPrefix(headerPrefix) else { throw .reservedKey(key) }
        let utf8 = key.utf8
        guard !utf8.isEmpty, utf8.allSatisfy(isKeyByte) else { throw .invalidKey(key) }
        guard utf8.count <= maxKeyLength else { throw .keyTooLong(key, limit: maxKeyLength) }
    }

    static func validate(value: String, key: String) throws(SessionTargetingError) {
        let utf8 = value.utf8
        guard utf8.allSatisfy(isValueByte) else { throw .invalidValue(key: key) }
        guard utf8.count <= maxValueLength else { throw .valueTooLong(key: key, limit: maxValueLength) }
    }

    private static func isKeyByte(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9"))
            || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
    }

    private static func isValueByte(_ c: UInt8) -> Bool {
        c >= 0x20 && c <= 0x7E && c != UInt8(ascii: "&") && c != UInt8(ascii: "=")
    }

    private static func percentDecode(_ bytes: Substring.UTF8View.SubSequence) throws(SessionTargetingError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let c = bytes[index]
            if c == UInt8(ascii: "%") {
                let first = bytes.index(after: index)
                guard first < bytes.endIndex, bytes.index(after: first) < bytes.endIndex,
                    let high = hexValue(bytes[first]), let low = hexValue(bytes[bytes.index(after: first)])
                else { throw .invalidPercentEncoding }
                out.append(high << 4 | low)
                index = bytes.index(first, offsetBy: 2)
            } else {
                out.append(c == UInt8(ascii: "+") ? UInt8(ascii: " ") : c)
                index = bytes.index(after: index)
            }
        }
        // Invalid UTF-8 is repaired here and then refused by the printable-ASCII rules.
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// Why a session's targeting was refused: HTTP 400 (``status``) with ``description`` as the body.
public enum SessionTargetingError: Error, Sendable, Hashable, CustomStringConvertible {
    case tooManyParameters(limit: Int)
    /// Empty, or a character outside `a-z 0-9 _ -`.
    case invalidKey(String)
    case keyTooLong(String, limit: Int)
    /// `channel`, `session` or a `header.…` key.
    case reservedKey(String)
    case duplicateKey(String)
    /// A character outside printable ASCII, or `&` / `=`.
    case invalidValue(key: String)
    case valueTooLong(key: String, limit: Int)
    /// `%` not followed by two hex digits.
    case invalidPercentEncoding

    /// The refusal a request with this query is answered with.
    public var refusal: Refusal { Refusal(.badRequest, description) }

    public var description: String {
        switch self {
        case .tooManyParameters(let limit):
            return "too many targeting parameters (at most \(limit))"
        case .invalidKey(let key):
            return "targeting key \(Self.quoted(key)) must be 1 or more of a-z 0-9 _ -"
        case .keyTooLong(let key, let limit):
            return "targeting key \(Self.quoted(key)) is longer than \(limit) characters"
        case .reservedKey(let key):
            return "targeting key \(Self.quoted(key)) is reserved"
        case .duplicateKey(let key):
            return "targeting key \(Self.quoted(key)) appears more than once"
        case .invalidValue(let key):
            return "value of targeting key \(Self.quoted(key)) must be printable ASCII without & or ="
        case .valueTooLong(let key, let limit):
            return "value of targeting key \(Self.quoted(key)) is longer than \(limit) characters"
        case .invalidPercentEncoding:
            return "query has malformed percent-encoding"
        }
    }

    /// `key` in quotes, cut to 40 characters, anything outside printable ASCII shown as `?`:
    /// client text is echoed in a response body and a log line, so it stays one harmless line.
    private static func quoted(_ key: String) -> String {
        let shown = key.utf8.prefix(40).map { $0 >= 0x20 && $0 <= 0x7E ? $0 : UInt8(ascii: "?") }
        return "'" + String(decoding: shown, as: UTF8.self) + (key.utf8.count > 40 ? "…'" : "'")
    }
}
