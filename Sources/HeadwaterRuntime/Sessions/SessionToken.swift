/// One viewer session, carried whole in the URL of every stitched playlist request
/// (`/ssai/{channel}/{rendition}.m3u8?session=<token>`), so that nothing per session is stored on
/// the server and any node can serve any session (DESIGN.md "Data flow").
///
/// A token is only ever trusted after ``SessionSigner/verify(_:channel:now:maxAge:allowedSkew:)``
/// checked its MAC, channel and age. Its text form is compact and URL-safe:
/// `base64url(payload) "." base64url(HMAC-SHA256(payload)[0..<16])`; see ``encoded()`` for the
/// payload layout. A typical session (a 36-character player session id, three targeting keys)
/// is about 130 characters; each copied request header adds up to about 200.
public struct SessionToken: Sendable, Hashable {
    /// The channel the session was started on. A token for one channel is refused on another.
    public var channel: String
    /// The session id: the player's `X-Playback-Session-Id` when it sent a valid one, else 16 random
    /// bytes in base64url (see ``sessionID(playbackSessionID:)``). It names the session in logs
    /// and in ad decisions, and keys the beacon dedupe.
    public var id: String
    /// When the session started, in milliseconds since the Unix epoch.
    public var start: Int64
    /// Targeting attributes for ad rules (``SessionTargeting``): `channel`, the query's keys, and
    /// copied headers as `header.<name>`. Encoded sorted by key, so one session has one encoding.
    public var targeting: [String: String]

    public init(channel: String, id: String, start: Int64, targeting: [String: String] = [:]) {
        self.channel = channel
        self.id = id
        self.start = start
        self.targeting = targeting
    }

    /// The longest session id accepted from a player, in bytes.
    public static let maxSessionIDLength = 64

    /// The id for a new session: `playbackSessionID` (the player's `X-Playback-Session-Id`) when it
    /// is valid — 1 to 64 bytes of visible ASCII (`!`…`~`) — else a random one. An invalid header
    /// is not an error: players are not required to send one, and the session works without it.
    public static func sessionID(playbackSessionID: String?) -> String {
        var generator = SystemRandomNumberGenerator()
        return sessionID(playbackSessionID: playbackSessionID, using: &generator)
    }

    /// ``sessionID(playbackSessionID:)`` with a given generator (tests).
    public static func sessionID(playbackSessionID: String?, using generator: inout some RandomNumberGenerator)
        -> String
    {
        if let playbackSessionID, isValidSessionID(playbackSessionID) { return playbackSessionID }
        return randomSessionID(using: &generator)
    }

    /// Whether `id` may be used as a session id: 1 to 64 bytes, each a visible ASCII character.
    public static func isValidSessionID(_ id: String) -> Bool {
        let utf8 = id.utf8
        return !utf8.isEmpty && utf8.count <= maxSessionIDLength
            && utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }

    /// 16 random bytes in base64url (22 characters). With `SystemRandomNumberGenerator` the bytes
    /// come from the operating system's cryptographic generator.
    public static func randomSessionID(using generator: inout some RandomNumberGenerator) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for _ in 0..<2 {
            let word = generator.next()
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return Base64URL.encode(bytes)
    }
}
