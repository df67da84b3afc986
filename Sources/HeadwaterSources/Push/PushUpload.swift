public import HeadwaterLiveWindow
import HeadwaterRuntime
import NIOConcurrencyHelpers
public import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One upload in progress. Segments stream to a temporary file that ``finish()`` renames into
/// place, so a truncated or aborted upload leaves nothing listed and no file behind; playlists are
/// buffered and parsed on ``finish()``, so a malformed one changes nothing already published.
///
/// Sendable (the HTTP layer may hand it between tasks); calls are expected one at a time.
public final class PushUpload: Sendable {
    enum Sink: Sendable {
        case file(fd: Int32, temporary: String, final: String)
        case buffer([UInt8])
    }

    private struct State: Sendable {
        var sink: Sink?
        var received = 0
        /// FNV-1a 64 of the bytes so far: the stored segment's ETag.
        var hash = FNV1a64()
    }

    /// The path below `/ingest/{channel}/`.
    public let path: IngestPath
    private let ingest: PushIngest
    private let channel: PushChannel
    private let contentLength: Int?
    private let limit: Int
    private let state: NIOLockedValueBox<State>

    init(ingest: PushIngest, channel: PushChannel, path: IngestPath, contentLength: Int?, limit: Int, sink: Sink) {
        self.ingest = ingest
        self.channel = channel
        self.path = path
        self.contentLength = contentLength
        self.limit = limit
        self.state = NIOLockedValueBox(State(sink: sink))
    }

    deinit { discard() }

    /// Appends body bytes.
    ///
    /// - Throws: 413 past the size limit, 500 when the disk refuses; the upload is aborted then.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(IngestRefusal) {
        let result: Result<Void, IngestRefusal> = state.withLockedValue { state in
            guard let sink = state.sink else {
                return .failure(IngestRefusal(status: 400, "upload already finished or aborted", reason: .truncated))
            }
            guard state.received + bytes.count <= limit else {
                return .failure(PushIngest.tooLarge(path, limit: limit))
            }
            switch sink {
            case .file(let fd, _, _):
                do throws(IngestRefusal) { try SegmentStorage.writeAll(fd, bytes) } catch { return .failure(error) }
            case .buffer(var buffer):
                state.sink = nil  // keep the buffer uniquely referenced while appending
                buffer.append(contentsOf: bytes)
                state.sink = .buffer(buffer)
            }
            state.hash.update(bytes)
            state.received += bytes.count
            return .success(())
        }
        if case .failure(let error) = result {
            discard()
            throw ingest.rejected(error, channel: channel)
        }
    }

    public func write(_ bytes: [UInt8]) throws(IngestRefusal) {
        let failure = bytes.withUnsafeBytes { raw in Result { () throws(IngestRefusal) in try write(raw) } }
        try failure.get()
    }

    public func write(_ buffer: ByteBuffer) throws(IngestRefusal) {
        let failure = buffer.withUnsafeReadableBytes { raw in Result { () throws(IngestRefusal) in try write(raw) } }
        try failure.get()
    }

    /// Completes the upload: a segment is renamed into place and offered to the channel's window;
    /// a playlist is parsed and followed.
    ///
    /// - Throws: 400 when fewer bytes than `Content-Length` arrived, 422 `path: line N: …` for a
    ///   playlist that does not parse, 409/400 for a playlist whose rendition name clashes or is
    ///   unusable, 500 for a disk error. Nothing is listed or kept then.
    public func finish() throws(IngestRefusal) {
        let taken: (sink: Sink?, received: Int, hash: FNV1a64) = state.withLockedValue { state in
            defer { state.sink = nil }
            return (state.sink, state.received, state.hash)
        }
        guard let sink = taken.sink else {
            throw IngestRefusal(status: 400, "upload already finished or aborted", reason: .truncated)
        }
        if let contentLength, taken.received != contentLength {
            Self.discard(sink)
            throw ingest.rejected(
                IngestRefusal(
                    status: 400, "\(path): upload ended after \(taken.received) of \(contentLength) bytes",
                    reason: .truncated),
                channel: channel)
        }
        switch sink {
        case .buffer(let bytes):
            try ingest.received(channel, path, bytes: bytes)
        case .file(let fd, let temporary, let final):
            close(fd)
            do { try SegmentStorage.move(temporary, to: final) } catch {
                SegmentStorage.remove(temporary)
                throw ingest.rejected(error, channel: channel)
            }
            let now = ingest.clock.now()
            let file = SegmentFile(
                path: final, length: Int64(taken.received),
                entityTag: "\"\(taken.hash.hexDigest)\"",
                contentType: IngestPath.contentType(forExtension: path.fileExtension), lastModified: now / 1_000_000)
            ingest.stored(
                channel, path, file: file, probe: SegmentStorage.probe(final, extension: path.fileExtension, limit: limit))
        }
    }

    /// Abandons the upload (the client went away): nothing is listed, the partial file is removed.
    public func abort() {
        let wasOpen = state.withLockedValue { $0.sink != nil }
        discard()
        if wasOpen {
            ingest.rejected(IngestRefusal(status: 400, "\(path): upload aborted", reason: .truncated), channel: channel)
        }
    }

    private func discard() {
        let sink = state.withLockedValue { state in
            defer { state.sink = nil }
            return state.sink
        }
        if let sink { Self.discard(sink) }
    }

    private static func discard(_ sink: Sink) {
        if case .file(let fd, let temporary, _) = sink {
            close(fd)
            SegmentStorage.remove(temporary)
        }
    }
}
