public import HeadwaterLiveWindow

/// Why a session token was refused. Each is a ``Refusal/Kind/forbidden`` refusal (``refusal``) with
/// ``description`` as its one line; none reveals anything about the key.
public enum SessionTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not a token at all: empty, oversize, not base64url, no `.`, a MAC of the wrong length, or a
    /// payload that does not decode (unknown version, truncated, …). The text says which.
    case malformed(String)
    /// The MAC does not match the payload: forged, altered, or signed with another key.
    case badSignature
    /// A genuine token for another channel.
    case foreignChannel(token: String, requested: String)
    /// The session started longer ago than the maximum age.
    case expired(age: Duration, maxAge: Duration)
    /// The session starts later than now, by more than the allowed clock skew.
    case startsInFuture(by: Duration)

    /// The refusal a request with this token is answered with.
    public var refusal: Refusal { Refusal(.forbidden, description) }

    public var description: String {
        switch self {
        case .malformed(let detail):
            return "session token is malformed (\(detail))"
        case .badSignature:
            return "session token signature does not match (forged or altered)"
        case .foreignChannel(let token, let requested):
            return "session token is for channel \(token), not \(requested)"
        case .expired(let age, let maxAge):
            return "session token expired: started \(age.components.seconds) s ago, sessions last \(maxAge.components.seconds) s"
        case .startsInFuture(let by):
            return "session token starts \(by.components.seconds) s in the future (clock skew?)"
        }
    }
}

/// A session secret too short to sign with.
public struct SessionSecretError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The secret's length in bytes.
    public var length: Int

    public init(length: Int) { self.length = length }

    public var description: String {
        "session secret is \(length) bytes; at least \(SessionSigner.minimumSecretLength) are needed"
    }
}
