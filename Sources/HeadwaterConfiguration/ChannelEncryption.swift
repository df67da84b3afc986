import Foundation
import HeadwaterHLS
import Yams

/// A channel's `encryption` block: Headwater encrypts every segment of the channel once, as it
/// arrives (whole-segment AES-128-CBC with PKCS#7 and an explicit IV), and names the key by URL in
/// `EXT-X-KEY` (`/keys/{channel}/{index}.key`). Keys are not stored anywhere: each is derived with
/// HKDF-SHA256 from the secret in `server.key_secret_env`, the channel name and the key index, so
/// every node with the same secret serves the same keys and ciphertext, and a restart changes nothing.
/// Every key is documented in `Config/README.md` ("Encryption").
public struct ChannelEncryption: Sendable, Hashable {
    /// `encryption.method` (required): the cipher. Only `AES-128` (RFC 8216bis §4.4.4.4,
    /// whole-segment AES-128-CBC), the one method every HLS player decrypts for MPEG-TS and fMP4
    /// alike; SAMPLE-AES would need the media rewritten per codec.
    public enum Method: String, Sendable, Hashable, CaseIterable {
        case aes128 = "AES-128"
    }

    /// `encryption.ads`: what stitched ads (and the slate that fills breaks and stalls) are.
    public enum AdEncryption: String, Sendable, Hashable, CaseIterable {
        /// Ads stay clear, announced with `EXT-X-KEY:METHOD=NONE`: one creative file serves every
        /// channel and every CDN cache, and ad servers' creatives need no re-encryption.
        case clear
        /// Ads are encrypted with the channel's key, for contracts that want no clear segment in
        /// the channel at all (each creative is then encrypted per channel and key).
        case encrypted
    }

    /// `encryption.key_access`: who `GET /keys/{channel}/{index}.key` answers on `/live` (on
    /// `/ssai` the key URI always carries the viewer's session token, whatever this says).
    public enum KeyAccess: String, Sendable, Hashable, CaseIterable {
        /// Any request gets the key: for tests and demos, or when a CDN in front enforces access.
        case open
        /// Only a request with a signed, unexpired key token for this channel (`?token=…` or
        /// `Authorization: Bearer …`, made by `headwater key-token` or an entitlement service that
        /// holds the key-token secret); anything else gets 403 with a one-line reason.
        case token
    }

    /// `encryption.method` (`AES-128`, required).
    public var method: Method
    /// `encryption.rotate_every` (integer segments ≥ 0, default 0): a new key every this many media
    /// sequence numbers (key index = msn / rotate_every), so one leaked key opens only that many
    /// segments; 0 is one key for the channel's whole life (index 0), which players fetch once.
    public var rotateEvery: Int
    /// `encryption.ads` (`clear` or `encrypted`, default `clear`).
    public var ads: AdEncryption
    /// `encryption.key_access` (`open` or `token`, default `open`).
    public var keyAccess: KeyAccess

    public init(method: Method = .aes128, rotateEvery: Int = 0, ads: AdEncryption = .clear, keyAccess: KeyAccess = .open) {
        self.method = method
        self.rotateEvery = rotateEvery
        self.ads = ads
        self.keyAccess = keyAccess
    }

    /// The largest `rotate_every` (segments per key) accepted: about eleven days of 1 s segments.
    public static let maximumRotateEvery = 1_000_000
}

