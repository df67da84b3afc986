import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
import Logging
import NIOCore
import NIOHTTP1

/// Decides the response to one `GET`, `HEAD` or `OPTIONS` request: routing by method, playlists,
/// segments, static files, `/healthz`, `/readyz`, `/metrics` and `/api/status`. Ingest bodies are streamed by ``OriginHTTPHandler``
/// instead. Reads one channel snapshot per request and never blocks (files: see ``OpenFile``).
struct OriginResponder {
    let content: any OriginContent
    let publicDirectory: String?
    let cors: Bool
    let ingestEnabled: Bool
    let logger: Logger
    /// `/api/status`, with the clock its ages are measured by.
    var statusAPI = StatusAPI()
    /// What `/metrics` exports.
    let metrics: OriginMetrics
    /// For live-edge ages (`/healthz`, `/readyz`, `/metrics`).
    let clock: any WallClock
    /// Sessions, stitched playlists and "cue now"; `nil` when no ad configuration is loaded.
    var adInsertion: AdInsertion? = nil
    /// Which symbolic links below the public directory and a segment's directory are followed
    /// (``SymlinkPolicy``; `server.follow_symlinks`).
    var symlinks = SymlinkPolicy.never
    /// Where refused links (and protocol errors) are counted; not counted by default (tests that
    /// make a responder of their own).
    var refusals = RefusalCounters()
    /// Whether ingest and the admin API are served here; `false` on the public listeners when the
    /// ingest listener serves them (``OriginServerConfiguration/ingestListener``).
    var servesControlRoutes = true

    /// The response to `request` on `route` (its target, parsed). `HEAD` is answered as `GET` (the
    /// handler drops the body). A method no route takes gets 501; one the route does not take, 405
    /// with `Allow`; `OPTIONS` gets 204 (and CORS).
    ///
    /// `quietly`: decide alike, but log and count nothing about a file that cannot be served — for
    /// ``OriginFastPath``'s look-ahead, whose request is then answered by a call that does (its
    /// own, or the full path's), so each request is logged and counted once.
    func respond(to request: OriginRequest, route: Route, quietly: Bool = false) -> OriginResponse {
        let method = request.decidingMethod
        let fields = request.fields
        if !servesControlRoutes, route.isControl {
            return .refused(Refusal(.notFound, "not served on this listener"),
                cachePolicy: CachePolicy(.error(targetDuration: nil))
            )
        }
        if case .ingest = route, !ingestEnabled {
            return .refused(Refusal(.notFound, "ingest is not enabled on this server"),
                cachePolicy: CachePolicy(.error(targetDuration: nil))
            )
        }
        guard Route.implementedMethods.contains(method) else {
            return .refused(.methodNotImplemented, cachePolicy: CachePolicy(.error(targetDuration: nil)))
        }
        let allowed = route.allowedMethods
        if method == .OPTIONS { return options(allowed: allowed) }
        guard allowed.contains(method) else {
            var extra = HTTPHeaders()
            extra.add(name: "Allow", value: Self.allowField(allowed))
            return .refused(Refusal(.methodNotAllowed, "\(method.rawValue) is not allowed here; use \(Self.allowField(allowed))"),
                cachePolicy: CachePolicy(.error(targetDuration: nil)),
                headers: extra
            )
        }
        switch route {
        case .multivariantPlaylist(let channel):
            return sharedPlaylist(channel: channel, .multivariant, fields: fields)
        case .mediaPlaylist(let channel, let rendition):
            return sharedPlaylist(channel: channel, .media(rendition: rendition), request: request)
        case .iFramePlaylist(let channel, let rendition):
            return sharedPlaylist(channel: channel, .iFrames(rendition: rendition), request: request)
        case .segment(let channel, let rendition, let name):
            return segment(channel: channel, rendition: rendition, name: name, fields: fields, quietly: quietly)
        case .sessionMultivariantPlaylist(let channel, let query):
            return sessionPlaylist(channel: channel, query: query, request: request)
        case .stitchedPlaylist(let channel, let rendition, let session):
            return stitchedPlaylist(
                channel: channel, rendition: rendition, session: session, target: request.target, fields: fields)
        case .stitchedIFramePlaylist(let channel, let rendition, let session):
            return stitchedPlaylist(
                channel: channel, rendition: rendition, session: session, iFrames: true, fields: fields)
        case .key(let channel, let index, let session, let token):
            return key(channel: channel, index: index, session: session, token: token, fields: fields)
        case .adminBreaks(let channel, let duration):
            return adminBreak(channel: channel, duration: duration, fields: fields)
        case .health:
            return health(readiness: false)
        case .readiness:
            return health(readiness: true)
        case .metrics:
            return metricsExposition()
        case .status:
            return statusAPI.response(content: content)
        case .staticFile(let path):
            return staticFile(path: path, fields: fields, quietly: quietly)
        case .notFound, .ingest, .server:
            return .refused(Refusal(.notFound, "no such resource"), cachePolicy: CachePolicy(.error(targetDuration: nil)))
        }
    }

