import HeadwaterLiveWindow
public import HeadwaterSources
import NIOCore
import NIOHTTP1

/// Connects the HTTP ingest routes (`PUT|POST|DELETE /ingest/{channel}/{path…}`) to the push
/// channels of ``PushIngest``, mapping its errors to HTTP statuses with their one-line reasons.
///
/// Upload chunks are written to the segment's temporary file on the event loop: the writes land in
/// the page cache (no fsync — a pushed segment is worthless after a crash, since the window lives
/// in memory), which costs about as much as copying the chunk.
public struct PushIngestSink: IngestSink {
    let ingest: PushIngest

    public init(_ ingest: PushIngest) { self.ingest = ingest }

    public func begin(
        channel: String, path: [String], method: IngestMethod, authorization: String?, contentLength: Int64?
    ) throws(IngestError) -> any IngestUpload {
        do {
            try ingest.authorize(channel: channel, authorization: authorization)
            switch method {
            case .delete:
                try ingest.delete(channel: channel, path: path)
                return CompletedUpload()
            case .put, .post:
                let upload = try ingest.beginUpload(
                    channel: channel, path: path, contentLength: contentLength.map { Int(clamping: $0) })
                return PushIngestUpload(upload: upload)
            }
        } catch {
            throw Self.map(error)
        }
    }

    static func map(_ error: IngestRefusal) -> IngestError {
        if error.status == 401 { return .unauthorized(error.message, challenge: "Bearer realm=\"headwater\"") }
        return IngestError(status: HTTPResponseStatus(statusCode: error.status), message: error.message)
    }
}

/// A push upload seen through the HTTP layer's `IngestUpload`.
struct PushIngestUpload: IngestUpload {
    let upload: PushUpload

    func write(_ chunk: ByteBuffer) throws(IngestError) {
        do { try upload.write(chunk) } catch { throw PushIngestSink.map(error) }
    }

    func finish() throws(IngestError) {
        do { try upload.finish() } catch { throw PushIngestSink.map(error) }
    }

    func abort() { upload.abort() }
}

/// DELETE has no body: the work is done in `begin`.
struct CompletedUpload: IngestUpload {
    func write(_ chunk: ByteBuffer) throws(IngestError) {}
    func finish() throws(IngestError) {}
    func abort() {}
}
