/// What ``OriginFastPath`` needs of one request head, read straight from the received bytes.
///
/// Only the plainest requests qualify: `GET` or `HEAD`, an origin-form target,
/// `HTTP/1.1`, CRLF line ends, well-formed fields, exactly one valid `Host` (``HostField``), none of
/// the conditional fields (`If-*`), none of the framing fields (`Content-Length`, `Transfer-Encoding`,
/// `Expect`, `Upgrade`, a `Connection` other than `keep-alive`), and no request field
/// (``OriginRequest/Field``) repeated. Everything
/// else is left to NIO's HTTP/1 decoder and ``OriginHTTPHandler``, which answer it in full (and
/// reject what is malformed): the fast path decides nothing the full path would decide differently.
///
/// Which request fields it reads is decided by one exhaustive `switch` over
/// ``OriginRequest/Field``: a field added there for a new decision does not compile until this
/// scanner either keeps its value or leaves such requests to the full path.
struct FastRequestHead: Equatable {
    enum Method: Equatable {
        case get, head
    }

    var method: Method
    /// The request-target's byte range.
    var target: Range<Int>
    /// `Accept-Encoding` allows gzip (``AcceptEncoding/acceptsGzip(_:)``).
    var acceptsGzip: Bool
    /// Value ranges of the request fields the fast path reads (``OriginRequest/Fields``).
    var acceptEncoding: Range<Int>?
    /// Segments and static files honour it; playlists go to the full path with one.
    var range: Range<Int>?
    var authorization: Range<Int>?
    var userAgent: Range<Int>?
    var referer: Range<Int>?
    var sessionID: Range<Int>?
    /// Bytes of the head, through the empty line.
    var length: Int
}

extension FastRequestHead {
    /// The request fields kept, as the responder reads them; `value` gives a range's text.
    func fields(_ value: (Range<Int>?) -> String?) -> OriginRequest.Fields {
        OriginRequest.Fields(
            acceptEncoding: value(acceptEncoding), range: value(range), authorization: value(authorization),
            referer: value(referer), userAgent: value(userAgent), playbackSessionID: value(sessionID))
    }
}

/// The verdict on the bytes at the start of a connection's input.
enum FastRequestScan: Equatable {
    /// A complete head the fast path may answer.
    case fast(FastRequestHead)
    /// A complete, well-formed head the full path must answer; `length` bytes long. `mayHaveBody`:
    /// it has `Content-Length` or `Transfer-Encoding`, so the request does not end with its head.
    case full(length: Int, mayHaveBody: Bool)
    /// Not a head the scanner understands (bare LF, folded or malformed fields, another version):
    /// the full path's decoder decides, probably with a 400.
    case unrecognized
    /// No empty line yet: wait for more bytes.
    case incomplete
}

extension FastRequestScan {
    /// Scans the request head at the start of `b`. A head longer than `maxHeadBytes` goes to the
    /// full path, whose decoder answers 431 if its own count (of the target, names and values) is
    /// over the limit too: the fast path never answers what the full path would refuse.
    static func scan(_ b: UnsafeBufferPointer<UInt8>, maxHeadBytes: Int = .max) -> FastRequestScan {
        // Request line: `GET /target HTTP/1.1` or `HEAD /target HTTP/1.1`.
        guard let firstLineEnd = lineEnd(b, from: 0) else { return .incomplete }
        guard let lineFeed = firstLineEnd else { return .unrecognized }
        let line = 0..<lineFeed - 1
        var fast = true
        let method: FastRequestHead.Method
        var i: Int
        if startsWith(b, line, "GET ") {
            method = .get
            i = 4
        } else if startsWith(b, line, "HEAD ") {
            method = .head
            i = 5
        } else {
            // Another method (PUT, POST, OPTIONS…): the full path; still find the head's end.
            method = .get
            fast = false
            guard let space = indexOf(b, UInt8(ascii: " "), in: line) else { return .unrecognized }
            i = space + 1
        }
        let targetStart = i
        while i < line.upperBound, b[i] > 0x20, b[i] < 0x7F { i += 1 }
        let target = targetStart..<i
        guard !target.isEmpty, startsWith(b, i..<line.upperBound, " HTTP/1."), line.upperBound - i == 9 else {
            return .unrecognized
        }
        let http11 = b[line.upperBound - 1] == UInt8(ascii: "1")
        if !http11 { fast = false }  // HTTP/1.0: keep-alive rules differ
        if b[targetStart] != UInt8(ascii: "/") { fast = false }

        // Fields.
        var head = FastRequestHead(method: method, target: target, acceptsGzip: false, length: 0)
        var mayHaveBody = false
        var host = HostField.Count()
        var start = lineFeed + 1
        while true {
            guard let end = lineEnd(b, from: start) else { return .incomplete }
            guard let lineFeed = end else { return .unrecognized }
            let fieldLine = start..<lineFeed - 1
            start = lineFeed + 1
            if fieldLine.isEmpty { break }
            guard let colon = indexOf(b, UInt8(ascii: ":"), in: fieldLine) else { return .unrecognized }
            let name = fieldLine.lowerBound..<colon
            guard !name.isEmpty, name.allSatisfy({ HTTPSyntax.isTokenCharacter(b[$0]) }) else { return .unrecognized }
            var valueStart = colon + 1
            var valueEnd = fieldLine.upperBound
            while valueStart < valueEnd, HTTPSyntax.isOWS(b[valueStart]) { valueStart += 1 }
            while valueEnd > valueStart, HTTPSyntax.isOWS(b[valueEnd - 1]) { valueEnd -= 1 }
            let value = valueStart..<valueEnd
            for index in value where (b[index] < 0x20 && b[index] != UInt8(ascii: "\t")) || b[index] == 0x7F {
                return .unrecognized
            }
            /// Keeps the first value; a repeated field goes to the full path, which joins or picks.
            func keep(_ slot: inout Range<Int>?) {
                if slot != nil { fast = false }
                slot = value
            }
            switch Field(b, name) {
            case .request(let field):
                switch field {
                case .acceptEncoding:
                    keep(&head.acceptEncoding)
                    head.acceptsGzip = AcceptEncoding.acceptsGzip(bytes: UnsafeBufferPointer(rebasing: b[value]))
                case .range: keep(&head.range)
                case .authorization: keep(&head.authorization)
                case .userAgent: keep(&head.userAgent)
                case .referer: keep(&head.referer)
                case .playbackSessionID: keep(&head.sessionID)
                case .ifRange, .ifMatch, .ifNoneMatch, .ifModifiedSince, .ifUnmodifiedSince:
                    fast = false  // conditional requests: the full path
                }
            case .connection:
                if !HTTPSyntax.equalsLowercase(b, value, "keep-alive") { fast = false }
            case .framing:
                mayHaveBody = true
                fast = false
            case .expectOrUpgrade:
                fast = false
            case .host:
                host.add(valid: HostField.isValidValue(UnsafeBufferPointer(rebasing: b[value])))
            case .ignored:
                break
            }
        }
        head.length = start
        // A missing, repeated or invalid `Host`: the full path answers 400 (``ProtocolErrorResponder``).
        if host.problem(http11: http11) != nil { fast = false }
        if start > maxHeadBytes { fast = false }
        return fast ? .fast(head) : .full(length: start, mayHaveBody: mayHaveBody)
    }

