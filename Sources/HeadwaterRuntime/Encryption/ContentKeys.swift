import Crypto
import HeadwaterHLS

/// The AES-128 keys and segment IVs of encrypted channels (`METHOD=AES-128`, RFC 8216 §4.3.2.4),
/// derived, never stored, from one secret (``KeySecret``): every node with the same secret serves
/// the same key for a key URI and writes the same ciphertext for a segment, and a restart changes
/// nothing, so there is no key store to replicate, back up or lose.
///
/// Derivation, RFC 5869 HKDF with SHA-256 (`‖` concatenates; `u32be`/`u64be` are unsigned
/// big-endian integers of 4 and 8 bytes; strings are UTF-8, prefixed with their byte count):
///
/// ```
/// PRK = HKDF-Extract(salt: none, i.e. 32 zero bytes; IKM: the 32 secret bytes)
///
/// key of channel c, key index i:
///   info = "headwater content key v1" ‖ 0x00 ‖ u32be(len c) ‖ c ‖ u64be(i)
///   key  = HKDF-Expand(PRK, info, 16)
///
/// IV of the segment with media sequence number n in rendition r of channel c:
///   info = "headwater segment iv v1" ‖ 0x00 ‖ u32be(len c) ‖ c ‖ u32be(len r) ‖ r ‖ u64be(n)
///   iv   = HKDF-Expand(PRK, info, 16)
/// ```
///
/// The labels keep keys and IVs apart (no IV is ever a key) and the `v1` lets a later scheme
/// coexist. Every field has a fixed size or a length prefix, so no two inputs share an `info`.
///
/// Why the IV is derived rather than the media sequence number RFC 8216 §5.2 implies when a
/// playlist gives none: all renditions of a channel share its key and its numbering, so sequence
/// numbers would repeat one IV across renditions under one key, and CBC under a repeated key and IV
/// shows where two plaintexts begin alike (every rendition's segment opens with similar PAT/PMT
/// packets). The derived IV is distinct per (channel, rendition, segment) and unpredictable without
/// the secret. The playlist must therefore write it, as `EXT-X-KEY`'s `IV` attribute
/// (``SegmentIV/attributeValue``).
public struct ContentKeys: Sendable {
    /// The environment variable the secret is read from (its form: ``KeySecret``).
    public static let environmentVariable = "HEADWATER_KEY_SECRET"

    static let keyLabel = Array("headwater content key v1".utf8) + [0]
    static let ivLabel = Array("headwater segment iv v1".utf8) + [0]

    /// HKDF's pseudorandom key: extracted once, expanded for each key and IV.
    private let prk: SymmetricKey

    /// Keys from the secret's text form (``KeySecret``: 64 hex digits or base64 of 32 bytes).
    public init(secretText: String) throws(KeySecretError) {
        self.init(validSecret: try KeySecret.decode(secretText))
    }

    /// Keys from the secret's 32 bytes.
    public init(secret: [UInt8]) throws(KeySecretError) {
        guard secret.count == KeySecret.byteCount else {
            throw KeySecretError("key secret is \(secret.count) bytes; expected exactly \(KeySecret.byteCount)")
        }
        self.init(validSecret: secret)
    }

    private init(validSecret: [UInt8]) {
        let extracted = HKDF<SHA256>.extract(inputKeyMaterial: SymmetricKey(data: validSecret), salt: nil as [UInt8]?)
        self.prk = SymmetricKey(data: extracted)
    }

    /// The key of `channel`'s key index `index` (served at `/keys/{channel}/{index}.key`).
    public func key(channel: String, index: UInt64) -> ContentKey {
        var info = Self.keyLabel
        Self.append(channel, to: &info)
        Self.append(index, to: &info)
        return ContentKey(HKDF<SHA256>.expand(pseudoRandomKey: prk, info: info, outputByteCount: 16))
    }

    /// The IV of segment `mediaSequence` of `rendition` of `channel`.
    public func iv(channel: String, rendition: String, mediaSequence: UInt64) -> SegmentIV {
        var info = Self.ivLabel
        Self.append(channel, to: &info)
        Self.append(rendition, to: &info)
        Self.append(mediaSequence, to: &info)
        let derived = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: info, outputByteCount: 16)
        return SegmentIV(bytes: derived.withUnsafeBytes { Array($0) })
    }

    /// The key index of segment `mediaSequence` when the key changes every `rotateEvery` segments
    /// (`rotate_every`; 0 keeps key 0 forever): `mediaSequence / rotateEvery`.
    ///
    /// Rotation follows the media sequence number, not the time a node started or the segments it
    /// has seen, so every node (and a restarted one) puts each segment under the same key.
    public static func keyIndex(mediaSequence: UInt64, rotateEvery: UInt64) -> UInt64 {
        rotateEvery == 0 ? 0 : mediaSequence / rotateEvery
    }

    private static func append(_ string: String, to info: inout [UInt8]) {
        let bytes = Array(string.utf8)
        append(UInt32(bytes.count), to: &info)
        info += bytes
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to info: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { info += $0 }
    }
}

/// A 16-byte AES-128 content key. Neither its description nor its mirror shows the bytes, so a key
/// interpolated into a log line or error by mistake reveals nothing.
public struct ContentKey: Sendable, CustomStringConvertible, CustomReflectable {
    let symmetricKey: SymmetricKey

    init(_ key: SymmetricKey) { self.symmetricKey = key }

    /// The 16 bytes, for the body of a key response: the only place they belong.
    public var bytes: [UInt8] { symmetricKey.withUnsafeBytes { Array($0) } }

    public var description: String { "ContentKey(redacted)" }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

/// A segment's 16-byte CBC initialization vector. Not secret: the playlist publishes it.
public struct SegmentIV: Sendable, Hashable {
    public let bytes: [UInt8]

    /// The `IV` attribute of `EXT-X-KEY` (RFC 8216 §4.3.2.4): `0x` and 32 upper-case hex digits.
    public var attributeValue: String { HexSequence.encode(bytes) }
}
