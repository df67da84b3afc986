import Logging
import NIOCore
import NIOHTTP1

/// The access log: one line per request in the combined log format plus Headwater's fields
/// (README.md "Logs, metrics and health"), logged at `info` to the access logger (label
/// ``OriginServer/accessLogLabel`` in the executable) with the same facts as metadata:
///
/// ```
/// 127.0.0.1 - - [21/Nov/2026:20:17:39 +0000] "GET /live/demo/v1.m3u8 HTTP/1.1" 200 519 "-" "Lavf/59.27.100" rt=0.000153 cache=HIT sid=- enc=gzip
/// ```
///
/// Quoted fields escape `"`, `\` and bytes outside printable ASCII as `\xHH` (as nginx does);
/// `sid=` carries `X-Playback-Session-Id` escaped the same way, spaces included.
struct AccessLogEntry {
    var client: String
    /// Unix seconds when the request head arrived.
    var receivedAt: Int64
    var method: HTTPMethod
    var uri: String
    var version: HTTPVersion
    /// The route template (`http.route`), `invalid` for a target that failed to parse.
    var route: String
    /// The path without the query, for metadata.
    var path: String
    var status: HTTPResponseStatus
    /// Body bytes sent (0 for `HEAD` and bodiless statuses).
    var bytes: Int64
    var referer: String?
    var userAgent: String?
    var sessionID: String?
    var cacheStatus: CacheStatus
    var contentEncoding: String?
    /// The identity size of a playlist body that was sent, for the gzip metrics.
    var uncompressedLength: Int64?
    var started: NIODeadline

    /// Longest request-target written to the line; longer ones end in `...`.
    static let maxTargetLength = 2048

