import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
import NIOCore
import NIOHTTP1

/// `/ssai/…` and `/admin/…`: per-viewer playlists, rendered per request and never shared by a cache
/// (`private, no-store`), and "cue now".
extension OriginResponder {
    func sessionPlaylist(channel: String, query: [RequestTarget.QueryItem], request: OriginRequest) -> OriginResponse {
        guard let adInsertion else { return adsDisabled() }
        let result = adInsertion.startSession(
            channel: channel, query: query.map { ($0.name, $0.value) }, headers: request.allFields, now: clock.now() / 1000)
        return personalized(result, fields: request.fields)
    }

    func stitchedPlaylist(
        channel: String, rendition: String, session: String?, iFrames: Bool = false, target: String = "",
        fields: OriginRequest.Fields
    ) -> OriginResponse {
        guard let adInsertion else { return adsDisabled() }
        let directives = DeliveryDirectives.of(target: target)
        let result = adInsertion.stitchedPlaylist(
            channel: channel, rendition: rendition, token: session, iFrames: iFrames, deltaUpdate: directives.skip != nil,
            now: clock.now() / 1000)
        // A blocking reload (F7, F8, F10) measured against this session's stitched playlist.
        if let msn = directives.msn, case .success(let playlist) = result,
            let notYet = Self.blocking(
                playlist.edge, msn: msn, part: directives.part, channel: channel, targetDuration: playlist.targetDuration ?? 1,
                refusalPolicy: CachePolicy(.personalizedPlaylist))
        {
            return notYet
        }
        metrics.stitchedPlaylist(outcome: Self.outcome(result))
        return personalized(result, fields: fields)
    }

    /// `POST /admin/channels/{channel}/breaks?duration=30` with `Authorization: Bearer <admin token>`:
    /// 202 with the break's id; it starts at the channel's next segment.
    func adminBreak(channel: String, duration: String?, fields: OriginRequest.Fields) -> OriginResponse {
        guard let adInsertion else { return adsDisabled() }
        switch adInsertion.requestBreak(channel: channel, duration: duration, authorization: fields.authorization) {
        case .success(let id):
            var extra = HTTPHeaders()
            extra.add(name: "Content-Type", value: ContentType.json.value)
            return OriginResponse(
                status: .accepted, headers: extra,
                body: .bytes(ByteBuffer(string: #"{"break":"# + JSONString.quoted(id) + "}\n")),
                cachePolicy: CachePolicy(.health))
        case .failure(let refusal):
            return Self.refused(refusal, targetDuration: nil, realm: "headwater-admin")
        }
    }

    private func personalized(
        _ result: Result<AdInsertion.Playlist, AdInsertion.Refusal>, fields: OriginRequest.Fields
    ) -> OriginResponse {
        switch result {
        case .success(let playlist):
            var response = OriginResponse(status: .ok, cachePolicy: CachePolicy(.personalizedPlaylist))
            response.headers.add(name: "Content-Type", value: ContentType.playlist.value)
            response.headers.add(name: "Vary", value: "Accept-Encoding")
            response.uncompressedLength = Int64(playlist.count)
            if AcceptEncoding.acceptsGzip(fields.acceptEncoding), let gzip = playlist.gzipBody() {
                response.headers.add(name: "Content-Encoding", value: "gzip")
                response.body = .bytes(gzip)
            } else {
                response.body = .bytes(playlist.identityBody())
            }
            // Performed by the writer once the body is out (only a GET's 200 has one).
            if let due = playlist.dueTracking { response.afterBodyWritten = { due.perform() } }
            return response
        case .failure(let refusal):
            return Self.refused(refusal, targetDuration: nil)
        }
    }

    static func refused(_ refusal: AdInsertion.Refusal, targetDuration: Int?, realm: String = "headwater") -> OriginResponse {
        // A refusal is about this viewer's request: never shared by a cache either.
        var extra = HTTPHeaders()
        if refusal.kind == .unavailable { extra.add(name: "Retry-After", value: "1") }
        return .refused(refusal, cachePolicy: CachePolicy(.personalizedPlaylist), headers: extra, realm: realm)
    }

    private static func outcome(_ result: Result<AdInsertion.Playlist, AdInsertion.Refusal>) -> String {
        switch result {
        case .success: "ok"
        case .failure(let refusal):
            switch refusal.kind {
            case .badRequest, .methodNotAllowed, .preconditionFailed, .tooLarge, .unsupportedMediaType,
                .rangeNotSatisfiable, .unprocessable, .uriTooLong, .headerFieldsTooLarge, .notImplemented:
                "bad_request"
            case .unauthorized, .forbidden: "forbidden"
            case .notFound: "not_found"
            case .conflict: "conflict"
            case .unavailable: "unavailable"
            case .failed, .insufficientStorage: "error"
            }
        }
    }

    private func adsDisabled() -> OriginResponse {
        .refused(Refusal(.notFound, "ad insertion is not enabled on this server (no ad configuration: server.ads)"),
            cachePolicy: CachePolicy(.error(targetDuration: nil)))
    }
}