    /// The fields the scanner looks at, by lower-cased name: every ``OriginRequest/Field`` (its
    /// name matched as bytes here; `FastRequestScanTests` checks each one is recognised), `Host`,
    /// and HTTP/1's framing fields.
    enum Field: Equatable {
        case request(OriginRequest.Field)
        case connection
        /// `Content-Length`, `Transfer-Encoding`: a body may follow.
        case framing
        case expectOrUpgrade
        /// `Host`: counted and checked (``HostField``).
        case host
        case ignored

        init(_ b: UnsafeBufferPointer<UInt8>, _ name: Range<Int>) {
            func named(_ literal: StaticString) -> Bool { HTTPSyntax.equalsLowercase(b, name, literal) }
            switch name.count {
            case 4 where named("host"): self = .host
            case 5 where named("range"): self = .request(.range)
            case 6 where named("expect"): self = .expectOrUpgrade
            case 7 where named("upgrade"): self = .expectOrUpgrade
            case 7 where named("referer"): self = .request(.referer)
            case 8 where named("if-range"): self = .request(.ifRange)
            case 8 where named("if-match"): self = .request(.ifMatch)
            case 10 where named("connection"): self = .connection
            case 10 where named("user-agent"): self = .request(.userAgent)
            case 13 where named("if-none-match"): self = .request(.ifNoneMatch)
            case 13 where named("authorization"): self = .request(.authorization)
            case 14 where named("content-length"): self = .framing
            case 15 where named("accept-encoding"): self = .request(.acceptEncoding)
            case 17 where named("transfer-encoding"): self = .framing
            case 17 where named("if-modified-since"): self = .request(.ifModifiedSince)
            case 19 where named("if-unmodified-since"): self = .request(.ifUnmodifiedSince)
            case 21 where named("x-playback-session-id"): self = .request(.playbackSessionID)
            default: self = .ignored
            }
        }
    }

    /// The index of the line feed ending the line that starts at `start`: `nil` if there is none yet,
    /// `.some(nil)` if the line ends with a bare LF (not preceded by CR).
    private static func lineEnd(_ b: UnsafeBufferPointer<UInt8>, from start: Int) -> Int?? {
        guard let lineFeed = indexOf(b, UInt8(ascii: "\n"), in: start..<b.count) else { return nil }
        guard lineFeed > start, b[lineFeed - 1] == UInt8(ascii: "\r") else { return .some(nil) }
        return .some(lineFeed)
    }

    private static func indexOf(_ b: UnsafeBufferPointer<UInt8>, _ byte: UInt8, in range: Range<Int>) -> Int? {
        var i = range.lowerBound
        while i < range.upperBound {
            if b[i] == byte { return i }
            i += 1
        }
        return nil
    }

    private static func startsWith(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard range.count >= count else { return false }
        let l = literal.utf8Start
        for j in 0..<count where b[range.lowerBound + j] != l[j] { return false }
        return true
    }
}
