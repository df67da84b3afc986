public import HeadwaterLiveWindow
import NIOCore
public import NIOHTTP1

extension HTTPResponseStatus {
    /// The status each kind of refusal is answered with: the one place the origin's refusals
    /// (ingest, sessions, the admin API, routing, serving) become HTTP statuses.
    public init(_ kind: Refusal.Kind) {
        self =
            switch kind {
            case .badRequest: .badRequest
            case .unauthorized: .unauthorized
            case .forbidden: .forbidden
            case .notFound: .notFound
            case .methodNotAllowed: .methodNotAllowed
            case .conflict: .conflict
            case .preconditionFailed: .preconditionFailed
            case .tooLarge: .payloadTooLarge
            case .unsupportedMediaType: .unsupportedMediaType
            case .rangeNotSatisfiable: .rangeNotSatisfiable
            case .uriTooLong: .uriTooLong
            case .headerFieldsTooLarge: .requestHeaderFieldsTooLarge
            case .notImplemented: .notImplemented
            case .unprocessable: .unprocessableEntity
            case .failed: .internalServerError
            case .unavailable: .serviceUnavailable
            case .insufficientStorage: .insufficientStorage
            }
    }
}

extension OriginResponse {
    /// The answer to a refused request: the kind's status with a one-line `text/plain` body,
    /// `<code> <reason>: <message>` (`404 Not Found: channel "demo" has no rendition "v9"`); line
    /// breaks in the reason become spaces. A 401 carries the `WWW-Authenticate` challenge RFC 9110
    /// §11.6.1 requires, for a bearer token in `realm`.
    static func refused(
        _ refusal: Refusal,
        cachePolicy: CachePolicy?,
        headers extra: HTTPHeaders = HTTPHeaders(),
        realm: String = "headwater"
    ) -> OriginResponse {
        let status = HTTPResponseStatus(refusal.kind)
        var line = "\(status.code) \(status.reasonPhrase): "
        for scalar in refusal.reason.unicodeScalars {
            line.unicodeScalars.append(scalar == "\r" || scalar == "\n" ? " " : scalar)
        }
        line.append("\n")
        var headers = extra
        headers.add(name: "Content-Type", value: ContentType.plainText.value)
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        if refusal.kind == .unauthorized { headers.add(name: "WWW-Authenticate", value: "Bearer realm=\"\(realm)\"") }
        return OriginResponse(
            status: status,
            headers: headers,
            body: .bytes(ByteBuffer(string: line)),
            cachePolicy: cachePolicy
        )
    }
}
