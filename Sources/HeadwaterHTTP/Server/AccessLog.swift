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
    func line(duration: Int64) -> String {
        var line = client
        line.append(" - - [")
        line.append(Self.commonLogTime(unixSeconds: receivedAt))
        line.append("] \"")
        line.append(method.rawValue)
        line.append(" ")
        Self.appendEscaped(Self.redactingSessionSignatures(uri), to: &line, limit: Self.maxTargetLength)
        line.append(" HTTP/\(version.major).\(version.minor)\" \(status.code) \(bytes) \"")
        Self.appendEscaped(referer ?? "-", to: &line)
        line.append("\" \"")
        Self.appendEscaped(userAgent ?? "-", to: &line)
        line.append("\" rt=")
        line.append(FixedPoint.seconds(micros: duration, digits: 6))
        line.append(" cache=")
        line.append(cacheStatus.rawValue)
        line.append(" sid=")
        if let sessionID {
            Self.appendEscaped(sessionID, to: &line, escapingSpace: true)
        } else {
            line.append("-")
        }
        line.append(" enc=")
        line.append(contentEncoding ?? "-")
        return line
    }

    func log(to logger: Logger, error: (any Error)?) {
        let micros = (NIODeadline.now() - started).nanoseconds / 1000
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
        logger.info("\(line(duration: micros))", metadata: metadata)
    }

    /// `uri` with the signature of every `session=<payload>.<signature>` token replaced by `-`: a
    /// signed session token is a credential (whoever holds it gets that viewer's playlists until it
    /// expires), so logs keep only its payload, which still identifies the session.
    static func redactingSessionSignatures(_ uri: String) -> String {
        guard let query = uri.utf8.firstIndex(of: UInt8(ascii: "?")), uri.utf8[query...].contains(UInt8(ascii: ".")) else {
            return uri
        }
        var output: [UInt8] = []
        output.reserveCapacity(uri.utf8.count)
        var inValue = false  // inside the value of a `session` item
        var signature = false  // past its `.`
        var itemStart = true
        var name: [UInt8] = []
        for byte in uri.utf8 {
            if byte == UInt8(ascii: "&") || byte == UInt8(ascii: "?") {
                inValue = false
                signature = false
                itemStart = true
                name.removeAll(keepingCapacity: true)
                output.append(byte)
                continue
            }
            if itemStart {
                if byte == UInt8(ascii: "=") {
                    itemStart = false
                    inValue = name == Array("session".utf8)
                } else {
                    name.append(byte)
                }
                output.append(byte)
                continue
            }
            if inValue, byte == UInt8(ascii: ".") {
                signature = true
                output.append(contentsOf: ".-".utf8)
                continue
            }
            if !signature { output.append(byte) }
        }
        return String(decoding: output, as: UTF8.self)
    }

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

    private static let hexDigits: [Character] = Array("0123456789ABCDEF")

    /// Appends `text` with `"`, `\` and bytes outside printable ASCII as `\xHH` (and spaces too
    /// with `escapingSpace`), at most `limit` bytes of it, then `...` if it was longer.
    static func appendEscaped(_ text: String, to line: inout String, limit: Int = 1024, escapingSpace: Bool = false) {
        var count = 0
        for byte in text.utf8 {
            if count == limit {
                line.append("...")
                return
            }
            count += 1
            let printable = byte > 0x20 && byte < 0x7F || (byte == 0x20 && !escapingSpace)
            if printable && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                line.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                line.append("\\x")
                line.append(Self.hexDigits[Int(byte >> 4)])
                line.append(Self.hexDigits[Int(byte & 0xF)])
            }
        }
    }
}
