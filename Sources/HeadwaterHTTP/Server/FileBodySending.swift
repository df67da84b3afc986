import NIOCore

/// How a connection sends a file body: by `sendfile(2)` from the page cache to the socket, or
/// read into memory a piece at a time where the bytes must pass through the process — TLS
/// encrypts them, HTTP/2 frames them under its flow control.
enum FileBodySending: Sendable {
    /// `FileRegion`: plain HTTP/1.1.
    case sendfile
    /// ``FileBodyPieces``: TLS and HTTP/2.
    case pieces
}

extension FileBodySending {
    /// Sends bytes `start..<end` of `file` — what a body has beyond the part written with its head
    /// (``OpenFile/readSmallBody(offset:count:appendingTo:)``) — on both HTTP/1 paths and HTTP/2
    /// streams; `wrap` makes the pipeline's message of a piece of it. The future succeeds once all
    /// of it is written.
    ///
    /// By `sendfile`, a body over ``OriginHTTPHandler/corkedBodyThreshold`` goes out corked.
    func send(
        _ file: OpenFile, from start: Int64, to end: Int64, context: ChannelHandlerContext,
        wrap: @escaping (IOData) -> NIOAny
    ) -> EventLoopFuture<Void> {
        switch self {
        case .sendfile:
            let corked = end - start > OriginHTTPHandler.corkedBodyThreshold
            if corked { OriginHTTPHandler.cork(true, context: context) }
            let region = FileRegion(fileHandle: file.handle, readerIndex: Int(start), endIndex: Int(end))
            let written = context.writeAndFlush(wrap(.fileRegion(region)))
            if corked { written.assumeIsolated().whenComplete { _ in OriginHTTPHandler.cork(false, context: context) } }
            return written
        case .pieces:
            let promise = context.eventLoop.makePromise(of: Void.self)
            FileBodyPieces.send(
                file, offset: start, count: end - start, context: context, wrap: { wrap(.byteBuffer($0)) }, done: promise)
            return promise.futureResult
        }
    }
}

/// Streams a file body in pieces of ``pieceSize`` bytes, the next read only once the previous piece
/// has been written (for an HTTP/2 stream: sent within its flow-control window; for TLS: encrypted
/// and handed to the socket), so a slow reader holds one piece per response, never the file.
enum FileBodyPieces {
    /// nginx's `ssl_buffer_size` is 16 KiB and its output buffers 2×32 KiB; 64 KiB keeps the number of
    /// writes per MiB low while a stalled stream still holds little.
    static let pieceSize: Int64 = 64 * 1024

    /// Sends `count` bytes of `file` from `offset`, each piece wrapped by `wrap` (a body part for NIO's
    /// HTTP/1 handlers and HTTP/2's codec), then completes `done` — with an error if a write failed or
    /// the file ended early (it shrank since it was opened: the response cannot be completed).
    static func send(
        _ file: OpenFile,
        offset: Int64,
        count: Int64,
        context: ChannelHandlerContext,
        wrap: @escaping (ByteBuffer) -> NIOAny,
        done: EventLoopPromise<Void>
    ) {
        var sent: Int64 = 0
        func next() {
            let remaining = count - sent
            guard remaining > 0 else {
                done.succeed()
                return
            }
            let wanted = min(remaining, pieceSize)
            var piece = context.channel.allocator.buffer(capacity: Int(wanted))
            let read = file.read(offset: offset + sent, count: wanted, appendingTo: &piece)
            guard read > 0 else {
                done.fail(FileEndedEarly(path: file.path))
                return
            }
            sent += read
            context.writeAndFlush(wrap(piece)).assumeIsolated().whenComplete { result in
                switch result {
                case .success: next()
                case .failure(let error): done.fail(error)
                }
            }
        }
        next()
    }

    /// The file was shorter than its listed length when its body was read.
    struct FileEndedEarly: Error, CustomStringConvertible {
        let path: String
        var description: String { "\(path) ended before its listed length" }
    }
}