    static func allowField(_ methods: [HTTPMethod]) -> String {
        methods.map(\.rawValue).joined(separator: ", ")
    }

    /// `OPTIONS`: 204 with `Allow`, plus the CORS preflight answer when CORS is on.
    private func options(allowed: [HTTPMethod]) -> OriginResponse {
        var headers = HTTPHeaders()
        let allow = Self.allowField(allowed)
        headers.add(name: "Allow", value: allow)
        if cors {
            headers.add(name: "Access-Control-Allow-Methods", value: allow)
            headers.add(name: "Access-Control-Allow-Headers", value: CORS.allowHeaders)
            headers.add(name: "Access-Control-Max-Age", value: CORS.maxAge)
        }
        return OriginResponse(status: .noContent, headers: headers, cachePolicy: CachePolicy(.health))
    }

    // MARK: - Playlists

    /// Which of a channel's shared playlists a request names.
    enum SharedPlaylist: Hashable, Sendable {
        case multivariant
        case media(rendition: String)
        case iFrames(rendition: String)
    }

    private func sharedPlaylist(channel: String, _ which: SharedPlaylist, fields: OriginRequest.Fields) -> OriginResponse {
        switch sharedPlaylist(channel: channel, which) {
        case .success(let (playlist, cachePolicy)): serve(playlist, cachePolicy: cachePolicy, fields: fields)
        case .failure(let refusal): refusal.response
        }
    }

    /// A shared media or I-frame playlist, with the request's delivery directives: a blocking reload
    /// (`_HLS_msn`, `_HLS_part`) is answered from the first version that contains what it asks for,
    /// held until then (F7, F8), refused 400 when too far ahead (F10); past ENDLIST the directives
    /// are ignored (F9). A version that answers a blocking request is cached 6 × TD (F19).
    private func sharedPlaylist(channel: String, _ which: SharedPlaylist, request: OriginRequest) -> OriginResponse {
        let directives = DeliveryDirectives.of(target: request.target)
        if directives.isEmpty { return sharedPlaylist(channel: channel, which, fields: request.fields) }
        switch sharedPlaylist(channel: channel, which) {
        case .success(let (playlist, cachePolicy)):
            let targetDuration = playlist.targetDuration ?? 1
            guard let msn = directives.msn else {
                return serve(Self.delta(of: playlist, directives.skip), cachePolicy: cachePolicy, fields: request.fields)
            }
            if let notYet = Self.blocking(
                playlist.edge, msn: msn, part: directives.part, channel: channel, targetDuration: targetDuration,
                refusalPolicy: CachePolicy(.error(targetDuration: targetDuration)))
            {
                return notYet
            }
            return serve(
                Self.delta(of: playlist, directives.skip),
                cachePolicy: CachePolicy(.blockingPlaylist(targetDuration: targetDuration)), fields: request.fields)
        case .failure(let refusal):
            return refusal.response
        }
    }

    /// Why there is no shared playlist to serve: the error response.
    struct NoPlaylist: Error {
        var response: OriginResponse
    }

