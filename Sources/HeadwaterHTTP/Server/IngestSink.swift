public import NIOCore
public import HeadwaterLiveWindow

/// Where push ingest (`PUT`/`POST`/`DELETE /ingest/{channel}/{path…}`) goes. Implemented by the
/// core (segment store, playlist validation). The HTTP layer does no authentication itself: it
/// hands `Authorization` to the sink, streams bodies to it and answers its ``Refusal``s like every other refusal.
///
/// Every method is called on the connection's event loop and must not block for long: writing a
/// chunk to a local file is fine, waiting on the network is not.
public protocol IngestSink: Sendable {
    /// Authorizes and starts an upload; throw a ``Refusal`` to refuse (answered through `OriginResponse.refused`).
    ///
    /// - Parameters:
    ///   - channel: the decoded `{channel}` segment.
    ///   - path: the decoded segments after it (at least one, none empty, no `.`/`..`).
    ///   - authorization: the `Authorization` field, if sent.
    ///   - contentLength: the declared body length; `nil` for a chunked body (ffmpeg
    ///     `-method PUT`). Always `0` or `nil` for `DELETE`.
    func begin(
        channel: String,
        path: [String],
        method: IngestMethod,
        authorization: String?,
        contentLength: Int64?
    ) throws(Refusal) -> any IngestUpload
}

/// One upload in progress. The server calls ``write(_:)`` for each body chunk in order, then
/// exactly one of ``finish()`` (the body arrived whole) or ``abort()`` (the client went away, the
/// body was truncated, exceeded the size limit, or ``write(_:)`` threw). After ``finish()`` returns
/// or throws, nothing else is called; `DELETE` gets ``finish()`` right after `begin`.
public protocol IngestUpload: Sendable {
    /// The next chunk of the body. Throwing refuses the upload: the server then calls ``abort()``,
    /// answers with the error, and closes the connection.
    func write(_ chunk: ByteBuffer) throws(Refusal)
    /// The whole body has arrived: publish it. Throwing answers with the error (the upload is over;
    /// ``abort()`` is not called).
    func finish() throws(Refusal)
    /// Discard whatever was written.
    func abort()
}

/// The ingest methods (ffmpeg's HLS muxer uses `PUT` and `DELETE`; some packagers `POST`).
public enum IngestMethod: Sendable, Hashable {
    case put, post, delete
}