    /// `rt`: seconds with µs precision.
    func line(duration: Int64, time: String? = nil) -> String {
        var bytes: [UInt8] = []
        appendLine(to: &bytes, duration: duration, time: time ?? Self.commonLogTime(unixSeconds: receivedAt))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The line's bytes (no line feed); `time` is ``commonLogTime(unixSeconds:)`` of ``receivedAt``
    /// (formatted once per second by the caller's ``ResponseDates``).
    ///
    /// Fields are copied as whole runs of bytes where they need no escaping (nearly always), not a
    /// byte at a time: this runs on every request.
    func appendLine(to line: inout [UInt8], duration: Int64, time: String) {
        line.reserveCapacity(line.count + 192 + uri.utf8.count + (userAgent?.utf8.count ?? 0))
        Self.append(client, to: &line)
        Self.append(" - - [", to: &line)
        Self.append(time, to: &line)
        Self.append("] \"", to: &line)
        Self.append(method.rawValue, to: &line)
        line.append(UInt8(ascii: " "))
        Self.appendRedactedTarget(uri, to: &line)
        Self.append(" HTTP/", to: &line)
        Self.appendDecimal(version.major, to: &line)
        line.append(UInt8(ascii: "."))
        Self.appendDecimal(version.minor, to: &line)
        Self.append("\" ", to: &line)
        Self.appendDecimal(Int(status.code), to: &line)
        line.append(UInt8(ascii: " "))
        Self.appendDecimal(Int(bytes), to: &line)
        Self.append(" \"", to: &line)
        Self.appendEscaped(referer ?? "-", to: &line)
        Self.append("\" \"", to: &line)
        Self.appendEscaped(userAgent ?? "-", to: &line)
        Self.append("\" rt=", to: &line)
        let micros = max(0, duration)
        Self.appendDecimal(Int(micros / 1_000_000), to: &line)
        line.append(UInt8(ascii: "."))
        var scale = 100_000
        let fraction = Int(micros % 1_000_000)
        while scale > 0 {  // six digits, as FixedPoint.seconds(micros:digits: 6)
            line.append(UInt8(ascii: "0") + UInt8(fraction / scale % 10))
            scale /= 10
        }
        Self.append(" cache=", to: &line)
        Self.append(cacheStatus.rawValue, to: &line)
        Self.append(" sid=", to: &line)
        if let sessionID {
            Self.appendEscaped(sessionID, to: &line, escapingSpace: true)
        } else {
            line.append(UInt8(ascii: "-"))
        }
        Self.append(" enc=", to: &line)
        Self.append(contentEncoding ?? "-", to: &line)
    }

    /// Logs the line through `logger`, with the same facts as metadata (the server's own access
    /// log takes the line's bytes alone, through ``AccessLogLines``).
    /// - Parameter time: ``commonLogTime(unixSeconds:)`` of ``receivedAt``, if the caller has it.
    /// - Parameter finished: when the response was done (now, unless the caller has read the clock).
    func log(to logger: Logger, error: (any Error)?, time: String? = nil, finished: NIODeadline = .now()) {
        let micros = (finished - started).nanoseconds / 1000
        var metadata: Logger.Metadata = [
            "client.address": "\(client)",
            "http.request.method": "\(method.rawValue)",
            "url.path": "\(path)",
            "http.route": "\(route)",
            "http.response.status_code": "\(status.code)",
            "http.response.body.size": "\(bytes)",
            "http.server.request.duration_us": "\(micros)",
            "headwater.cache": "\(cacheStatus.rawValue)",
        ]
        if let sessionID { metadata["http.request.header.x-playback-session-id"] = "\(sessionID)" }
        if let userAgent { metadata["user_agent.original"] = "\(userAgent)" }
        if let contentEncoding { metadata["http.response.header.content-encoding"] = "\(contentEncoding)" }
        if let error { metadata["error.type"] = "\(error)" }
        logger.info("\(line(duration: micros, time: time))", metadata: metadata)
    }

    private static func appendDecimal(_ value: Int, to line: inout [UInt8]) {
        if value < 0 { line.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // up to 24 digits, last first
        let count = withUnsafeMutableBytes(of: &digits) { buffer in
            var count = 0
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            return count
        }
        withUnsafeBytes(of: &digits) { buffer in
            for index in stride(from: count - 1, through: 0, by: -1) { line.append(buffer[index]) }
        }
    }

    /// Appends `text`'s bytes as they are.
    @inline(__always)
    private static func append(_ text: String, to line: inout [UInt8]) {
        if let done: Void = text.utf8.withContiguousStorageIfAvailable({ line.append(contentsOf: $0) }) { return done }
        line.append(contentsOf: text.utf8)
    }

    @inline(__always)
    private static func append(_ text: StaticString, to line: inout [UInt8]) {
        text.withUTF8Buffer { line.append(contentsOf: $0) }
    }

    /// The request-target, without session signatures (``forEachRedactedRun(of:_:)``), escaped
    /// and cut at ``maxTargetLength``. Runs that need no escaping (nearly all) are copied whole.
    private static func appendRedactedTarget(_ uri: String, to line: inout [UInt8]) {
        var uri = uri
        uri.withUTF8 { bytes in
            if bytes.count <= maxTargetLength {  // never cut: each run copied or escaped on its own
                forEachRedactedRun(of: bytes) { run in
                    if run.allSatisfy(Escaper.isPlain) {
                        line.append(contentsOf: run)
                    } else {
                        var escaper = Escaper(limit: .max)
                        for byte in run { _ = escaper.append(byte, to: &line) }
                    }
                }
            } else {
                var escaper = Escaper(limit: maxTargetLength)
                forEachRedactedRun(of: bytes) { run in
                    for byte in run { _ = escaper.append(byte, to: &line) }
                }
            }
        }
    }

    /// `uri` with the signature of every `session=<payload>.<signature>` token replaced by `-`: a
    /// signed session token is a credential (whoever holds it gets that viewer's playlists until it
    /// expires), so logs keep only its payload, which still identifies the session. A key token
    /// (`token=…` on a key URI) is a credential with nothing to identify, so all of it is `-`; so is
    /// the value of any item whose name is percent-encoded (`%74oken=` is `token=` to the router).
    static func redactingSessionSignatures(_ uri: String) -> String {
        var uri = uri
        var output: [UInt8] = []
        uri.withUTF8 { bytes in
            output.reserveCapacity(bytes.count)
            forEachRedactedRun(of: bytes) { output.append(contentsOf: $0) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Calls `body` with the bytes of ``redactingSessionSignatures(_:)`` of `uri`, in runs, without
    /// building it: the runs of `uri` kept, and `-` for each signature left out. A stitched
    /// playlist's URI carries a token of a hundred bytes or so, on every reload of every viewer, so
    /// the access log copies these runs whole.
    static func forEachRedactedRun(of uri: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        guard let query = uri.firstIndex(of: UInt8(ascii: "?")),
            uri[query...].contains(UInt8(ascii: ".")) || uri[query...].contains(UInt8(ascii: "t"))
                || uri[query...].contains(UInt8(ascii: "%"))
        else {
            body(uri)
            return
        }
        var runStart = 0
        var index = query  // the path is no query item
        var itemStart = true
        var inValue = false  // inside the value of a `session` item
        var nameLength = 0  // bytes of the item's name so far…
        var nameIsSessionSoFar = true  // …and whether they are a prefix of `session`
        var nameIsTokenSoFar = true  // …or of `token`
        var nameIsEncoded = false  // …and whether they hold a `%`
        while index < uri.count {
            let byte = uri[index]
            // Whether what follows this byte, to the item's end, is a credential: a key token (or
            // any value under an encoded name) after its `=`, a session signature after its `.`.
            var credentialFollows = false
            if byte == UInt8(ascii: "&") || byte == UInt8(ascii: "?") {
                itemStart = true
                inValue = false
                nameLength = 0
                nameIsSessionSoFar = true
                nameIsTokenSoFar = true
                nameIsEncoded = false
            } else if itemStart {
                if byte == UInt8(ascii: "=") {
                    itemStart = false
                    inValue = nameIsSessionSoFar && nameLength == Self.sessionName.count
                    credentialFollows = (nameIsTokenSoFar && nameLength == Self.tokenName.count) || nameIsEncoded
                } else {
                    nameIsSessionSoFar = nameIsSessionSoFar && nameLength < Self.sessionName.count
                        && Self.sessionName[nameLength] == byte
                    nameIsTokenSoFar = nameIsTokenSoFar && nameLength < Self.tokenName.count
                        && Self.tokenName[nameLength] == byte
                    nameIsEncoded = nameIsEncoded || byte == UInt8(ascii: "%")
                    nameLength += 1
                }
            } else if inValue, byte == UInt8(ascii: ".") {
                credentialFollows = true
            }
            if credentialFollows {
                // Kept through this byte, then `-`, then nothing to the item's end.
                body(UnsafeBufferPointer(rebasing: uri[runStart...index]))
                ("-" as StaticString).withUTF8Buffer { body($0) }
                index += 1
                while index < uri.count, uri[index] != UInt8(ascii: "&"), uri[index] != UInt8(ascii: "?") { index += 1 }
                runStart = index
                continue
            }
            index += 1
        }
        if runStart < uri.count { body(UnsafeBufferPointer(rebasing: uri[runStart...])) }
    }

    private static let sessionName: [UInt8] = Array("session".utf8)
    private static let tokenName: [UInt8] = Array("token".utf8)

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `21/Nov/2026:20:17:39 +0000`: the combined log format's time, in UTC.
    static func commonLogTime(unixSeconds: Int64) -> String {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let secondOfDay = Int(unixSeconds - days * 86_400)
        let (year, month, day) = HTTPDate.civilDate(daysSinceEpoch: days)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(day))/\(Self.months[month - 1])/\(year):\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60))"
            + ":\(two(secondOfDay % 60)) +0000"
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Appends `text` with `"`, `\` and bytes outside printable ASCII as `\xHH` (and spaces too
    /// with `escapingSpace`), at most `limit` bytes of it, then `...` if it was longer.
    static func appendEscaped(_ text: String, to line: inout [UInt8], limit: Int = 1024, escapingSpace: Bool = false) {
        let copied: Bool? = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.count <= limit,
                bytes.allSatisfy({ Escaper.isPlain($0) && !(escapingSpace && $0 == UInt8(ascii: " ")) })
            else { return false }
            line.append(contentsOf: bytes)
            return true
        }
        if copied == true { return }
        var escaper = Escaper(limit: limit, escapingSpace: escapingSpace)
        for byte in text.utf8 {
            guard escaper.append(byte, to: &line) else { return }
        }
    }

    /// ``appendEscaped(_:to:limit:escapingSpace:)`` one byte at a time.
    struct Escaper {
        let limit: Int
        let escapingSpace: Bool
        private var count = 0

        init(limit: Int, escapingSpace: Bool = false) {
            self.limit = limit
            self.escapingSpace = escapingSpace
        }

        /// Whether `byte` goes into a line as it is (printable ASCII and space, but `"` and `\`).
        @inline(__always)
        static func isPlain(_ byte: UInt8) -> Bool {
            byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
        }

        /// Appends `byte`, escaped; `false` (having appended `...`) once `limit` bytes were taken.
        @inline(__always)
        mutating func append(_ byte: UInt8, to line: inout [UInt8]) -> Bool {
            if count < 0 { return false }
            if count == limit {
                line.append(contentsOf: "...".utf8)
                count = -1
                return false
            }
            count += 1
            if Self.isPlain(byte) && !(escapingSpace && byte == UInt8(ascii: " ")) {
                line.append(byte)
            } else {
                line.append(UInt8(ascii: "\\"))
                line.append(UInt8(ascii: "x"))
                line.append(AccessLogEntry.hexDigits[Int(byte >> 4)])
                line.append(AccessLogEntry.hexDigits[Int(byte & 0xF)])
            }
            return true
        }
    }
}

extension AccessLogEntry {
    /// The one entry builder, for every framing (fast HTTP/1, NIO's HTTP/1, HTTP/2): the request's
    /// own facts from `request`, the answer's from the arguments.
    /// - Parameters:
    ///   - route: the route template (`http.route`), `nil` if the target did not parse (logged as
    ///     `invalid`, its metadata path the target's first 256 characters, quoted).
    ///   - bytes: body bytes sent (0 for `HEAD` and bodiless statuses).
    init(
        request: OriginRequest, route: String?, client: String, receivedAt: Int64, started: NIODeadline,
        status: HTTPResponseStatus, bytes: Int64, cacheStatus: CacheStatus, contentEncoding: String?,
        uncompressedLength: Int64?
    ) {
        let target = request.target
        self.init(
            client: client,
            receivedAt: receivedAt,
            method: request.method,
            uri: target,
            version: request.version,
            route: route ?? "invalid",
            // Never the query: a stitched playlist's carries the viewer's signed session token.
            path: route == nil ? String(target.prefix(256)).debugDescription : Self.pathOnly(target),
            status: status,
            bytes: bytes,
            referer: request.fields.referer,
            userAgent: request.fields.userAgent,
            sessionID: request.fields.playbackSessionID.map { String($0.prefix(128)) },
            cacheStatus: status == .notModified ? .revalidated : cacheStatus,
            contentEncoding: contentEncoding,
            uncompressedLength: uncompressedLength,
            started: started
        )
    }

    /// ``init(request:route:client:receivedAt:started:status:bytes:cacheStatus:contentEncoding:uncompressedLength:)``
    /// with the answer's facts taken from `response`.
    init(
        request: OriginRequest, route: String?, client: String, receivedAt: Int64, started: NIODeadline,
        response: OriginResponse, bytes: Int64
    ) {
        self.init(
            request: request, route: route, client: client, receivedAt: receivedAt, started: started,
            status: response.status, bytes: bytes, cacheStatus: response.cacheStatus,
            contentEncoding: response.headers.first(name: "content-encoding"),
            uncompressedLength: response.uncompressedLength)
    }

    /// `target` up to its query: `target` itself, shared, when it has none (a segment's, nearly
    /// always; no copy, no walk over characters on the hot path).
    static func pathOnly(_ target: String) -> String {
        guard let query = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return target }
        return String(target[..<query])
    }
}