    /// The current version of a channel's multivariant, media or I-frame playlist, with its cache
    /// policy; or the error response. Also how ``OriginFastPath`` checks that the response it
    /// encoded is still the current one.
    func sharedPlaylist(channel: String, _ which: SharedPlaylist) -> Result<(RenderedPlaylist, CachePolicy), NoPlaylist> {
        guard let snapshot = content.snapshot(of: channel) else { return .failure(NoPlaylist(response: noChannel(channel))) }
        if case .starting = snapshot.state { return .failure(NoPlaylist(response: starting(snapshot))) }
        let rendition: String
        switch which {
        case .multivariant:
            guard let playlist = snapshot.multivariant else {
                return .failure(
                    NoPlaylist(response: unavailable(snapshot, "channel \(quoted(channel)) has no multivariant playlist yet")))
            }
            return .success((playlist, CachePolicy(.multivariantPlaylist)))
        case .iFrames(let name):
            guard let playlist = snapshot.iFramePlaylists[name] else {
                guard snapshot.mediaPlaylists[name] != nil else { return .failure(NoPlaylist(response: noRendition(name, of: snapshot))) }
                return .failure(
                    NoPlaylist(
                        response: .refused(
                            Refusal(.notFound, "rendition \(quoted(name)) of \(quoted(channel)) has no I-frame playlist"),
                            cachePolicy: CachePolicy(.error(targetDuration: snapshot.targetDuration)))))
            }
            let targetDuration = playlist.targetDuration ?? snapshot.targetDuration
            return .success((playlist, CachePolicy(.mediaPlaylist(targetDuration: targetDuration))))
        case .media(let name):
            rendition = name
        }
        guard let playlist = snapshot.mediaPlaylists[rendition] else {
            if snapshot.segments[rendition] != nil {
                return .failure(
                    NoPlaylist(
                        response: unavailable(snapshot, "rendition \(quoted(rendition)) of \(quoted(channel)) has no playlist yet")))
            }
            return .failure(NoPlaylist(response: noRendition(rendition, of: snapshot)))
        }
        let targetDuration = playlist.targetDuration ?? snapshot.targetDuration
        return .success((playlist, CachePolicy(.mediaPlaylist(targetDuration: targetDuration))))
    }

    /// A blocking reload measured against `edge` (F7, F8, F10), shared and stitched alike: `nil` when
    /// this version answers it, else the request held for a later one or refused as too far ahead.
    static func blocking(
        _ edge: PlaylistEdge?, msn: UInt64, part: UInt64?, channel: String, targetDuration: Int, refusalPolicy: CachePolicy
    ) -> OriginResponse? {
        switch edge?.answer(msn: msn, part: part) ?? .now {
        case .now: nil
        case .wait: .held(channel: channel, targetDuration: targetDuration)
        case .tooFarAhead(let reason): .refused(Refusal(.badRequest, reason), cachePolicy: refusalPolicy)
        }
    }

    /// The delta update `skip` asks for (F14, F15), or the full playlist when there is none (no
    /// CAN-SKIP-UNTIL, or ENDLIST: the directive is then ignored).
    static func delta(of playlist: RenderedPlaylist, _ skip: DeliveryDirectives.Skip?) -> RenderedPlaylist {
        guard let skip, let deltas = playlist.deltas else { return playlist }
        switch skip {
        case .segments: return deltas.segments
        case .segmentsAndDateRanges: return deltas.segmentsAndDateRanges ?? deltas.segments
        }
    }

    /// One version of a playlist: gzip when accepted (HLS-RULES G3), each representation with its
    /// own strong ETag, `Vary: Accept-Encoding` on both so a CDN keeps them apart.
    func serve(_ playlist: RenderedPlaylist, cachePolicy: CachePolicy, fields: OriginRequest.Fields) -> OriginResponse {
        let gzip = AcceptEncoding.acceptsGzip(fields.acceptEncoding)
        let entityTag = gzip ? playlist.gzipEntityTag : playlist.entityTag
        var response = OriginResponse(status: .ok, cachePolicy: cachePolicy, lastModified: playlist.lastModified)
        response.headers.add(name: "Content-Type", value: ContentType.playlist.value)
        response.headers.add(name: "Vary", value: "Accept-Encoding")
        response.headers.add(name: "ETag", value: entityTag)
        switch Self.preconditions(fields, entityTag: entityTag, lastModified: playlist.lastModified) {
        case .notModified:
            response.status = .notModified
            response.headers.remove(name: "Content-Type")  // 304 carries validators and caching fields only
            return response
        case .preconditionFailed:
            return .refused(Refusal(.preconditionFailed, "the playlist has changed"),
                cachePolicy: nil,
                headers: HTTPHeaders([("Vary", "Accept-Encoding")])
            )
        case .proceed:
            break
        }
        if gzip { response.headers.add(name: "Content-Encoding", value: "gzip") }
        response.body = .bytes(gzip ? playlist.gzipBody : playlist.body)
        response.cacheStatus = .hit
        response.uncompressedLength = Int64(playlist.body.readableBytes)
        return response
    }

