public import NIOCore
public import NIOHTTP1

/// Where push ingest (`PUT`/`POST`/`DELETE /ingest/{channel}/{path…}`) goes. Implemented by the
/// core (segment store, playlist validation). The HTTP layer does no authentication itself: it
/// hands `Authorization` to the sink, streams bodies to it and maps ``IngestError`` to responses.
///
/// Every method is called on the connection's event loop and must not block for long: writing a
/// chunk to a local file is fine, waiting on the network is not.
public protocol IngestSink: Sendable {
    /// Authorizes and starts an upload; throw ``IngestError`` to refuse (→ its status + message).
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
    ) throws(IngestError) -> any IngestUpload
}

/// One upload in progress. The server calls ``write(_:)`` for each body chunk in order, then
/// exactly one of ``finish()`` (the body arrived whole) or ``abort()`` (the client went away, the
/// body was truncated, exceeded the size limit, or ``write(_:)`` threw). After ``finish()`` returns
/// or throws, nothing else is called; `DELETE` gets ``finish()`` right after `begin`.
public protocol IngestUpload: Sendable {
    /// The next chunk of the body. Throwing refuses the upload: the server then calls ``abort()``,
    /// answers with the error, and closes the connection.
    func write(_ chunk: ByteBuffer) throws(IngestError)
    /// The whole body has arrived: publish it. Throwing answers with the error (the upload is over;
    /// ``abort()`` is not called).
    func finish() throws(IngestError)
    /// Discard whatever was written.
    func abort()
}

/// The ingest methods (ffmpeg's HLS muxer uses `PUT` and `DELETE`; some packagers `POST`).
public enum IngestMethod: Sendable, Hashable {
    case put, post, delete
}

/// Why an upload was refused: the response status and a one-line message for its body.
public struct IngestError: Error, Sendable, Hashable, CustomStringConvertible {
    public var status: HTTPResponseStatus
    /// One line, no line breaks (they are replaced by spaces); never echo credentials.
    public var message: String
    /// `WWW-Authenticate` for a 401 (RFC 9110 §11.6.1 requires one), e.g. `Basic realm="ingest"`.
    public var challenge: String?

    public init(status: HTTPResponseStatus, message: String, challenge: String? = nil) {
        self.status = status
        self.message = message
        self.challenge = challenge
    }

    public var description: String { "\(status.code) \(message)" }

    /// 401: missing or wrong credentials. `challenge` goes into `WWW-Authenticate`; ffmpeg retries
    /// with its URL's credentials only after a `Basic` challenge.
    public static func unauthorized(
        _ message: String = "ingest requires credentials",
        challenge: String = "Basic realm=\"headwater ingest\""
    ) -> IngestError {
        IngestError(status: .unauthorized, message: message, challenge: challenge)
    }

    /// 403: valid credentials that may not push to this channel.
    public static func forbidden(_ message: String) -> IngestError {
        IngestError(status: .forbidden, message: message)
    }

    /// 404: no such channel (or nothing to delete).
    public static func notFound(_ message: String) -> IngestError {
        IngestError(status: .notFound, message: message)
    }

    /// 413: the body is larger than the sink accepts.
    public static func payloadTooLarge(_ message: String) -> IngestError {
        IngestError(status: .payloadTooLarge, message: message)
    }

    /// 400: a malformed request (bad path, name or method for this path).
    public static func badRequest(_ message: String) -> IngestError {
        IngestError(status: .badRequest, message: message)
    }

    /// 422: well-formed HTTP whose content is invalid (a playlist that does not parse, a segment
    /// longer than the target duration).
    public static func unprocessable(_ message: String) -> IngestError {
        IngestError(status: .unprocessableEntity, message: message)
    }
}
