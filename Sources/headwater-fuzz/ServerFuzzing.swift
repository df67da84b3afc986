#if DEBUG
import Foundation
@testable import HeadwaterHTTP
import NIOCore
import NIOEmbedded

/// Bytes from a client into one connection of the real server pipeline (``OriginServer``'s
/// handlers on an `EmbeddedChannel`: the fast path, NIO's HTTP/1 decoder and
/// ``OriginHTTPHandler``, or NIOHTTP2 after the h2c preface), then 61 s of silence, then the
/// client goes away. The server must neither crash nor hang; whatever it answers is read and
/// dropped.
///
/// The input's first byte says how the rest arrives: `0` in one read, `n` in reads of `n` bytes
/// (heads split across reads, frames split mid-header).
enum ServerFuzzing {
    /// HTTP/1.1 (and whatever a client sends on the plain port).
    static func http1(_ bytes: [UInt8]) {
        serve(bytes, prefix: [])
    }

    /// HTTP/2 frames after the client preface (h2c with prior knowledge, as on the plain port).
    static func http2(_ bytes: [UInt8]) {
        serve(bytes, prefix: HTTP2Preface.bytes)
    }

    private static func serve(_ bytes: [UInt8], prefix: [UInt8]) {
        guard let first = bytes.first else { return }
        let input = prefix + bytes.dropFirst()
        let readSize = first == 0 ? max(input.count, 1) : Int(first)
        let channel = EmbeddedChannel()
        do {
            try OriginServer.configure(
                channel.pipeline.syncOperations, environment: FuzzedOrigin.environment,
                dates: NIOLoopBoundBox(ResponseDates(), eventLoop: channel.eventLoop), idleTimeout: .seconds(60),
                maxHeadBytes: 16 * 1024, http2: HTTP2Limits())
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080)).wait()
        } catch {
            fatalError("cannot set up the server pipeline: \(error)")
        }
        var start = 0
        while start < input.count, channel.isActive {
            let end = min(start + readSize, input.count)
            // An error the pipeline does not handle reaches its end, where EmbeddedChannel throws
            // it; in the server NIO logs it and the connection goes on, so go on here too.
            _ = try? channel.writeInbound(ByteBuffer(bytes: input[start..<end]))
            drain(channel)
            start = end
        }
        channel.embeddedEventLoop.advanceTime(by: .seconds(61))
        drain(channel)
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    /// Reads and drops what the server wrote (printed with `HEADWATER_FUZZ_TRACE=1`, to see what a
    /// replayed input gets), and what reached the pipeline's end unhandled.
    private static func drain(_ channel: EmbeddedChannel) {
        channel.embeddedEventLoop.run()
        while let data = try? channel.readOutbound(as: IOData.self) {
            guard tracing else { continue }
            switch data {
            case .byteBuffer(let buffer): print("server wrote \(buffer.readableBytes) bytes: \(String(reflecting: String(buffer: buffer)))")
            case .fileRegion(let region): print("server wrote a file region of \(region.readableBytes) bytes")
            }
        }
        while (try? channel.readInbound(as: ByteBuffer.self)) != nil {}
    }

    private static let tracing = ProcessInfo.processInfo.environment["HEADWATER_FUZZ_TRACE"] == "1"
}
#endif