    // MARK: - Segments

    private func segment(
        channel: String, rendition: String, name: String, fields: OriginRequest.Fields, quietly: Bool
    ) -> OriginResponse {
        guard let snapshot = content.snapshot(of: channel) else { return noChannel(channel) }
        guard let files = snapshot.segments[rendition] else {
            if snapshot.mediaPlaylists[rendition] == nil { return noRendition(rendition, of: snapshot) }
            return notYetAvailable(name, rendition: rendition, channel: channel)
        }
        guard let file = files[name] else {
            // The part the playlist hints is requested before it exists (a player fetches it with
            // its blocking reload): held until a version lists it (F5). Answered then by the
            // decision above; a hint withdrawn unlisted (an encoder restart, a part given up) is a 404.
            if snapshot.mediaPlaylists[rendition]?.hintedPart == "\(rendition)/\(name)" {
                return .held(channel: channel, targetDuration: snapshot.targetDuration, awaiting: .hintedPart(name))
            }
            return notYetAvailable(name, rendition: rendition, channel: channel)
        }
        switch OpenFile.open(ConfinedPath(file: file.path, symlinks: symlinks)) {
        case .success(let opened) where opened.size >= file.length:
            var response = OriginResponse(
                status: .ok,
                cachePolicy: CachePolicy(.segment),
                lastModified: file.lastModified
            )
            response.headers.add(name: "Content-Type", value: file.contentType)
            return serve(opened, length: file.length, entityTag: file.entityTag, response, fields: fields)
        case .success(let opened):
            opened.close()
            if quietly { break }
            logger.warning(
                "segment file is shorter than listed",
                metadata: [
                    "hls.channel.id": "\(channel)", "hls.rendition": "\(rendition)", "file.path": "\(file.path)",
                    "file.size": "\(opened.size)", "file.expected_size": "\(file.length)",
                ]
            )
        case .failure(.refusedSymlink):
            if quietly { break }
            refusals.refusedSymlink(.segment)
            logger.warning(
                "segment file is a symbolic link the server does not follow (server.follow_symlinks); not served",
                metadata: ["hls.channel.id": "\(channel)", "hls.rendition": "\(rendition)", "file.path": "\(file.path)"])
        case .failure(let failure):
            if quietly { break }
            logger.warning(
                "segment file vanished before it could be opened",
                metadata: [
                    "hls.channel.id": "\(channel)", "hls.rendition": "\(rendition)", "file.path": "\(file.path)",
                    "error.type": "\(failure)",
                ]
            )
        }
        return .refused(Refusal(.notFound, "segment \(quoted(name)) of \(quoted(channel))/\(quoted(rendition)) is no longer available"),
            cachePolicy: CachePolicy(.error(targetDuration: snapshot.targetDuration))
        )
    }

    // MARK: - Static files

    private func staticFile(path: [String], fields: OriginRequest.Fields, quietly: Bool) -> OriginResponse {
        // Made only when needed: building an error response on every hit cost ~3% of a range request.
        var notFound: OriginResponse {
            OriginResponse.refused(Refusal(.notFound, "no such file"), cachePolicy: CachePolicy(.error(targetDuration: nil)))
        }
        guard let publicDirectory else { return notFound }
        let relative = path.isEmpty ? "index.html" : path.joined(separator: "/")
        let file = ConfinedPath(root: publicDirectory, relative: relative, symlinks: symlinks)
        switch OpenFile.open(file) {
        case .success(let opened):
            // nginx's validator: modification time and size, hex. Strong, since a file is replaced
            // whole on redeploy (a rewrite within the same second of the same size is not caught).
            let entityTag = "\"\(String(opened.modified, radix: 16))-\(String(opened.size, radix: 16))\""
            var response = OriginResponse(
                status: .ok,
                cachePolicy: CachePolicy(.staticFile),
                lastModified: opened.modified
            )
            response.headers.add(name: "Content-Type", value: ContentType.forPath(relative).value)
            return serve(opened, length: opened.size, entityTag: entityTag, response, fields: fields)
        case .failure(.notFound), .failure(.notRegularFile):
            return notFound
        case .failure where quietly:
            return notFound
        case .failure(.refusedSymlink):
            // Answered as a missing file: the client learns nothing of where the link leads.
            refusals.refusedSymlink(.staticFile)
            logger.warning(
                "cannot open static file",
                metadata: ["file.path": "\(file)", "error.type": "a symbolic link the server does not follow (server.follow_symlinks)"]
            )
            return notFound
        case .failure(.failed(let code)):
            logger.warning(
                "cannot open static file",
                metadata: ["file.path": "\(file)", "error.type": "errno \(code)"]
            )
            return notFound
        }
    }

