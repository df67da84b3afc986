import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import HeadwaterHTTP

/// The one HTTP/1.1 head writer: what it writes, and that a field which could split a response
/// (CR, LF or NUL in a value; a name that is not a token) is never written — by the full path's
/// encoder or into the fast path's caches.
@Suite struct HTTP1ResponseWriterTests {
    @Test func writesTheStatusLineFieldsAndTheEmptyLine() {
        var bytes = ByteBuffer()
        let ok = HTTP1ResponseWriter.writeHead(
            status: .partialContent, fields: HTTPHeaders([("Content-Range", "bytes 0-1/9"), ("Content-Length", "2")]),
            to: &bytes)
        #expect(ok)
        #expect(String(buffer: bytes) == "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-1/9\r\nContent-Length: 2\r\n\r\n")
        var notFound = ByteBuffer()
        HTTP1ResponseWriter.writeStatusLine(.notFound, to: &notFound)
        #expect(String(buffer: notFound) == "HTTP/1.1 404 Not Found\r\n")
    }

    @Test(arguments: [
        ("X-Echo", "a\r\nSet-Cookie: evil=1"), ("X-Echo", "a\nb"), ("X-Echo", "a\u{0}b"), ("Bad Name", "v"), ("", "v"),
        ("X:Y", "v"),
    ])
    func aFieldThatCouldSplitTheResponseIsNeverWritten(_ name: String, _ value: String) {
        var bytes = ByteBuffer(string: "before")
        #expect(!HTTP1ResponseWriter.writeHead(status: .ok, fields: HTTPHeaders([("Date", "x"), (name, value)]), to: &bytes))
        #expect(String(buffer: bytes) == "before", "nothing written, not even the status line")
        #expect(!HTTP1ResponseWriter.writeField(name, value, to: &bytes))
        #expect(String(buffer: bytes) == "before")
    }

    /// The full path's encoder fails the write of such a head (the connection then closes).
    @Test func theEncoderRefusesAnInvalidHead() throws {
        let channel = EmbeddedChannel(handler: HTTP1ResponseEncoder())
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        let bad = HTTPResponseHead(version: .http1_1, status: .ok, headers: HTTPHeaders([("X-Echo", "a\r\nb: c")]))
        #expect(throws: HTTP1ResponseEncoder.InvalidResponseHead.self) {
            try channel.writeOutbound(HTTPServerResponsePart.head(bad))
        }
        #expect(try channel.readOutbound(as: IOData.self) == nil)
        let good = HTTPResponseHead(version: .http1_1, status: .noContent, headers: HTTPHeaders([("Server", "headwater")]))
        try channel.writeOutbound(HTTPServerResponsePart.head(good))
        guard case .byteBuffer(let bytes) = try channel.readOutbound(as: IOData.self) else {
            Issue.record("no head written")
            return
        }
        #expect(String(buffer: bytes) == "HTTP/1.1 204 No Content\r\nServer: headwater\r\n\r\n")
    }
}
