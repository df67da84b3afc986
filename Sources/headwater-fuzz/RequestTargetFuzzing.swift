import HeadwaterHTTP

/// The request-target parser (``RequestTarget``, a security boundary: every path segment that
/// reaches a store or `Public/` went through it) and the router (``Route``) on what they get: the
/// request line's target as a string.
enum RequestTargetFuzzing {
    static func run(_ bytes: [UInt8]) {
        let uri = String(decoding: bytes, as: UTF8.self)
        if case .success(let target) = RequestTarget.parse(uri) {
            check(target, uri: uri)
        }
        if case .success(let route) = Route.parse(uri) {
            check(route)
        }
    }

    /// The parts rebuild the target; no segment could step outside a root; percent-encoding every
    /// decoded segment and item again parses back to the same values.
    private static func check(_ target: RequestTarget, uri: String) {
        precondition(String(target.path) + (target.rawQuery.map { "?" + $0 } ?? "") == uri, "the parts do not rebuild \(uri)")
        for (index, segment) in target.segments.enumerated() {
            precondition(isContained(segment), "segment \(String(reflecting: segment)) of \(uri)")
            precondition(!segment.isEmpty || index == target.segments.count - 1, "an empty segment inside \(uri)")
        }
        let path = "/" + target.segments.map(percentEncoded).joined(separator: "/")
        let query = target.query.items.map { percentEncoded($0.name) + "=" + percentEncoded($0.value) }.joined(separator: "&")
        let rebuilt = query.isEmpty ? path : path + "?" + query
        // Percent-encoding lengthens what was sent raw (`[` is `%5B`): past the length limits the
        // re-encoded form is refused for its length alone (414), which says nothing of the parts.
        if path.utf8.count > RequestTarget.maximumPathLength || query.utf8.count > RequestTarget.maximumQueryLength { return }
        guard case .success(let again) = RequestTarget.parse(rebuilt) else {
            fatalError("\(rebuilt) (re-encoded from \(uri)) does not parse")
        }
        precondition(again.segments == target.segments, "\(rebuilt): \(again.segments) vs \(target.segments)")
        precondition(again.query.items == target.query.items, "\(rebuilt): \(again.query.items) vs \(target.query.items)")
    }

    /// Every name a route hands on is a single path component that cannot leave its directory.
    private static func check(_ route: Route) {
        let names: [String]
        switch route {
        case .multivariantPlaylist(let channel): names = [channel]
        case .mediaPlaylist(let channel, let rendition), .iFramePlaylist(let channel, let rendition): names = [channel, rendition]
        case .segment(let channel, let rendition, let name): names = [channel, rendition, name]
        case .sessionMultivariantPlaylist(let channel, _): names = [channel]
        case .stitchedPlaylist(let channel, let rendition, _), .stitchedIFramePlaylist(let channel, let rendition, _):
            names = [channel, rendition]
        case .key(let channel, _, _, _): names = [channel]  // the index is a number the responder checks, never a path
        case .adminBreaks(let channel, _): names = [channel]
        case .ingest(let channel, let path): names = [channel] + path
        case .staticFile(let path):
            names = path
            precondition(!path.contains { $0.isEmpty || $0.hasPrefix(".") }, "a static file \(path) that is a directory or a dot-file")
        case .health, .status, .readiness, .metrics, .server, .notFound:
            names = []
        }
        for name in names { precondition(isContained(name), "route \(route) names \(String(reflecting: name))") }
    }

    private static func isContained(_ name: String) -> Bool {
        name != "." && name != ".." && !name.utf8.contains { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") || $0 < 0x20 || $0 == 0x7F }
    }

    private static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }
}
