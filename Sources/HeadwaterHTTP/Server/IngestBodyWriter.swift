import HeadwaterLiveWindow
import NIOCore

/// Carries one upload's body from its connection to its ``IngestUpload``: chunks gathered into
/// batches, one batch written at a time (off the event loop, where the upload runs its writes), the
/// upload finished once the last batch is written.
///
/// Why batches: an encoder, or an attacker, may send a body as a million one-byte chunks; one
/// write per chunk would cost a million system calls and thread hops. Chunks are appended to one
/// buffer, handed over when a read from the socket has been taken apart (``readComplete()``) or
/// when the buffer holds ``batchBytes``, whichever comes first.
///
/// Back-pressure: while a batch is being written the next one keeps filling; once it is full too,
/// ``holdsReads`` turns on and the handler stops asking the socket for more (a held `read`) until
/// the write completes. So an upload holds at most two batches, plus what one read brought, in
/// memory, however fast the client sends and however slow the disk.
///
/// What the handler must do is reported through `report` (``Event``), possibly before the call
/// that caused it returns (a sink whose futures are already complete).
///
/// Loop-bound: made and driven by ``OriginHTTPHandler`` on the connection's event loop, where the
/// upload's futures complete.
final class IngestBodyWriter {
    /// A batch is handed over once it holds this many bytes, even before the read ends.
    static let batchBytes = 256 * 1024

    enum Event {
        /// ``holdsReads`` turned off: ask the socket for more if a read was held.
        case readsReleased
        /// The upload is over: finished (after the body's end) or refused (too large, a failed
        /// write, a failed finish). Reported once; nothing follows.
        case done(Result<Void, Refusal>)
    }

    private enum Phase {
        /// Taking chunks.
        case receiving
        /// The body has ended; the last batches are being written.
        case ended
        /// The last batch is written; the upload is finishing.
        case finishing
        /// The connection went away while a batch was being written: abort when it is.
        case aborting
        /// Finished, refused or aborted.
        case over
    }

    private let upload: any IngestUpload
    private let eventLoop: any EventLoop
    /// The largest body accepted, in bytes.
    private let limit: Int64
    /// A body on `DELETE` means nothing: it is dropped.
    private let dropsBody: Bool
    private let report: (Event) -> Void
    private var phase = Phase.receiving
    /// Chunks not handed over yet.
    private var pending: ByteBuffer?
    /// Body bytes received so far.
    private var received: Int64 = 0
    /// A batch write is outstanding.
    private var writing = false

    init(
        upload: any IngestUpload, eventLoop: any EventLoop, limit: Int64, dropsBody: Bool = false,
        report: @escaping (Event) -> Void
    ) {
        self.upload = upload
        self.eventLoop = eventLoop
        self.limit = limit
        self.dropsBody = dropsBody
        self.report = report
    }

    /// The socket should not be read: a batch is being written and the next one is full.
    var holdsReads: Bool { writing && (pending?.readableBytes ?? 0) >= Self.batchBytes }

    /// The next chunk of the body. A body that grows past the limit is refused (413) at once.
    func append(_ chunk: ByteBuffer) {
        guard case .receiving = phase, !dropsBody else { return }
        received += Int64(chunk.readableBytes)
        guard received <= limit else {
            refuse(Refusal(.tooLarge, "the body is larger than \(limit) bytes"))
            return
        }
        if pending == nil {
            pending = chunk
        } else {
            pending!.writeImmutableBuffer(chunk)
        }
        if pending!.readableBytes >= Self.batchBytes { pump() }
    }

    /// A read from the socket has been taken apart: hand over what it brought.
    func readComplete() {
        if case .receiving = phase { pump() }
    }

    /// The body has ended: write what is left, then finish.
    func end() {
        guard case .receiving = phase else { return }
        phase = .ended
        pump()
    }

    /// The connection is gone before the body ended: discard the upload (once the batch being
    /// written, if any, is). A body that had ended is finished all the same.
    func abort() {
        switch phase {
        case .receiving:
            if writing {
                phase = .aborting
            } else {
                phase = .over
                upload.abort()
            }
        case .ended, .finishing, .aborting, .over:
            break
        }
    }

    /// Starts the next step, unless a write is in flight: the next batch's write, or, once the body
    /// has ended and all of it is written, the finish. The one place that starts either, so a sink
    /// whose futures are complete when returned (its completion runs inside `write`) cannot make
    /// the upload finish twice.
    private func pump() {
        guard !writing else { return }
        if let batch = pending, batch.readableBytes > 0 {
            pending = nil
            writing = true
            upload.write(batch, on: eventLoop).assumeIsolated().whenComplete { result in
                self.written(result)
            }
        } else if case .ended = phase {
            finish()
        }
    }

