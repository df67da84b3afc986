import NIOCore
import Testing

@testable import HeadwaterHTTP

/// Inputs the HTTP fuzz targets (Sources/headwater-fuzz: `h2`, `http1`, `request-head`) found, each
/// kept as the smallest request that showed the bug, against a real server on a socket.
@Suite struct HTTPFuzzRegressionTests {
    typealias Frames = HTTP2AbuseTests

    /// An h2c request without `:authority` fails in NIO's HTTP/2-to-HTTP/1 codec while NIOHTTP2 is
    /// still opening its stream. The handler closed the stream there and then, so NIOHTTP2 told its
    /// connection manager the stream was closed before it told it the stream was open: a debug
    /// build (`swift run`, the tests) died on NIOHTTP2's assertion "Can't close stream 1, it wasn't
    /// open"; a release build counted the stream open forever, so the idle timeout never closed the
    /// connection. Found by the `h2` fuzz target in its first hour (``StreamErrorDeferral``).
    @Test("h2c: a request without :authority is reset, the next one answered, and the idle connection closed")
    func requestWithoutAuthority() async throws {
        try await withServer(configure: { $0.idleTimeout = .seconds(1) }) { port in
            let withoutAuthority: [UInt8] = [0x82, 0x86, 0x04] + Frames.hpackString("/healthz")  // GET, http, :path
            var bytes = Frames.preface
            bytes += Frames.frame(type: 0x1, flags: 0x5, stream: 1, withoutAuthority)  // HEADERS, END_STREAM|END_HEADERS
            bytes += Frames.frame(type: 0x1, flags: 0x5, stream: 3, Frames.requestBlock)
            // A client that acknowledges PINGs: the idle close (GOAWAY, PING, close on its ACK) is the server's.
            let (received, closed) = try await Frames.sendAndReadUntilClosed(bytes, port: port, acknowledgingPings: true)
            let frames = Frames.frames(in: received)
            #expect(frames.contains { $0.type == 0x3 && $0.stream == 1 }, "RST_STREAM for stream 1: \(frames.map { ($0.type, $0.stream) })")
            let answer = frames.first { $0.type == 0x1 && $0.stream == 3 }
            #expect(answer?.payload.first == 0x88, "stream 3 answered :status 200 (HPACK static index 8)")
            #expect(Frames.goAwayError(in: received) == 0x0, "GOAWAY(NO_ERROR) at the idle timeout")
            #expect(closed, "the idle connection is closed")
        }
    }
}
