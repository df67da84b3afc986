public import HeadwaterLiveWindow
public import HeadwaterSources
import NIOCore
public import NIOPosix

/// Connects the HTTP ingest routes (`PUT|POST|DELETE /ingest/{channel}/{path…}`) to the push
/// channels of ``PushIngest``, answering its refusals like every other refusal.
///
/// Credentials are checked and the upload's file created on the event loop (each a few
/// microseconds); everything else an upload does runs on a thread pool — writing its body batches
/// (`write(2)` waits for the disk when the page cache is full, or fails when the disk is), the
/// rename into place and probe of a segment, the parse and publish of a playlist, a `DELETE`, the
/// removal of an aborted upload's file — so a slow or full disk, or an upload of a million tiny
/// chunks, never holds up the other connections of the loop. ``PushIngest`` is the one place
/// that publishes, counts and logs; this type only decides which thread calls it.
public struct PushIngestSink: IngestSink {
    let ingest: PushIngest
    /// Where the uploads' file work runs.
    let pool: NIOThreadPool

    public init(_ ingest: PushIngest, pool: NIOThreadPool = .singleton) {
        self.ingest = ingest
        self.pool = pool
    }

    public func authorize(channel: String, authorization: String?) throws(Refusal) {
        do { try ingest.authorize(channel: channel, authorization: authorization) } catch { throw error.refusal }
    }

    public func begin(
        channel: String, path: [String], method: IngestMethod, contentLength: Int64?
    ) throws(Refusal) -> any IngestUpload {
        switch method {
        case .delete:
            return PushIngestDeletion(ingest: ingest, pool: pool, channel: channel, path: path)
        case .put, .post:
            do {
                let upload = try ingest.beginUpload(
                    channel: channel, path: path, contentLength: contentLength.map { Int(clamping: $0) })
                return PushIngestUpload(ingest: ingest, upload: upload, pool: pool)
            } catch {
                throw error.refusal
            }
        }
    }
}

/// A push upload seen through the HTTP layer's `IngestUpload`: each call runs on the pool.
struct PushIngestUpload: IngestUpload {
    let ingest: PushIngest
    let upload: PushUpload
    let pool: NIOThreadPool

    func write(_ batch: ByteBuffer, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        pool.runIfActive(eventLoop: eventLoop) { [ingest, upload] in
            do throws(IngestRefusal) { try ingest.write(batch, to: upload) } catch { throw error.refusal }
        }
    }

    func finish(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        pool.runIfActive(eventLoop: eventLoop) { [ingest, upload] in
            do throws(IngestRefusal) { try ingest.finish(upload) } catch { throw error.refusal }
        }
    }

    /// Runs on the pool too (closing and unlinking a large file can take a while); `submit` runs
    /// it at once if the pool has stopped, so the partial file never stays behind.
    func abort() {
        pool.submit { [ingest, upload] _ in ingest.abort(upload) }
    }
}

/// `DELETE` has no body: the deletion is its `finish`, on the pool like every other change to a
/// channel's window.
struct PushIngestDeletion: IngestUpload {
    let ingest: PushIngest
    let pool: NIOThreadPool
    let channel: String
    let path: [String]

    func write(_ batch: ByteBuffer, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        eventLoop.makeSucceededVoidFuture()
    }

    func finish(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        pool.runIfActive(eventLoop: eventLoop) { [ingest, channel, path] in
            do throws(IngestRefusal) { try ingest.delete(channel: channel, path: path) } catch { throw error.refusal }
        }
    }

    func abort() {}
}