    private func written(_ result: Result<Void, any Error>) {
        let held = holdsReads
        writing = false
        switch (phase, result) {
        case (.aborting, _):
            phase = .over
            upload.abort()
        case (.receiving, .failure(let error)), (.ended, .failure(let error)):
            refuse(Self.refusal(error))
        case (.receiving, .success):
            pump()
            if held && !holdsReads { report(.readsReleased) }
        case (.ended, .success):
            pump()
        case (.finishing, _), (.over, _):
            break
        }
    }

    private func finish() {
        phase = .finishing
        upload.finish(on: eventLoop).assumeIsolated().whenComplete { result in
            self.phase = .over
            self.report(.done(result.mapError(Self.refusal)))
        }
    }

    /// Discards the upload (after the batch being written, if any) and reports `refusal`.
    private func refuse(_ refusal: Refusal) {
        pending = nil
        if writing {
            phase = .aborting
        } else {
            phase = .over
            upload.abort()
        }
        report(.done(.failure(refusal)))
    }

    private static func refusal(_ error: any Error) -> Refusal {
        error as? Refusal ?? Refusal(.failed, "the upload failed: \(error)")
    }
}

@available(*, unavailable)
extension IngestBodyWriter: Sendable {}

/// How a connection reads its socket while upload bodies arrive on it: one per connection, for an
/// HTTP/1.1 connection's handler or for all the streams of an HTTP/2 connection (whose reads are
/// the connection's), counting the uploads in progress.
///
/// Why: the server lets a connection read up to 16 times per turn of the event loop, each read up
/// to 64 KiB, so one turn may bring 1 MiB. A body of one-byte chunks takes 6 bytes a chunk on the
/// wire (`1\r\nX\r\n`; 10 as HTTP/2 DATA frames), and every chunk is a trip through the decoder
/// and the handlers: that turn would handle some 170,000 chunks before any other connection of the
/// loop got its turn. While an upload is in progress its connection reads once per turn, at most
/// ``uploadReadBytes``: at most ~700 chunks, under a millisecond in a release build (playlists
/// answered meanwhile: p50 0.8 ms, p99 2–9 ms on a loaded two-core machine; 8 KiB reads doubled
/// the p50). A body of large chunks is not slowed by it: a turn of an otherwise idle loop is a few
/// microseconds, and a 64 MB upload ran at the same ~60 MB/s with 4 KiB reads as with 8 KiB ones
/// (its hash and probe bound it).
final class UploadReadPacing {
    /// Bytes per read of a connection while an upload's body arrives: on HTTP/2 a quarter of
    /// HTTP/1.1's, as a one-byte DATA frame costs about four one-byte chunks (NIOHTTP2's frame
    /// decoder, flow control and the stream's channel): 200,000 of them in 4 KiB reads still took
    /// 58 ms of CPU in one turn of a debug build.
    var uploadReadBytes: Int { readsOnParent ? 1024 : 4 * 1024 }

    /// Reads per turn of the event loop of a connection outside uploads (the server's
    /// `maxMessagesPerRead` for its connections).
    static let connectionMessagesPerRead: UInt = 16
    /// HTTP/2: the handlers' channels are streams, and the socket is their parent.
    let readsOnParent: Bool
    private var uploads = 0

    init(readsOnParent: Bool) {
        self.readsOnParent = readsOnParent
    }

    /// An upload's body is about to arrive on `channel` (a connection, or an HTTP/2 stream).
    func uploadStarted(on channel: any Channel) {
        uploads += 1
        guard uploads == 1, let socket = readsOnParent ? channel.parent : channel else { return }
        try? socket.syncOptions?.setOption(.maxMessagesPerRead, value: 1)
        try? socket.syncOptions?.setOption(
            .recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: uploadReadBytes))
    }

    /// An upload started on `channel` is over; when none is left, back to the server's reading.
    func uploadEnded(on channel: any Channel) {
        uploads -= 1
        guard uploads == 0, let socket = readsOnParent ? channel.parent : channel else { return }
        try? socket.syncOptions?.setOption(.maxMessagesPerRead, value: Self.connectionMessagesPerRead)
        try? socket.syncOptions?.setOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator())
    }
}

@available(*, unavailable)
extension UploadReadPacing: Sendable {}
