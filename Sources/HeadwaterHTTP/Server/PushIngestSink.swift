public import HeadwaterLiveWindow
public import HeadwaterSources
import NIOCore
import NIOHTTP1

/// Connects the HTTP ingest routes (`PUT|POST|DELETE /ingest/{channel}/{path…}`) to the push
/// channels of ``PushIngest``, answering its refusals like every other refusal.
///
/// Upload chunks are written to the segment's temporary file on the event loop: the writes land in
/// the page cache (no fsync — a pushed segment is worthless after a crash, since the window lives
/// in memory), which costs about as much as copying the chunk.
public struct PushIngestSink: IngestSink {
    let ingest: PushIngest

    public init(_ ingest: PushIngest) { self.ingest = ingest }

    public func begin(
        channel: String, path: [String], method: IngestMethod, authorization: String?, contentLength: Int64?
    ) throws(Refusal) -> any IngestUpload {
        do {
            try ingest.authorize(channel: channel, authorization: authorization)
            switch method {
            case .delete:
                try ingest.delete(channel: channel, path: path)
                return CompletedUpload()
            case .put, .post:
                let upload = try ingest.beginUpload(
                    channel: channel, path: path, contentLength: contentLength.map { Int(clamping: $0) })
                return PushIngestUpload(ingest: ingest, upload: upload)
            }
        } catch {
            throw Self.map(error)
        }
    }

    static func map(_ error: IngestRefusal) -> Refusal { error.refusal }
}

/// A push upload seen through the HTTP layer's `IngestUpload`.
struct PushIngestUpload: IngestUpload {
    let ingest: PushIngest
    let upload: PushUpload

    func write(_ chunk: ByteBuffer) throws(Refusal) {
        do { try ingest.write(chunk, to: upload) } catch { throw PushIngestSink.map(error) }
    }

    func finish() throws(Refusal) {
        do { try ingest.finish(upload) } catch { throw PushIngestSink.map(error) }
    }

    func abort() { ingest.abort(upload) }
}

/// DELETE has no body: the work is done in `begin`.
struct CompletedUpload: IngestUpload {
    func write(_ chunk: ByteBuffer) throws(Refusal) {}
    func finish() throws(Refusal) {}
    func abort() {}
}
