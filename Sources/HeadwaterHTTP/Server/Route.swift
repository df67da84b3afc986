public import HeadwaterLiveWindow
public import NIOHTTP1

/// What a request-target names (DESIGN.md "Public interface"), decided from the target alone:
/// no content lookups, no I/O. The method is checked separately against ``allowedMethods``.
///
/// | target | route |
/// | --- | --- |
/// | `/live/{channel}/master.m3u8` | ``multivariantPlaylist(channel:)`` |
/// | `/live/{channel}/{rendition}.m3u8` | ``mediaPlaylist(channel:rendition:)`` |
/// | `/live/{channel}/{rendition}.iframes.m3u8` | ``iFramePlaylist(channel:rendition:)`` |
/// | `/live/{channel}/{rendition}/{segment}` | ``segment(channel:rendition:name:)`` |
/// | `/ssai/{channel}/master.m3u8?{targeting}` | ``sessionMultivariantPlaylist(channel:query:)`` |
/// | `/ssai/{channel}/{rendition}.m3u8?session=…` | ``stitchedPlaylist(channel:rendition:session:)`` |
/// | `/ssai/{channel}/{rendition}.iframes.m3u8?session=…` | ``stitchedIFramePlaylist(channel:rendition:session:)`` |
/// | `/keys/{channel}/{index}.key` | ``key(channel:index:token:)`` |
/// | `/admin/channels/{channel}/breaks?duration=…` | ``adminBreaks(channel:duration:)`` (`POST`) |
/// | `/healthz` | ``health`` |
/// | `/api/status` | ``status`` |
/// | `/readyz` | ``readiness`` |
/// | `/metrics` | ``metrics`` |
/// | `/ingest/{channel}/{path…}` | ``ingest(channel:path:)`` |
/// | `*` | ``server`` (only `OPTIONS *` is meaningful) |
/// | `/` | ``staticFile(path:)`` with `[]` (served as `index.html`) |
/// | anything else | ``staticFile(path:)``, or ``notFound`` for a dot-file, a trailing `/`, or another `/live/…` shape |
///
/// A rendition cannot be called `master`: `master.m3u8` is the multivariant playlist.
public enum Route: Sendable, Hashable {
    case multivariantPlaylist(channel: String)
    case mediaPlaylist(channel: String, rendition: String)
    /// A rendition's I-frame playlist (a rendition name has no dots, so `v0.iframes` is no rendition).
    case iFramePlaylist(channel: String, rendition: String)
    case segment(channel: String, rendition: String, name: String)
    /// Starts a viewer session: the multivariant playlist with signed session URIs. `query` is the
    /// targeting (`device=tv`, …).
    case sessionMultivariantPlaylist(channel: String, query: [RequestTarget.QueryItem])
    /// A session's stitched media playlist; `session` is the token (`nil` when missing).
    case stitchedPlaylist(channel: String, rendition: String, session: String?)
    /// A session's stitched I-frame playlist.
    case stitchedIFramePlaylist(channel: String, rendition: String, session: String?)
    /// A content key of an encrypted channel: `index` as written (checked by the responder), with
    /// the `session` or `token` query value that entitles the request, if any.
    case key(channel: String, index: String, session: String?, token: String?)
    /// "Cue now": `POST` starts an ad break of `duration` seconds (`nil`: the channel's default).
    case adminBreaks(channel: String, duration: String?)
    case health
    /// The status page's JSON (`/api/status`).
    case status
    /// `/readyz`: 200 only when every channel is live and fresh, else 503.
    case readiness
    /// `/metrics`: Prometheus text.
    case metrics
    case ingest(channel: String, path: [String])
    /// The asterisk-form target `*` (RFC 9112 §3.2.4): the server itself.
    case server
    /// A file under the public directory, as decoded path segments; `[]` is `/`.
    case staticFile(path: [String])
    /// A path that can name nothing: a dot-file (`/.env`), a directory (`/docs/`), or a `/live/…`
    /// or `/ingest/…` path of the wrong shape.
    case notFound

