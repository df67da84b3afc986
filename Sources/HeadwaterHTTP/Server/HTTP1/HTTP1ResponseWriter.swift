import NIOCore
import NIOHTTP1

/// The one HTTP/1.1 response-head writer: every response head Headwater sends on HTTP/1.1 is
/// written by it — by ``HTTP1ResponseEncoder`` on the full path, and into the fast path's caches
/// (``PreencodedPlaylists``, ``PreencodedFileHeads``), which are its output kept for a second, not a
/// second writer.
///
/// Field names must be tokens and values free of CR, LF and NUL (RFC 9110 §5.5); a field that is
/// not is never written — the head is refused whole (`false`), so a value that came from outside
/// (a header an ad rule echoed, a file name) cannot split a response.
enum HTTP1ResponseWriter {
    /// Status line, fields and the empty line; `false` (and `bytes` unchanged) if a field is invalid.
    @discardableResult
    static func writeHead(status: HTTPResponseStatus, fields: HTTPHeaders, to bytes: inout ByteBuffer) -> Bool {
        for (name, value) in fields where !isValidField(name, value) { return false }
        writeStatusLine(status, to: &bytes)
        for (name, value) in fields { writeValidatedField(name, value, to: &bytes) }
        bytes.writeStaticString("\r\n")
        return true
    }

    /// `HTTP/1.1 <code> <reason>` and its line end (a 200's and a 206's from constants).
    static func writeStatusLine(_ status: HTTPResponseStatus, to bytes: inout ByteBuffer) {
        switch status {
        case .ok: bytes.writeStaticString("HTTP/1.1 200 OK\r\n")
        case .partialContent: bytes.writeStaticString("HTTP/1.1 206 Partial Content\r\n")
        default: bytes.writeString("HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n")
        }
    }

    /// `<name>: <value>` and its line end, if the field is valid; `false` if not (nothing written).
    @discardableResult
    static func writeField(_ name: String, _ value: String, to bytes: inout ByteBuffer) -> Bool {
        guard isValidField(name, value) else { return false }
        writeValidatedField(name, value, to: &bytes)
        return true
    }

    private static func writeValidatedField(_ name: String, _ value: String, to bytes: inout ByteBuffer) {
        bytes.writeString(name)
        bytes.writeStaticString(": ")
        bytes.writeString(value)
        bytes.writeStaticString("\r\n")
    }

    /// A token name (RFC 9110 §5.1) and a value without CR, LF or NUL (§5.5).
    static func isValidField(_ name: String, _ value: String) -> Bool {
        guard !name.utf8.isEmpty, name.utf8.allSatisfy(HTTPSyntax.isTokenCharacter) else { return false }
        return !value.utf8.contains { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") || $0 == 0 }
    }
}

/// NIO's HTTP/1 response parts to bytes, through ``HTTP1ResponseWriter``: the full path's encoder
/// (in place of NIO's `HTTPResponseEncoder`, so the full and fast paths share one writer).
///
/// Every response Headwater makes carries `Content-Length` (or has no body), so bodies pass
/// through as they are, never chunked. A head with an invalid field fails its write with
/// ``InvalidResponseHead`` and the connection is closed, as NIO's header validator would.
final class HTTP1ResponseEncoder: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = IOData

    struct InvalidResponseHead: Error {}

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            var bytes = context.channel.allocator.buffer(capacity: 256)
            guard HTTP1ResponseWriter.writeHead(status: head.status, fields: head.headers, to: &bytes) else {
                promise?.fail(InvalidResponseHead())
                context.fireErrorCaught(InvalidResponseHead())
                return
            }
            context.write(wrapOutboundOut(.byteBuffer(bytes)), promise: promise)
        case .body(let body):
            context.write(wrapOutboundOut(body), promise: promise)
        case .end:
            // Nothing to write (no chunked framing), but the promise must still follow the bytes
            // written before it: an empty write completes in order with them.
            context.write(wrapOutboundOut(.byteBuffer(ByteBuffer())), promise: promise)
        }
    }
}

@available(*, unavailable)
extension HTTP1ResponseEncoder: Sendable {}
