public import HeadwaterLiveWindow
import HeadwaterMedia
import HeadwaterRuntime
import NIOConcurrencyHelpers
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One upload in progress. Segments stream to a temporary file that ``finish(now:)`` renames into
/// place, so a truncated or aborted upload leaves nothing listed and no file behind; playlists are
/// buffered, so a malformed one changes nothing already published.
///
/// An upload only moves bytes: it returns what it completed (``Completed``) or why it failed, and
/// ``PushIngest`` — which made it and is called with it (``PushIngest/write(_:to:)``,
/// ``PushIngest/finish(_:)``, ``PushIngest/abort(_:)``) — publishes, counts and logs.
///
/// Sendable (the HTTP layer may hand it between tasks); calls are expected one at a time.
public final class PushUpload: Sendable {
    /// What a finished upload holds, for its channel to take.
    enum Completed: Sendable {
        /// A segment, in place at its final path.
        case segment(SegmentFile, probe: SegmentProbe?)
        /// A playlist's bytes, not parsed yet.
        case playlist([UInt8])
    }

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
    /// The channel it goes to.
    let channel: PushChannel
    private let contentLength: Int?
    private let limit: Int
    private let state: NIOLockedValueBox<State>

    init(channel: PushChannel, path: IngestPath, contentLength: Int?, limit: Int, sink: Sink) {
        self.channel = channel
        self.path = path
        self.contentLength = contentLength
        self.limit = limit
        self.state = NIOLockedValueBox(State(sink: sink))
    }

    deinit { discard() }

    /// Appends body bytes.
    ///
    /// - Throws: too large past the size limit, failed when the disk refuses; the upload is
    ///   discarded then.
    func write(_ bytes: UnsafeRawBufferPointer) throws(IngestRefusal) {
        let result: Result<Void, IngestRefusal> = state.withLockedValue { state in
            guard let sink = state.sink else {
                return .failure(IngestRefusal("upload already finished or aborted", reason: .truncated))
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
            throw error
        }
    }

    func write(_ bytes: [UInt8]) throws(IngestRefusal) {
        let failure = bytes.withUnsafeBytes { raw in Result { () throws(IngestRefusal) in try write(raw) } }
        try failure.get()
    }

    func write(_ buffer: ByteBuffer) throws(IngestRefusal) {
        let failure = buffer.withUnsafeReadableBytes { raw in Result { () throws(IngestRefusal) in try write(raw) } }
        try failure.get()
    }

    /// Completes the upload: a segment is renamed into place (its `Last-Modified` is `now`, µs);
    /// a playlist's bytes are returned as they arrived.
    ///
    /// - Throws: truncated when fewer bytes than `Content-Length` arrived, failed for a disk error.
    ///   Nothing is kept then.
    func finish(now: Int64) throws(IngestRefusal) -> Completed {
        let taken: (sink: Sink?, received: Int, hash: FNV1a64) = state.withLockedValue { state in
            defer { state.sink = nil }
            return (state.sink, state.received, state.hash)
        }
        guard let sink = taken.sink else {
            throw IngestRefusal("upload already finished or aborted", reason: .truncated)
        }
        if let contentLength, taken.received != contentLength {
            Self.discard(sink)
            throw IngestRefusal(
                "\(path): upload ended after \(taken.received) of \(contentLength) bytes", reason: .truncated)
        }
        switch sink {
        case .buffer(let bytes):
            return .playlist(bytes)
        case .file(let fd, let temporary, let final):
            close(fd)
            do { try SegmentStorage.move(temporary, to: final) } catch {
                SegmentStorage.remove(temporary)
                throw error
            }
            let media = SegmentStorage.inspect(final, extension: path.fileExtension, limit: limit)
            let file = SegmentFile(
                path: final, length: Int64(taken.received),
                entityTag: "\"\(taken.hash.hexDigest)\"",
                contentType: IngestPath.contentType(forExtension: path.fileExtension), lastModified: now / 1_000_000,
                keyFrame: media.keyFrame)
            return .segment(file, probe: media.probe)
        }
    }

    /// Abandons the upload (the client went away): nothing is listed, the partial file is removed.
    ///
    /// - Returns: the refusal to count when the upload was still open, else `nil`.
    func abort() -> IngestRefusal? {
        let wasOpen = state.withLockedValue { $0.sink != nil }
        discard()
        return wasOpen ? IngestRefusal("\(path): upload aborted", reason: .truncated) : nil
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