    /// Parses a request-target as received in the request line. Hostile targets (`..`, encoded
    /// dot segments, NUL, …) fail with ``RequestTargetError/reason`` (see ``RequestTarget``), and
    /// a playlist query with a malformed LL-HLS directive fails too (HLS-RULES F10). A target
    /// longer than ``maxTargetBytes`` fails as ``Refusal/Kind/uriTooLong`` (414), unread.
    public static func parse(_ uri: String) -> Result<Route, Refusal> {
        if uri == "*" { return .success(.server) }
        guard uri.utf8.count <= maxTargetBytes else {
            return .failure(Refusal(.uriTooLong, "the request-target is longer than \(maxTargetBytes) bytes"))
        }
        switch RequestTarget.parse(uri) {
        case .success(let target):
            do throws(Refusal) {
                return .success(try Route(target: target))
            } catch {
                return .failure(error)
            }
        case .failure(let error):
            return .failure(Refusal.badTarget(error.reason))
        }
    }

    /// Routes a parsed origin-form target.
    public init(target: RequestTarget) throws(Refusal) {
        let s = target.segments
        switch s.first {
        case "live":
            self = Self.live(s)
            if case .multivariantPlaylist = self { try Self.validatePlaylistQuery(target.query) }
            if case .mediaPlaylist = self { try Self.validatePlaylistQuery(target.query) }
            if case .iFramePlaylist = self { try Self.validatePlaylistQuery(target.query) }
        case "ssai":
            self = Self.ssai(s, query: target.query)
            if case .stitchedPlaylist = self { try Self.validatePlaylistQuery(target.query) }
            if case .stitchedIFramePlaylist = self { try Self.validatePlaylistQuery(target.query) }
        case "keys" where s.count == 3 && s[2].hasSuffix(".key") && s[2].count > 4 && !s[1].isEmpty:
            self = .key(
                channel: s[1], index: String(s[2].dropLast(4)), session: target.query.first("session"),
                token: target.query.first("token"))
        case "keys":
            self = .notFound
        case "admin" where s.count == 4 && s[1] == "channels" && s[3] == "breaks" && !s[2].isEmpty:
            self = .adminBreaks(channel: s[2], duration: target.query.first("duration"))
        case "admin":
            self = .notFound
        case "healthz" where s.count == 1:
            self = .health
        case "api" where s == ["api", "status"]:
            self = .status
        case "readyz" where s.count == 1:
            self = .readiness
        case "metrics" where s.count == 1:
            self = .metrics
        case "ingest":
            guard s.count >= 3, let last = s.last, !last.isEmpty else {
                self = .notFound
                return
            }
            self = .ingest(channel: s[1], path: Array(s[2...]))
        case nil:
            self = .staticFile(path: [])
        default:
            let hidden = s.contains { $0.utf8.first == UInt8(ascii: ".") }
            self = hidden || s.last?.isEmpty == true ? .notFound : .staticFile(path: s)
        }
    }

    private static func live(_ s: [String]) -> Route {
        switch s.count {
        case 3:
            let file = s[2]
            if file == "master.m3u8" { return .multivariantPlaylist(channel: s[1]) }
            switch MediaPlaylistFile(file) {
            case .media(let rendition): return .mediaPlaylist(channel: s[1], rendition: rendition)
            case .iFrames(let rendition): return .iFramePlaylist(channel: s[1], rendition: rendition)
            case nil: return .notFound
            }
        case 4:
            return s[3].isEmpty ? .notFound : .segment(channel: s[1], rendition: s[2], name: s[3])
        default:
            return .notFound
        }
    }

    private static func ssai(_ s: [String], query: RequestTarget.Query) -> Route {
        guard s.count == 3, !s[1].isEmpty else { return .notFound }
        if s[2] == "master.m3u8" { return .sessionMultivariantPlaylist(channel: s[1], query: query.items) }
        switch MediaPlaylistFile(s[2]) {
        case .media(let rendition): return .stitchedPlaylist(channel: s[1], rendition: rendition, session: query.first("session"))
        case .iFrames(let rendition):
            return .stitchedIFramePlaylist(channel: s[1], rendition: rendition, session: query.first("session"))
        case nil: return .notFound
        }
    }

    /// The rendition a media playlist's file name names: `v0` of `v0.m3u8` and of `v0.iframes.m3u8`.
    /// A name that would be empty or start with a dot (`..m3u8` names `.`) names none: rendition
    /// names are single, visible path components like every other name a route hands on.
    private enum MediaPlaylistFile {
        case media(String)
        case iFrames(String)