    // MARK: - Files (segments and static)

    /// The common part of every file response: preconditions (§13.2.2), then `Range` (§14).
    /// `response` carries the status-independent fields (type, cache policy, last modified).
    private func serve(
        _ file: OpenFile,
        length: Int64,
        entityTag: String,
        _ response: OriginResponse,
        fields: OriginRequest.Fields
    ) -> OriginResponse {
        var response = response
        response.headers.add(name: "Accept-Ranges", value: "bytes")
        response.headers.add(name: "ETag", value: entityTag)
        switch Self.preconditions(fields, entityTag: entityTag, lastModified: response.lastModified) {
        case .notModified:
            file.close()
            response.status = .notModified
            response.headers.remove(name: "Content-Type")
            return response
        case .preconditionFailed:
            file.close()
            return .refused(Refusal(.preconditionFailed, "the resource does not match the precondition"), cachePolicy: nil)
        case .proceed:
            break
        }
        let range = ByteRangeRequest.evaluate(
            range: fields.range,
            ifRange: fields.ifRange,
            length: length,
            entityTag: entityTag,
            lastModifiedSeconds: response.lastModified
        )
        switch range {
        case .full:
            response.body = .file(file, offset: 0, count: length)
        case .partial(let first, let last):
            response.status = .partialContent
            response.headers.add(
                name: "Content-Range",
                value: ByteRangeRequest.contentRange(first: first, last: last, length: length)
            )
            response.body = .file(file, offset: first, count: last - first + 1)
        case .unsatisfiable:
            file.close()
            var extra = HTTPHeaders()
            extra.add(name: "Content-Range", value: ByteRangeRequest.unsatisfiedContentRange(length: length))
            return .refused(Refusal(.rangeNotSatisfiable, "the range starts beyond the end of the \(length)-byte resource"),
                cachePolicy: response.cachePolicy,
                headers: extra
            )
        }
        return response
    }

    static func preconditions(_ fields: OriginRequest.Fields, entityTag: String, lastModified: Int64?) -> ConditionalOutcome {
        ConditionalRequest.evaluate(
            method: .getOrHead,
            ifMatch: fields.ifMatch,
            ifNoneMatch: fields.ifNoneMatch,
            ifModifiedSince: fields.ifModifiedSince,
            ifUnmodifiedSince: fields.ifUnmodifiedSince,
            entityTag: entityTag,
            lastModifiedSeconds: lastModified
        )
    }

    // MARK: - Health and metrics

