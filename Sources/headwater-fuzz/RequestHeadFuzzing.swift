#if DEBUG
@testable import HeadwaterHTTP
import NIOCore
import NIOEmbedded
import NIOHTTP1

/// The HTTP/1 request-head scanner of the fast path (``FastRequestScan``) against NIO's
/// `HTTPRequestDecoder`, the full path's parser, on the same bytes. The fast path answers a
/// request only when the scanner says `.fast`, so there the full path must agree: it accepts the
/// head, ending where the scanner says, with the same method, target and version, the same value
/// of every request field the responder reads, no body and keep-alive. A head the scanner calls
/// complete (`.full`) must be complete for NIO too, and have a body exactly when NIO sees framing
/// fields. Where the scanner declines (`.unrecognized`, `.incomplete`), the full path decides
/// alone, so there is nothing to compare.
enum RequestHeadFuzzing {
    static func run(_ bytes: [UInt8]) {
        let scan = bytes.withUnsafeBufferPointer { FastRequestScan.scan($0) }
        switch scan {
        case .fast(let head):
            precondition(head.length <= bytes.count)
            compareFast(head, Array(bytes[0..<head.length]))
        case .full(let length, let mayHaveBody):
            precondition(length <= bytes.count)
            compareFull(length: length, mayHaveBody: mayHaveBody, Array(bytes[0..<length]))
        case .unrecognized, .incomplete:
            break
        }
    }

    private static func compareFast(_ head: FastRequestHead, _ bytes: [UInt8]) {
        let text = { (range: Range<Int>) in String(decoding: bytes[range], as: UTF8.self) }
        guard let parts = decode(bytes) else {
            fatalError("the fast path answers a head NIO refuses: \(String(reflecting: String(decoding: bytes, as: UTF8.self)))")
        }
        guard parts.count == 2, case .head(let nio) = parts[0], case .end(nil) = parts[1] else {
            fatalError("NIO does not see one bodiless request in the fast head: \(parts)")
        }
        precondition(nio.method == (head.method == .get ? .GET : .HEAD), "method: \(nio.method) vs \(head.method)")
        precondition(nio.uri == text(head.target), "target: \(nio.uri) vs \(text(head.target))")
        precondition(nio.version == .http1_1, "version: \(nio.version)")
        precondition(nio.isKeepAlive, "the fast path keeps a connection NIO would close")
        for field in OriginRequest.Field.allCases {
            let ours: Range<Int>??
            switch field {
            case .acceptEncoding: ours = head.acceptEncoding
            case .range: ours = head.range
            case .authorization: ours = head.authorization
            case .userAgent: ours = head.userAgent
            case .referer: ours = head.referer
            case .playbackSessionID: ours = head.sessionID
            case .ifRange, .ifMatch, .ifNoneMatch, .ifModifiedSince, .ifUnmodifiedSince: ours = .none
            }
            // NIO keeps whitespace after a value, which is not part of it (RFC 9110 §5.5).
            let theirs = nio.headers[field.name].map { String($0.reversed().drop { $0 == " " || $0 == "\t" }.reversed()) }
            switch ours {
            case .none:
                precondition(theirs.isEmpty, "a conditional request on the fast path: \(field.name)")
            case .some(let range):
                let expected = range.map { [text($0)] } ?? []
                precondition(theirs == expected, "\(field.name): NIO reads \(theirs), the scanner \(expected)")
            }
        }
        for name in ["content-length", "transfer-encoding", "expect", "upgrade"] {
            precondition(!nio.headers.contains(name: name), "the fast path ignores \(name)")
        }
    }

    private static func compareFull(length: Int, mayHaveBody: Bool, _ bytes: [UInt8]) {
        guard let parts = decode(bytes) else { return }  // NIO refuses it: the full path answers 400
        guard case .head(let nio)? = parts.first else {
            fatalError("the scanner ends a head at \(length) where NIO sees none: \(String(reflecting: String(decoding: bytes, as: UTF8.self)))")
        }
        let framed = nio.headers.contains(name: "content-length") || nio.headers.contains(name: "transfer-encoding")
        precondition(framed == mayHaveBody, "mayHaveBody \(mayHaveBody), NIO's head \(nio.headers)")
        if !mayHaveBody, nio.method != .CONNECT {
            precondition(parts.count == 2 && parts[1] == .end(nil), "NIO sees more than a bodiless request: \(parts)")
        }
    }

    /// The server's limits (``OriginServerConfiguration/maxRequestHeadBytes``'s default).
    static let limits: NIOHTTPDecoderLimitConfiguration = {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = 16 * 1024
        limits.maxHeaderListSize = 16 * 1024
        return limits
    }()

    /// What NIO's decoder makes of `bytes` as the full path configures it; `nil` if it refuses them.
    static func decode(_ bytes: [UInt8]) -> [HTTPServerRequestPart]? {
        let channel = EmbeddedChannel(
            handler: ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: limits)))
        defer { _ = try? channel.finish() }
        do {
            try channel.writeInbound(ByteBuffer(bytes: bytes))
        } catch {
            return nil
        }
        var parts: [HTTPServerRequestPart] = []
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) { parts.append(part) }
        return parts
    }
}
#endif