extension HeadwaterConfiguration {
    /// `channels.<name>.encryption` at `path`; `nil` (with the problems recorded) when it is not usable.
    static func parseEncryption(_ node: Node, path: String, reader: inout YAMLReader) -> ChannelEncryption? {
        let entries = reader.mapping(node, path, allowed: ["method", "rotate_every", "ads", "key_access"])
        if case .mapping = node {} else { return nil }
        var encryption = ChannelEncryption()
        var valid = true
        var sawMethod = false
        for (key, value, _) in entries {
            let keyPath = "\(path).\(key)"
            switch key {
            case "method":
                sawMethod = true
                guard let text = reader.string(value, keyPath) else {
                    valid = false
                    continue
                }
                if let method = ChannelEncryption.Method(rawValue: text) {
                    encryption.method = method
                } else {
                    reader.fail(value, keyPath, "must be AES-128 (the only method supported), got \"\(text)\"")
                    valid = false
                }
            case "rotate_every":
                if let segments = reader.integer(value, keyPath, in: 0...ChannelEncryption.maximumRotateEvery) {
                    encryption.rotateEvery = segments
                } else {
                    valid = false
                }
            case "ads":
                guard let text = reader.string(value, keyPath) else {
                    valid = false
                    continue
                }
                if text == ChannelEncryption.AdEncryption.encrypted.rawValue {
                    // Stitched ads are the shared /ads/… files, one for every channel and cache;
                    // encrypting them per channel key is not built.
                    reader.fail(value, keyPath, "encrypted ads are not supported yet; ads and slate are served clear, announced with EXT-X-KEY:METHOD=NONE (use clear)")
                    valid = false
                } else if let ads = ChannelEncryption.AdEncryption(rawValue: text) {
                    encryption.ads = ads
                } else {
                    reader.fail(value, keyPath, "must be clear, got \"\(text)\"")
                    valid = false
                }
            case "key_access":
                guard let text = reader.string(value, keyPath) else {
                    valid = false
                    continue
                }
                if let access = ChannelEncryption.KeyAccess(rawValue: text) {
                    encryption.keyAccess = access
                } else {
                    reader.fail(value, keyPath, "must be open or token, got \"\(text)\"")
                    valid = false
                }
            default:
                break
            }
        }
        if !sawMethod {
            reader.fail(node, "\(path).method", "required: AES-128 (the only method supported)")
            valid = false
        }
        return valid ? encryption : nil
    }

    /// The problem with encrypting a channel fed by `source`, if any, as a message for the
    /// `encryption` key: Headwater can only encrypt segments it serves itself, and encrypting
    /// segments that are already encrypted would give players ciphertext under two keys.
    ///
    /// A loop package is checked by reading its playlists only (no segment is read): a media
    /// playlist with `EXT-X-KEY` other than `METHOD=NONE` is already encrypted. A package that
    /// cannot be read or parsed is not this check's problem; loading the package reports it.
    static func encryptionConflict(for source: Channel.Source) -> String? {
        switch source {
        case .loop(let package, _):
            guard let (file, method) = firstEncryptedPlaylist(inPackage: package) else { return nil }
            return "the loop package \(package) is already encrypted (EXT-X-KEY METHOD=\(method) in \(file)); remove the encryption block or use a clear package"
        case .pull(let pull) where pull.mode == .reference:
            return "a pull source in reference mode lists the upstream's segment URLs, which Headwater cannot encrypt; use mode: fetch, or remove the encryption block"
        case .push, .directory, .pull:
            return nil
        }
    }

    /// The first media playlist of the loop package at `multivariantPath` (as the package names it)
    /// with a key other than `METHOD=NONE`, and that method; `nil` when every one is clear or the
    /// package cannot be read. A package whose top playlist is itself a media playlist is checked too.
    static func firstEncryptedPlaylist(inPackage multivariantPath: String) -> (file: String, method: String)? {
        let parser = PlaylistParser()
        func encryptedMethod(_ playlist: MediaPlaylist) -> String? {
            playlist.segments.lazy.flatMap(\.tags.keys).first { $0.method != "NONE" }?.method
        }
        guard let data = FileManager.default.contents(atPath: multivariantPath),
            let top = try? parser.parse([UInt8](data))
        else { return nil }
        switch top {
        case .media(let media):
            return encryptedMethod(media).map { (multivariantPath, $0) }
        case .multivariant(let master):
            let parent = PathNormalization.directory(of: multivariantPath)
            let directory = parent.isEmpty ? "." : parent
            var seen = Set<String>()
            for uri in master.variants.map(\.uri) + master.renditions.compactMap(\.uri) where seen.insert(uri).inserted {
                guard !uri.contains("://"), !uri.hasPrefix("/"),
                    let data = FileManager.default.contents(atPath: directory + "/" + uri),
                    case .media(let media)? = try? parser.parse([UInt8](data))
                else { continue }
                if let method = encryptedMethod(media) { return (uri, method) }
            }
            return nil
        }
    }
}
