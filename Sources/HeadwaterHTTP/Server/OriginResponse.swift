import HeadwaterLiveWindow
import NIOCore
import NIOHTTP1

/// A response decided by ``OriginResponder``, before the connection-level fields (`Date`,
/// `Server`, `Connection`, `Content-Length`, CORS) that ``OriginHTTPHandler`` adds as it writes it.
///
/// A ``Body/file(_:offset:count:)`` body owns an open file: whoever drops the response without writing it must
/// call ``discardBody()``.
struct OriginResponse {
    enum Body {
        case empty
        case bytes(ByteBuffer)
        /// `count` bytes of an open file from `offset`, sent with `sendfile`.
        case file(OpenFile, offset: Int64, count: Int64)
    }

    var status: HTTPResponseStatus
    var headers: HTTPHeaders
    var body: Body
    /// `Cache-Control`, and `Expires` = now + `max-age` (HLS-RULES C8, G6).
    var cachePolicy: CachePolicy?
    /// Unix seconds, sent as `Last-Modified`.
    var lastModified: Int64?
    /// Close the connection once this response is written.
    var closeConnection = false
    /// How the body came to be, for the access log's `cache=` field.
    var cacheStatus: CacheStatus = .none
    /// For a playlist body, its identity size (equal to ``bodyLength`` unless gzip), for the gzip
    /// metrics; `nil` for anything else.
    var uncompressedLength: Int64?
    /// What becomes due once this response's body has been written: a stitched playlist's ad
    /// tracking (``AdInsertion/DueTracking``). Every writer (``OriginHTTPHandler``,
    /// ``OriginFastPath``, any later protocol) takes it with ``afterBodyWrittenIfSent`` and calls it
    /// once, on its event loop, when the write of the body's last part has succeeded — never for a
    /// `HEAD` (``discardBody()`` drops it), a response whose status is no longer the `200` it was
    /// decided with (a `304`, `412` or `416` made of it), or a write that failed (the client gone).
    /// `nil` for nearly every response, so most writes need no promise.
    var afterBodyWritten: (@Sendable () -> Void)?
    /// Not an answer yet: the request waits for a later version of its channel (``Hold``); the
    /// writer holds it (``HeldRequests``) and asks the responder again at each publish.
    var hold: Hold?
    /// Set on the one answer a publish gives a group of equal held requests: the first HTTP/1.1
    /// writer keeps its encoded bytes there, and the group's other connections write those.
    var sharedHTTP1: SharedHTTP1Answer?

    /// What a held request waits for.
    struct Hold {
        /// What is awaited: a playlist version (a blocking reload), or the part a playlist hints.
        enum Awaited {
            case playlist
            case hintedPart(String)
        }

        /// The channel whose publishes may answer it.
        var channel: String
        /// The playlist's target duration: it may wait 3 of them (F11), then ``timedOut``.
        var targetDuration: Int
        var awaited: Awaited = .playlist
        var timeout: TimeAmount { .seconds(3 * Int64(targetDuration)) }
        /// The answer once the timeout has passed: 503, cached 4 target durations after a blocking
        /// reload and one after a part request, as segment errors are (F11, F19).
        var timedOut: OriginResponse {
            switch awaited {
            case .playlist:
                .refused(
                    Refusal(.unavailable, "the requested segment or part was not published within 3 target durations"),
                    cachePolicy: CachePolicy(.blockingError(targetDuration: targetDuration)))
            case .hintedPart(let name):
                .refused(
                    Refusal(.unavailable, "the hinted part \"\(name)\" was not published within 3 target durations"),
                    cachePolicy: CachePolicy(.error(targetDuration: targetDuration)))
            }
        }
    }

    /// A request held for a later version of `channel` (a blocking reload).
    static func held(channel: String, targetDuration: Int, awaiting awaited: Hold.Awaited = .playlist) -> OriginResponse {
        var response = OriginResponse(status: .serviceUnavailable)
        response.hold = Hold(channel: channel, targetDuration: max(1, targetDuration), awaited: awaited)
        return response
    }

    init(
        status: HTTPResponseStatus,
        headers: HTTPHeaders = HTTPHeaders(),
        body: Body = .empty,
        cachePolicy: CachePolicy? = nil,
        lastModified: Int64? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.cachePolicy = cachePolicy
        self.lastModified = lastModified
    }

    /// Bytes the body will carry (the `Content-Length` of a `GET`, and of a `HEAD` for it).
    var bodyLength: Int64 {
        switch body {
        case .empty: 0
        case .bytes(let buffer): Int64(buffer.readableBytes)
        case .file(_, _, let count): count
        }
    }

    /// Closes the file of a file body that will not be sent (a `HEAD`, a connection gone), and
    /// drops ``afterBodyWritten``: no body, nothing due.
    mutating func discardBody() {
        if case .file(let file, _, _) = body { file.close() }
        body = .empty
        afterBodyWritten = nil
    }

    /// ``afterBodyWritten`` if this response still sends the body it was decided with: a `200`
    /// whose body was not discarded. What a writer calls once that body is written.
    var afterBodyWrittenIfSent: (@Sendable () -> Void)? {
        guard let afterBodyWritten, status == .ok else { return nil }
        if case .empty = body { return nil }
        return afterBodyWritten
    }
}

/// The access log's `cache=` field: what an origin can say about its own caching of a response.
enum CacheStatus: String, Sendable {
    /// A playlist served from the version rendered (and gzipped) once when it was published.
    case hit = "HIT"
    /// A playlist rendered for this request (per-session playlists; none yet).
    case miss = "MISS"
    /// 304 Not Modified: the client's validator matched the current version; no body.
    case revalidated = "REVALIDATED"
    /// Anything else: segments and static files (sent from disk), errors, health, metrics, ingest.
    case none = "-"
}

/// `"name"` for error messages, shortened so an error line stays short whatever the client sent.
func quoted(_ name: some StringProtocol) -> String {
    name.count <= 64 ? "\"\(name)\"" : "\"\(name.prefix(61))...\""
}
