import Crypto

/// Signs and verifies ``SessionToken``s with HMAC-SHA256, the MAC truncated to 128 bits
/// (RFC 2104 §5 allows truncation to no less than half the hash; 128 bits leaves a forger one
/// chance in 2¹²⁸ per attempt).
///
/// Every node that serves the same sessions needs the same secret. Without one configured, use
/// ``random()``: sessions then end when the process restarts and other nodes refuse them, and the
/// caller should say so in a warning at start-up.
public struct SessionSigner: Sendable {
    /// The shortest secret accepted, in bytes.
    public static let minimumSecretLength = 16
    /// Bytes of the MAC kept in a token.
    static let macLength = 16
    /// The longest token text accepted; longer input is refused before any work is done on it.
    public static let maxTokenLength = 2048
    /// How long a session lasts unless the caller says otherwise.
    public static let defaultMaxAge: Duration = .seconds(24 * 3600)
    /// How far in the future a session may start (clocks of two nodes differ a little).
    public static let defaultAllowedSkew: Duration = .seconds(30)

    /// HMAC-SHA256 keyed once (the inner and outer padded key states): each MAC starts from a copy.
    private let keyed: HMAC<SHA256>

    /// A signer whose key is SHA-256 of `secret`, so a secret of any length (≥ 16 bytes) works.
    public init(secret: some Sequence<UInt8>) throws(SessionSecretError) {
        let bytes = Array(secret)
        guard bytes.count >= Self.minimumSecretLength else { throw SessionSecretError(length: bytes.count) }
        self.init(key: SymmetricKey(data: SHA256.hash(data: bytes)))
    }

    /// A signer with a random 256-bit key: for when no secret is configured.
    public static func random() -> SessionSigner { SessionSigner(key: SymmetricKey(size: .bits256)) }

    private init(key: SymmetricKey) { self.keyed = HMAC<SHA256>(key: key) }

    /// The token's text form: `base64url(payload).base64url(mac)`.
    public func sign(_ token: SessionToken) -> String { sign(payload: token.encoded()) }

    /// Any payload, signed (tests use it to check what a genuine MAC over a bad payload gets).
    func sign(payload: [UInt8]) -> String { Base64URL.encode(payload) + "." + Base64URL.encode(mac(payload)) }

    /// The session `string` carries, once its MAC, channel and age are checked.
    ///
    /// - Parameters:
    ///   - string: the `session` query value.
    ///   - channel: the channel of the requested URL; a token for another channel is refused.
    ///   - now: the current time in milliseconds since the epoch.
    ///   - maxAge: sessions that started longer ago are refused.
    ///   - allowedSkew: sessions may start this far in the future (another node's clock).
    public func verify(
        _ string: String,
        channel: String,
        now: Int64,
        maxAge: Duration = SessionSigner.defaultMaxAge,
        allowedSkew: Duration = SessionSigner.defaultAllowedSkew
    ) throws(SessionTokenError) -> SessionToken {
        let text = string.utf8
        guard !text.isEmpty else { throw .malformed("empty") }
        guard text.count <= Self.maxTokenLength else { throw .malformed("longer than \(Self.maxTokenLength) bytes") }
        guard let dot = text.firstIndex(of: UInt8(ascii: ".")) else { throw .malformed("no '.'") }
        guard let payload = Base64URL.decode(text[..<dot]), !payload.isEmpty,
            let presented = Base64URL.decode(text[text.index(after: dot)...])
        else { throw .malformed("not base64url") }
        guard presented.count == Self.macLength else { throw .malformed("signature is not \(Self.macLength) bytes") }
        guard Self.constantTimeEquals(presented, mac(payload)) else { throw .badSignature }

        let token = try SessionToken(decoding: payload)
        try check(token, channel: channel, now: now, maxAge: maxAge, allowedSkew: allowedSkew)
        return token
    }

    /// The checks of ``verify(_:channel:now:maxAge:allowedSkew:)`` after the MAC, for a token that
    /// passed them before (a verified session remembered by its text): channel and age.
    public func check(
        _ token: SessionToken,
        channel: String,
        now: Int64,
        maxAge: Duration = SessionSigner.defaultMaxAge,
        allowedSkew: Duration = SessionSigner.defaultAllowedSkew
    ) throws(SessionTokenError) {
        try check(tokenChannel: token.channel, start: token.start, channel: channel, now: now, maxAge: maxAge, allowedSkew: allowedSkew)
    }

    /// ``check(_:channel:now:maxAge:allowedSkew:)`` for a token known by its channel and start.
    public func check(
        tokenChannel: String,
        start: Int64,
        channel: String,
        now: Int64,
        maxAge: Duration = SessionSigner.defaultMaxAge,
        allowedSkew: Duration = SessionSigner.defaultAllowedSkew
    ) throws(SessionTokenError) {
        guard tokenChannel == channel else { throw .foreignChannel(token: tokenChannel, requested: channel) }
        // Age in milliseconds; a difference beyond Int64 saturates (such a token is far out of range).
        let (difference, overflow) = now.subtractingReportingOverflow(start)
        let age = overflow ? (now < start ? Int64.min : Int64.max) : difference
        if age > Self.milliseconds(maxAge) { throw .expired(age: .milliseconds(age), maxAge: maxAge) }
        let ahead = age == .min ? Int64.max : -age
        if ahead > Self.milliseconds(allowedSkew) { throw .startsInFuture(by: .milliseconds(ahead)) }
    }

    private func mac(_ payload: [UInt8]) -> [UInt8] {
        var hmac = keyed
        hmac.update(data: payload)
        return Array(hmac.finalize().prefix(Self.macLength))
    }

    /// Compares in time that depends only on the lengths, not on where the first difference is.
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// `duration` in whole milliseconds, saturating.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let (total, overflow2) = ms.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        if overflow || overflow2 { return seconds < 0 ? .min : .max }
        return total
    }
}