    /// `/healthz` (liveness: 200 while the process serves) and `/readyz` (readiness: 200 only when
    /// every channel is ready, else 503), with the same body: the overall status (`ok` when every
    /// channel is ready, else `degraded`) and each channel's state, live-edge age and target
    /// duration (see ``ChannelHealth``).
    ///
    /// ```json
    /// {"status":"ok","channels":{"demo":{"state":"live","liveEdgeAgeSeconds":1.2,"targetDuration":2,"ready":true}}}
    /// ```
    private func health(readiness: Bool) -> OriginResponse {
        let channels = ChannelHealth.all(content, now: clock.now())
        let ready = channels.allSatisfy(\.isReady)
        var json = #"{"status":"# + (ready ? #""ok""# : #""degraded""#) + #","channels":{"#
        for (index, channel) in channels.enumerated() {
            if index > 0 { json.append(",") }
            json.append(JSONString.quoted(channel.name))
            json.append(#":{"state":"#)
            json.append(JSONString.quoted(channel.stateName))
            if let reason = channel.degradedReason {
                json.append(#","reason":"#)
                json.append(JSONString.quoted(reason))
            }
            json.append(#","liveEdgeAgeSeconds":"#)
            json.append(channel.liveEdgeAge.map { FixedPoint.seconds(micros: $0, digits: 3) } ?? "null")
            json.append(#","targetDuration":\#(channel.targetDuration),"ready":\#(channel.isReady)}"#)
        }
        json.append("}}\n")
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: ContentType.json.value)
        return OriginResponse(
            status: readiness && !ready ? .serviceUnavailable : .ok,
            headers: headers,
            body: .bytes(ByteBuffer(string: json)),
            cachePolicy: CachePolicy(.health)
        )
    }

    /// `/metrics`: the Prometheus text exposition, after updating the live-edge gauges.
    private func metricsExposition() -> OriginResponse {
        let bytes = metrics.exposition(channels: ChannelHealth.all(content, now: clock.now()))
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: ContentType.prometheus.value)
        return OriginResponse(
            status: .ok,
            headers: headers,
            body: .bytes(ByteBuffer(bytes: bytes)),
            cachePolicy: CachePolicy(.health)
        )
    }

    // MARK: - Errors

    private func noChannel(_ channel: String) -> OriginResponse {
        .refused(Refusal(.notFound, "no channel \(quoted(channel))"), cachePolicy: CachePolicy(.error(targetDuration: nil)))
    }

    private func noRendition(_ rendition: String, of snapshot: ChannelSnapshot) -> OriginResponse {
        .refused(Refusal(.notFound, "channel \(quoted(snapshot.name)) has no rendition \(quoted(rendition))"),
            cachePolicy: CachePolicy(.error(targetDuration: snapshot.targetDuration))
        )
    }

    private func starting(_ snapshot: ChannelSnapshot) -> OriginResponse {
        unavailable(snapshot, "channel \(quoted(snapshot.name)) is starting and has no playlist yet")
    }

    /// 503 with a short cache lifetime (G7: 1×TD for an error, at most 6 s) and `Retry-After`.
    private func unavailable(_ snapshot: ChannelSnapshot, _ message: String) -> OriginResponse {
        let policy = CachePolicy(.error(targetDuration: snapshot.targetDuration))
        var extra = HTTPHeaders()
        extra.add(name: "Retry-After", value: String(policy.maxAge ?? 1))
        return .refused(Refusal(.unavailable, message), cachePolicy: policy, headers: extra)
    }

    private func notYetAvailable(_ name: String, rendition: String, channel: String) -> OriginResponse {
        .refused(Refusal(.notFound, "segment \(quoted(name)) of \(quoted(channel))/\(quoted(rendition)) is not available"),
            cachePolicy: CachePolicy(.notYetAvailable)
        )
    }
}

/// CORS for browser players on other origins (hls.js): everything is public, nothing uses cookies.
enum CORS {
    static let allowOrigin = "*"
    /// Response fields a script may read beyond the CORS-safelisted ones.
    static let exposeHeaders = "Content-Length, Content-Range, Content-Encoding, Accept-Ranges, ETag, Date, Age"
    static let allowHeaders =
        "Range, If-None-Match, If-Modified-Since, If-Range, Authorization, Content-Type, X-Playback-Session-Id"
    static let maxAge = "86400"
}

/// Fixed-point decimals without Foundation, for JSON numbers and the access log.
enum FixedPoint {
    /// `micros` µs as seconds with `digits` (1...6) decimals, rounded down: `1234567, 3` → `1.234`.
    static func seconds(micros: Int64, digits: Int) -> String {
        let micros = max(0, micros)
        var scale: Int64 = 1
        for _ in 0..<(6 - digits) { scale *= 10 }
        let fraction = String((micros % 1_000_000) / scale)
        return "\(micros / 1_000_000)." + String(repeating: "0", count: digits - fraction.count) + fraction
    }
}

/// Minimal JSON string quoting (RFC 8259 §7), for `/healthz`.
enum JSONString {
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out.append("\\\"")
            case "\\": out.append("\\\\")
            case "\n": out.append("\\n")
            case "\r": out.append("\\r")
            case "\t": out.append("\\t")
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out.append("\"")
        return out
    }
}

extension HTTPHeaders {
    /// All values of a list field joined with `, ` (RFC 9110 §5.3), or `nil` when absent.
    func joined(_ name: String) -> String? {
        let values = self[name]
        switch values.count {
        case 0: return nil
        case 1: return values[0]
        default: return values.joined(separator: ", ")
        }
    }
}
