public import HeadwaterLiveWindow
import Crypto

/// Mints and checks key tokens: what an entitlement service issues so that a viewer of a `/live`
/// channel may fetch its keys (`?token=…` on the key URI, or `Authorization: Bearer …`). A token
/// names one channel and when it stops working, and nothing else; another service mints them with
/// the shared secret and this format (version 1):
///
/// ```
/// payload = 0x01                   version, 1 byte
///         ‖ expiry                 8 bytes, unsigned big-endian: Unix time in seconds; the token
///                                  is refused from this second on
///         ‖ channel                the channel name as in the key URI, UTF-8, to the end
/// mac     = HMAC-SHA256(key: the secret's bytes, message: payload), all 32 bytes
/// token   = base64url(payload ‖ mac), RFC 4648 §5, without `=` padding
/// ```
///
/// The secret is the UTF-8 bytes of its text exactly as configured (nothing decoded or trimmed),
/// at least 32 of them (`openssl rand -hex 32` gives 64), and is not the content-key secret: the
/// entitlement service holds this one, never the one keys come from. In Python:
///
/// ```python
/// payload = b"\x01" + expiry.to_bytes(8, "big") + channel.encode()
/// mac = hmac.new(secret.encode(), payload, hashlib.sha256).digest()
/// token = base64.urlsafe_b64encode(payload + mac).rstrip(b"=").decode()
/// ```
///
/// A binary payload leaves nothing to canonicalise (no decimal forms, separators or escaping to
/// agree on); the whole MAC is kept so there is no truncation to get wrong.
public struct KeyTokenSigner: Sendable {
    /// The shortest secret accepted, in bytes.
    public static let minimumSecretLength = 32
    /// The longest token text looked at (a 64-byte channel name makes 140 characters).
    public static let maxTokenLength = 256
    static let version: UInt8 = 1
    static let macLength = 32
    /// Version, expiry, at least one byte of channel, MAC.
    static let minimumLength = 1 + 8 + 1 + macLength

    /// HMAC-SHA256 keyed once; each MAC starts from a copy.
    private let keyed: HMAC<SHA256>

    /// A signer whose HMAC key is the UTF-8 bytes of `secretText`.
    public init(secretText: String) throws(KeySecretError) { try self.init(secret: Array(secretText.utf8)) }

    /// A signer whose HMAC key is `secret`.
    public init(secret: [UInt8]) throws(KeySecretError) {
        guard secret.count >= Self.minimumSecretLength else { throw .tokenSecretTooShort(bytes: secret.count) }
        self.keyed = HMAC<SHA256>(key: SymmetricKey(data: secret))
    }

    /// A token for `channel` that works until `expiry` (Unix seconds), exclusive.
    public func mint(channel: String, expiry: UInt64) -> String {
        var payload: [UInt8] = [Self.version]
        withUnsafeBytes(of: expiry.bigEndian) { payload += $0 }
        payload += channel.utf8
        return Base64URL.encode(payload + mac(payload))
    }

    /// Accepts `presented` for a key of `channel` at `now`, or refuses it with a
    /// ``Refusal/Kind/forbidden`` whose reason says which of missing, malformed, forged (or
    /// altered), another channel or expired it is; the reason never contains the token.
    ///
    /// The MAC is checked before anything the payload says is believed, and compared in constant
    /// time (``BearerToken/matches(_:expected:)``).
    ///
    /// - Parameters:
    ///   - presented: the token from the key URI's query or the `Authorization` header; `nil` when
    ///     the request had none.
    ///   - channel: the channel of the requested key URI.
    ///   - now: the current time in microseconds since the epoch (``WallClock/now()``).
    public func verify(_ presented: String?, channel: String, now: Int64) throws(Refusal) {
        guard let presented, !presented.isEmpty else { throw Refusal(.forbidden, "key token missing") }
        guard presented.utf8.count <= Self.maxTokenLength else { throw Self.malformed("longer than \(Self.maxTokenLength) characters") }
        guard let bytes = Base64URL.decode(presented.utf8) else { throw Self.malformed("not base64url") }
        guard bytes.count >= Self.minimumLength else { throw Self.malformed("too short") }
        let payload = Array(bytes.dropLast(Self.macLength))
        guard BearerToken.matches(Array(bytes.suffix(Self.macLength)), expected: mac(payload)) else {
            throw Refusal(.forbidden, "key token signature does not match (forged or altered)")
        }
        guard payload[0] == Self.version else { throw Self.malformed("unknown version \(payload[0])") }
        let tokenChannel = payload[9...]
        guard tokenChannel.elementsEqual(channel.utf8) else {
            let name = String(decoding: tokenChannel, as: UTF8.self)
            let named = Naming.isValid(name) ? "channel \(name)" : "another channel"
            throw Refusal(.forbidden, "key token is for \(named), not \(channel)")
        }
        let expiry = payload[1..<9].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let nowSeconds = now < 0 ? 0 : UInt64(now / 1_000_000)
        guard nowSeconds < expiry else {
            throw Refusal(.forbidden, "key token expired \(nowSeconds - expiry) s ago")
        }
    }

    private static func malformed(_ detail: String) -> Refusal { Refusal(.forbidden, "key token is malformed (\(detail))") }

    private func mac(_ payload: [UInt8]) -> [UInt8] {
        var hmac = keyed
        hmac.update(data: payload)
        return Array(hmac.finalize())
    }
}