        init?(_ file: String) {
            guard file.hasSuffix(".m3u8") else { return nil }
            let iFrames = file.hasSuffix(".iframes.m3u8")
            let name = file.dropLast(iFrames ? ".iframes.m3u8".count : ".m3u8".count)
            guard let first = name.utf8.first, first != UInt8(ascii: ".") else { return nil }
            self = iFrames ? .iFrames(String(name)) : .media(String(name))
        }
    }

    /// LL-HLS delivery directives (RFC 8216bis §6.2.5): a malformed one is a client bug worth a 400
    /// (F10); well-formed ones are the responder's (``DeliveryDirectives``).
    private static func validatePlaylistQuery(_ query: RequestTarget.Query) throws(Refusal) {
        _ = try DeliveryDirectives(query)
    }

    /// The longest request-target the origin reads: 8 KiB, nginx's request-line limit
    /// (`large_client_header_buffers`), far longer than any URI Headwater's playlists carry (a
    /// stitched playlist's, session token and all, is a few hundred bytes). Every framing routes
    /// through ``parse(_:)``, so HTTP/1 and HTTP/2 refuse alike.
    public static let maxTargetBytes = 8 * 1024

    /// Every method some route answers: another one is not implemented here at all (501, RFC 9110
    /// §9.1), where one of these on a route that does not take it is not allowed there (405).
    public static let implementedMethods: [HTTPMethod] = [.GET, .HEAD, .OPTIONS, .PUT, .POST, .DELETE]

    /// The methods this route answers (the `Allow` field of a 405 or an `OPTIONS` response).
    public var allowedMethods: [HTTPMethod] {
        switch self {
        case .ingest: [.PUT, .POST, .DELETE, .OPTIONS]
        case .server: [.OPTIONS]
        case .adminBreaks: [.POST, .OPTIONS]
        case .sessionMultivariantPlaylist, .stitchedPlaylist, .stitchedIFramePlaylist, .key: [.GET, .HEAD, .OPTIONS]
        case .multivariantPlaylist, .mediaPlaylist, .iFramePlaylist, .segment, .health, .readiness, .metrics, .status, .staticFile, .notFound:
            [.GET, .HEAD, .OPTIONS]
        }
    }

    /// Push ingest and the admin API: the routes a separate ingest listener takes off the public ones.
    var isControl: Bool {
        switch self {
        case .ingest, .adminBreaks: true
        default: false
        }
    }

    /// A low-cardinality name for logs and metrics (`http.route`), never the raw path.
    public var template: String {
        switch self {
        case .multivariantPlaylist: "/live/{channel}/master.m3u8"
        case .mediaPlaylist: "/live/{channel}/{rendition}.m3u8"
        case .iFramePlaylist: "/live/{channel}/{rendition}.iframes.m3u8"
        case .segment: "/live/{channel}/{rendition}/{segment}"
        case .sessionMultivariantPlaylist: "/ssai/{channel}/master.m3u8"
        case .stitchedPlaylist: "/ssai/{channel}/{rendition}.m3u8"
        case .stitchedIFramePlaylist: "/ssai/{channel}/{rendition}.iframes.m3u8"
        case .key: "/keys/{channel}/{index}.key"
        case .adminBreaks: "/admin/channels/{channel}/breaks"
        case .health: "/healthz"
        case .status: "/api/status"
        case .readiness: "/readyz"
        case .metrics: "/metrics"
        case .ingest: "/ingest/{channel}/{path}"
        case .server: "*"
        case .staticFile: "/{file}"
        case .notFound: "unmatched"
        }
    }
}

extension Refusal {
    /// A request-target that is a bad request: `reason` is one line and never echoes the target.
    static func badTarget(_ reason: String) -> Refusal { Refusal(.badRequest, reason) }

    /// A method outside ``Route/implementedMethods`` (501), in the same words whether NIO's HTTP/1
    /// decoder knew it (`PROPFIND`, answered by the responder) or not (`FOO`, answered by
    /// ``ProtocolErrorResponder``), and over HTTP/2; the method itself is not echoed.
    static let methodNotImplemented = Refusal(
        .notImplemented,
        "the request method is not one this server implements (\(Route.implementedMethods.map(\.rawValue).joined(separator: ", ")))")
}
