import NIOHTTP1

/// The `Host` rule of HTTP/1 (RFC 9112 §3.2): "A server MUST respond with a 400 (Bad Request)
/// status code to any HTTP/1.1 request message that lacks a Host header field and to any request
/// message that contains more than one Host header field line or a Host header field with an
/// invalid field value."
///
/// Both HTTP/1 paths apply it with this one decision: ``FastRequestScan`` leaves such a request to
/// the full path, where ``ProtocolErrorResponder`` answers the 400 and closes the connection.
/// HTTP/1.0 may omit the field. HTTP/2 carries `:authority` instead and is not checked here.
enum HostField {
    /// What is wrong with a request's `Host` fields; the raw value is the metric's label.
    enum Problem: String, CaseIterable, Sendable {
        case missing = "missing_host"
        case repeated = "duplicate_host"
        case invalid = "invalid_host"

        /// The one-line reason of the 400.
        var reason: String {
            switch self {
            case .missing: "missing Host field (HTTP/1.1 requires one)"
            case .repeated: "more than one Host field"
            case .invalid: "invalid Host field value"
            }
        }
    }

    /// The `Host` field lines of one request, as a scanner meets them.
    struct Count {
        private(set) var lines = 0
        private(set) var allValid = true

        /// One more `Host` line, whose value (without surrounding whitespace) is or is not valid.
        mutating func add(valid: Bool) {
            lines += 1
            allValid = allValid && valid
        }

        /// The problem with the lines counted, in a request of HTTP/1.1 (`http11`) or HTTP/1.0.
        func problem(http11: Bool) -> Problem? {
            if lines > 1 { return .repeated }
            if lines == 0 { return http11 ? .missing : nil }
            return allValid ? nil : .invalid
        }
    }

    /// The problem with `head`'s `Host` fields, as NIO's HTTP/1 decoder delivered them.
    static func problem(_ head: HTTPRequestHead) -> Problem? {
        var count = Count()
        for (name, value) in head.headers where name.utf8.count == 4 && name.lowercased() == "host" {
            count.add(valid: isValidValue(trimmingWhitespace(value.utf8)))
        }
        return count.problem(http11: head.version == .http1_1)
    }

    /// `uri-host [ ":" port ]` (RFC 9112 §3.2, RFC 3986 §3.2.2) by its characters: unreserved,
    /// sub-delims, `%` (percent-encoding), `:` and the brackets of an IP literal. Empty is valid (a
    /// target without an authority). The parts are not checked further: the value names no route,
    /// so what matters is that nothing else (space, `/`, `@`, controls, non-ASCII) hides in it.
    static func isValidValue<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Bool {
        bytes.allSatisfy(isHostCharacter)
    }

    @inline(__always)
    private static func isHostCharacter(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),  // unreserved
            UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),  // sub-delims
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "="),
            UInt8(ascii: "%"), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
            true
        default:
            false
        }
    }

    /// `value` without leading and trailing spaces and tabs (a field value's optional whitespace).
    private static func trimmingWhitespace(_ value: String.UTF8View) -> String.UTF8View.SubSequence {
        var bytes = value[...]
        while let first = bytes.first, HTTPSyntax.isOWS(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, HTTPSyntax.isOWS(last) { bytes = bytes.dropLast() }
        return bytes
    }
}
