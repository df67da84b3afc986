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
    ///
    /// - Parameter progress: told each time a piece of a body of several leaves (the send deadline's
    ///   progress).
    ///   - stall: for pieces, how long one may take to be written before the channel is closed.
    func send(
        _ file: OpenFile, from start: Int64, to end: Int64, context: ChannelHandlerContext,
        progress: FullPathProgress? = nil, stall: FileBodyPieces.Stall? = nil, wrap: @escaping (IOData) -> NIOAny
    ) -> EventLoopFuture<Void> {
        switch self {
        case .sendfile:
            guard Self.corks(bodyLength: end - start) else {
                let region = FileRegion(fileHandle: file.handle, readerIndex: Int(start), endIndex: Int(end))
                return context.writeAndFlush(wrap(.fileRegion(region)))
            }
            OriginHTTPHandler.cork(true, context: context)
            let done = context.eventLoop.makePromise(of: Void.self)
            Self.sendSlices(file, Self.slices(from: start, to: end)[...], context: context, progress: progress, wrap: wrap, done: done)
            done.futureResult.assumeIsolated().whenComplete { _ in OriginHTTPHandler.cork(false, context: context) }
            return done.futureResult
        case .pieces:
            let promise = context.eventLoop.makePromise(of: Void.self)
            FileBodyPieces.send(
                file, offset: start, count: end - start, context: context, progress: progress, stall: stall,
                wrap: { wrap(.byteBuffer($0)) }, done: promise)
            return promise.futureResult
        }
    }
}

extension FileBodySending {
    /// The most one `FileRegion` of a body carries: a larger body goes out as several, each written
    /// once the one before it has left, so the connection becomes writable between them — the
    /// progress the send deadline (``ConnectionLimits/sendTimeout``) looks for. One region for the
    /// whole file would keep the connection unwritable until nearly all of it had gone, and a slow
    /// but reading client would look like one that reads nothing. (Bodies up to this size, most
    /// segments, still go in one region, as before.)
    static let sendfileSlice: Int64 = 512 * 1024

    /// Whether a `sendfile` body of `bodyLength` bytes goes out corked: every body over
    /// ``OriginHTTPHandler/corkedBodyThreshold``, whether it fits one slice or takes several.
    static func corks(bodyLength: Int64) -> Bool { bodyLength > OriginHTTPHandler.corkedBodyThreshold }

    /// The `FileRegion`s a `sendfile` body of bytes `start..<end` goes out in, one after another:
    /// slices of ``sendfileSlice``, the last one shorter.
    static func slices(from start: Int64, to end: Int64) -> [Range<Int64>] {
        stride(from: start, to: end, by: Int(sendfileSlice)).map { $0..<min(end, $0 + sendfileSlice) }
    }

    private static func sendSlices(
        _ file: OpenFile, _ slices: ArraySlice<Range<Int64>>, context: ChannelHandlerContext, progress: FullPathProgress?,
        wrap: @escaping (IOData) -> NIOAny, done: EventLoopPromise<Void>
    ) {
        guard let slice = slices.first else { return done.succeed() }
        let region = FileRegion(fileHandle: file.handle, readerIndex: Int(slice.lowerBound), endIndex: Int(slice.upperBound))
        context.writeAndFlush(wrap(.fileRegion(region))).assumeIsolated().whenComplete { result in
            switch result {
            case .success where slices.count > 1:
                progress?.lastSend = .now()
                sendSlices(file, slices.dropFirst(), context: context, progress: progress, wrap: wrap, done: done)
            case .success: done.succeed()
            case .failure(let error): done.fail(error)
            }
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

    /// The send deadline of one piece (``ConnectionLimits/sendTimeout``). On an HTTP/2 stream the
    /// connection's writability shows nothing of a client that reads the socket but never opens
    /// its flow-control window: its stream's pieces simply stop being written, and would hold the
    /// file open for as long as the connection lasts. A piece not written within `timeout` closes
    /// the channel it is written on — an HTTP/2 stream is reset, an HTTP/1 connection closed.
    struct Stall {
        var timeout: TimeAmount
        /// Called when a piece missed its deadline, before the channel is closed (to count it).
        var expired: () -> Void
    }

    /// Sends `count` bytes of `file` from `offset`, each piece wrapped by `wrap` (a body part for NIO's
    /// HTTP/1 handlers and HTTP/2's codec), then completes `done` — with an error if a write failed or
    /// the file ended early (it shrank since it was opened: the response cannot be completed).
    static func send(
        _ file: OpenFile,
        offset: Int64,
        count: Int64,
        context: ChannelHandlerContext,
        progress: FullPathProgress? = nil,
        stall: Stall? = nil,
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
                done.fail(FileEndedEarly(path: file.path.description))
                return
            }
            sent += read
            let deadline = stall.flatMap { stall in
                stall.timeout > .zero
                    ? context.eventLoop.assumeIsolated().scheduleTask(in: stall.timeout) {
                        stall.expired()
                        context.close(promise: nil)
                    } : nil
            }
            context.writeAndFlush(wrap(piece)).assumeIsolated().whenComplete { result in
                deadline?.cancel()
                switch result {
                case .success:
                    if sent < count { progress?.lastSend = .now() }
                    next()
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
