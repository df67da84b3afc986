public import NIOCore
public import HeadwaterLiveWindow

/// Where push ingest (`PUT`/`POST`/`DELETE /ingest/{channel}/{path…}`) goes. Implemented by the
/// core (segment store, playlist validation). The HTTP layer checks no credentials itself: it
/// hands `Authorization` to the sink, streams bodies to it and answers its ``Refusal``s like every
/// other refusal.
///
/// The server asks in this order: ``authorize(channel:authorization:)`` first, then it checks its
/// own body-size limit, then ``begin(channel:path:method:contentLength:)``; so a client without
/// the right credentials learns nothing about the channel's limits, paths or file types.
///
/// Both are called on the connection's event loop and must not block for long (creating a file is
/// fine, writing a body is not: that is ``IngestUpload``'s, which may hand it to other threads).
public protocol IngestSink: Sendable {
    /// Checks the credentials of an ingest request for `channel`; throw a ``Refusal`` (401/403,
    /// 404 for a channel that takes no ingest) to refuse it.
    ///
    /// - Parameters:
    ///   - channel: the decoded `{channel}` segment.
    ///   - authorization: the `Authorization` field, if sent.
    func authorize(channel: String, authorization: String?) throws(Refusal)

    /// Starts an authorized upload; throw a ``Refusal`` to refuse (answered through `OriginResponse.refused`).
    ///
    /// - Parameters:
    ///   - channel: the decoded `{channel}` segment.
    ///   - path: the decoded segments after it (at least one, none empty, no `.`/`..`).
    ///   - contentLength: the declared body length; `nil` for a chunked body (ffmpeg
    ///     `-method PUT`). Always `0` or `nil` for `DELETE`.
    func begin(
        channel: String,
        path: [String],
        method: IngestMethod,
        contentLength: Int64?
    ) throws(Refusal) -> any IngestUpload
}

/// One upload in progress. The server hands over the body in batches (each several chunks as they
/// arrived, in order) with ``write(_:on:)``, never starting one before the previous one's future
/// has completed; then exactly one of ``finish(on:)`` (the body arrived whole and is written) or
/// ``abort()`` (the client went away, the body was truncated or exceeded the size limit, or a write
/// failed). After ``finish(on:)`` nothing else is called; `DELETE` gets ``finish(on:)`` right after
/// `begin`.
///
/// The work may run anywhere (a thread pool: writing to disk must not hold up the event loop);
/// every future completes on the `eventLoop` given.
public protocol IngestUpload: Sendable {
    /// Writes the next batch of the body. Failing (with a ``Refusal``; any other error is answered
    /// 500) refuses the upload: the server then calls ``abort()`` and answers with the refusal.
    func write(_ batch: ByteBuffer, on eventLoop: any EventLoop) -> EventLoopFuture<Void>
    /// The whole body has been written: publish it. Failing answers with the refusal (the upload is
    /// over; ``abort()`` is not called).
    func finish(on eventLoop: any EventLoop) -> EventLoopFuture<Void>
    /// Discards whatever was written. Called on the event loop, so it must not block: it may do its
    /// work later, elsewhere.
    func abort()
}

/// The ingest methods (ffmpeg's HLS muxer uses `PUT` and `DELETE`; some packagers `POST`).
public enum IngestMethod: Sendable, Hashable {
    case put, post, delete
}
