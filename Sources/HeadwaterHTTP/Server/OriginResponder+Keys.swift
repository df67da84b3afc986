import HeadwaterLiveWindow
import HeadwaterRuntime
import NIOCore
import NIOHTTP1

/// `/keys/{channel}/{index}.key`: the 16 bytes of a content key, to an entitled request only, and
/// never stored by a cache (`private, no-store`).
///
/// Entitlement is decided before anything about the key is revealed: a key URI with `session=`
/// (from a stitched playlist) needs that viewer's session, valid and of this channel; otherwise a
/// channel with `key_access: open` gives its keys to anyone, and one with `key_access: token`
/// needs a key token (``KeyTokenSigner``) as `?token=` or `Authorization: Bearer`. Then only the
/// keys of segments that can be fetched now are served (404 for another index). Each answer is
/// counted by outcome; neither the key nor the token is ever logged or counted.
extension OriginResponder {
    func key(channel: String, index text: String, session: String?, token: String?, fields: OriginRequest.Fields) -> OriginResponse {
        let response = keyResponse(channel: channel, index: text, session: session, token: token, fields: fields)
        let known = content.snapshot(of: channel) != nil
        let outcome =
            switch response.status {
            case .ok, .notModified: "ok"
            case .forbidden: "forbidden"
            default: "not_found"
            }
        metrics.keyRequested(channel: known ? channel : "unknown", outcome: outcome)
        return response
    }

    private func keyResponse(
        channel: String, index text: String, session: String?, token: String?, fields: OriginRequest.Fields
    ) -> OriginResponse {
        let notFound = CachePolicy(.personalizedPlaylist)
        guard let snapshot = content.snapshot(of: channel), let keying = snapshot.keying else {
            return .refused(Refusal(.notFound, "no encrypted channel \(quoted(channel))"), cachePolicy: notFound)
        }
        if let refusal = entitlementRefusal(keying, session: session, token: token, fields: fields) {
            return .refused(refusal, cachePolicy: notFound)
        }
        guard let index = UInt64(text), String(index) == text else {
            return .refused(Refusal(.notFound, "a key index is a decimal number"), cachePolicy: notFound)
        }
        guard let window = snapshot.keyIndexes, window.contains(index) else {
            return .refused(Refusal(.notFound, "key \(index) of \(quoted(channel)) is not in the live window"), cachePolicy: notFound)
        }
        var response = OriginResponse(status: .ok, cachePolicy: CachePolicy(.personalizedPlaylist))
        response.headers.add(name: "Content-Type", value: "application/octet-stream")
        response.body = .bytes(ByteBuffer(bytes: keying.keys.key(channel: channel, index: index).bytes))
        return response
    }

    /// Why the request may not have a key of `keying`'s channel, or `nil` when it may.
    private func entitlementRefusal(
        _ keying: ChannelKeying, session: String?, token: String?, fields: OriginRequest.Fields
    ) -> Refusal? {
        if let session {
            guard let adInsertion else { return Refusal(.forbidden, "sessions are not enabled on this server") }
            return adInsertion.refusesSession(session, channel: keying.channel, now: clock.now() / 1000)
        }
        switch keying.access {
        case .open:
            return nil
        case .token(let signer):
            let presented = token ?? fields.authorization.flatMap(BearerToken.bearerToken).map {
                String(decoding: $0, as: UTF8.self)
            }
            do throws(Refusal) {
                try signer.verify(presented, channel: keying.channel, now: clock.now())
                return nil
            } catch {
                return error
            }
        }
    }
}
