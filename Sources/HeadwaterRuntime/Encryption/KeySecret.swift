import HeadwaterHLS

/// The text form of the secret content keys are derived from (`HEADWATER_KEY_SECRET`, the same on
/// every node): exactly 32 random bytes, written either as
///
/// - 64 hex digits, either case (`openssl rand -hex 32`), or
/// - base64 of the 32 bytes: 44 characters ending in one `=` (`openssl rand -base64 32`), or the
///   43 without it; the URL-safe alphabet (`-` `_` for `+` `/`) is read too.
///
/// Leading and trailing spaces, tabs and line breaks are ignored (a secret read from a file often
/// ends in a newline); nothing else is.
///
/// Why exactly 32 bytes: it is SHA-256's size, all the strength HKDF-SHA256 can extract, so the
/// secret is never the weak link of the keys below it; and with one length the two forms never
/// overlap (64 characters is hex, 43 or 44 is base64), so no text can be read two ways by two
/// nodes. A shorter secret is refused rather than stretched: stretching adds no entropy.
enum KeySecret {
    static let byteCount = 32

    /// The 32 bytes `text` encodes; the error says what is wrong without repeating any of it.
    static func decode(_ text: String) throws(KeySecretError) -> [UInt8] {
        let trimmed = Self.trimmed(Array(text.utf8))
        switch trimmed.count {
        case 0:
            throw .empty
        case 2 * byteCount:
            guard let bytes = hexDecoded(trimmed) else { throw .notHex }
            return bytes
        case 43, 44:
            guard let bytes = base64Decoded(trimmed), bytes.count == byteCount else { throw .notBase64 }
            return bytes
        default:
            throw .wrongLength(characters: trimmed.count)
        }
    }

    private static func trimmed(_ text: [UInt8]) -> ArraySlice<UInt8> {
        let isSpace = { (c: UInt8) in c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }
        guard let first = text.firstIndex(where: { !isSpace($0) }),
            let last = text.lastIndex(where: { !isSpace($0) })
        else { return [] }
        return text[first...last]
    }

    /// 64 hex digits, through the project's one hex reader (``HexSequence``, HLS's `0x…` form).
    private static func hexDecoded(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        HexSequence.decode("0x" + String(decoding: text, as: UTF8.self))
    }

    /// Standard or URL-safe base64, one trailing `=` at most (32 bytes need exactly one), decoded
    /// canonically by ``Base64URL``.
    private static func base64Decoded(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var body = text
        if body.count == 44 {
            guard body.last == UInt8(ascii: "=") else { return nil }
            body.removeLast()
        }
        let urlSafe = body.map { c -> UInt8 in
            c == UInt8(ascii: "+") ? UInt8(ascii: "-") : c == UInt8(ascii: "/") ? UInt8(ascii: "_") : c
        }
        return Base64URL.decode(urlSafe)
    }
}

/// A secret that cannot key anything. ``description`` is one line that starts with what was read
/// ("key secret is …"), so a configuration loader can write it as `file:line: key.path: message`;
/// it never contains any character of the secret.
public struct KeySecretError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }

    private static let expected = "expected 32 random bytes as 64 hex digits or 44 base64 characters (openssl rand -hex 32)"

    static let empty = KeySecretError("key secret is empty; \(expected)")
    static let notHex = KeySecretError("key secret is 64 characters but not all hex digits; \(expected)")
    static let notBase64 = KeySecretError("key secret is not valid base64 of 32 bytes; \(expected)")
    static func wrongLength(characters: Int) -> KeySecretError {
        KeySecretError("key secret is \(characters) characters; \(expected)")
    }
    static func tokenSecretTooShort(bytes: Int) -> KeySecretError {
        KeySecretError(
            "key token secret is \(bytes) bytes; at least \(KeyTokenSigner.minimumSecretLength) are needed (openssl rand -hex 32)")
    }
}
