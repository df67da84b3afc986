import Foundation
import HeadwaterLiveWindow
import HeadwaterRuntime
import Logging
import NIOConcurrencyHelpers

/// The encrypted copies of an encrypted channel's segments (loop, push, directory, pull alike).
/// A segment's key and IV follow from its media sequence number (``ChannelKeying``), which is known
/// once the channel lists it, so every segment is encrypted once, when it first appears in a
/// published snapshot, into the state directory, and removed once no snapshot lists it. The
/// snapshot decides what is fetchable; this replaces each clear file by its encrypted copy, and a
/// segment that cannot be encrypted is not fetchable at all (clear bytes are never served for an
/// encrypted channel).
///
/// The media sequence number is read from the served name, which every source gives it:
/// `{msn}.ts` (loop) or `{run}-{msn}.{ext}` (push, directory, pull). A segment listed as a byte
/// range of a larger upload (`{run}-b{n}.ts`) cannot be encrypted whole, so it is not served.
public final class SegmentEncryption: Sendable {
    let keying: ChannelKeying
    let directory: String
    private let logger: Logger
    /// Encrypted files by `rendition/name`.
    private let files = NIOLockedValueBox<[String: SegmentFile]>([:])

    init(keying: ChannelKeying, directory: String, logger: Logger) throws {
        self.keying = keying
        self.directory = directory
        self.logger = logger
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // Files of an earlier run: written again when listed (same key and IV, so the same bytes).
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            try? FileManager.default.removeItem(atPath: directory + "/" + name)
        }
    }

    /// `snapshot` with every fetchable segment replaced by its encrypted copy, and the key indexes
    /// the fetchable segments use.
    func encrypt(_ snapshot: ChannelSnapshot) -> ChannelSnapshot {
        var snapshot = snapshot
        let known = files.withLockedValue { $0 }
        var kept: [String: SegmentFile] = [:]
        var lowest = UInt64.max
        var highest = UInt64.min
        for (rendition, clearFiles) in snapshot.segments {
            var encrypted: [String: SegmentFile] = [:]
            for (name, clear) in clearFiles {
                guard let msn = Self.mediaSequence(ofServedName: name) else { continue }
                let id = "\(rendition)/\(name)"
                guard let file = known[id] ?? encryptFile(clear, rendition: rendition, name: name, msn: msn) else { continue }
                kept[id] = file
                encrypted[name] = file
                lowest = min(lowest, keying.keyIndex(of: msn))
                highest = max(highest, keying.keyIndex(of: msn))
            }
            snapshot.segments[rendition] = encrypted
        }
        files.withLockedValue { $0 = kept }
        for (id, file) in known where kept[id] == nil { try? FileManager.default.removeItem(atPath: file.path) }
        snapshot.keying = keying
        snapshot.keyIndexes = lowest <= highest ? lowest...highest : nil
        return snapshot
    }

    /// `123` of `123.ts` and of `k3x9-123.ts`; `nil` for other names.
    static func mediaSequence(ofServedName name: String) -> UInt64? {
        let stem = name.prefix { $0 != "." }
        return UInt64(stem.split(separator: "-").last ?? stem)
    }

    private func encryptFile(_ clear: SegmentFile, rendition: String, name: String, msn: UInt64) -> SegmentFile? {
        let destination = "\(directory)/\(rendition)-\(name)"
        let key = keying.keys.key(channel: keying.channel, index: keying.keyIndex(of: msn))
        let iv = keying.keys.iv(channel: keying.channel, rendition: rendition, mediaSequence: msn)
        do {
            let length = try SegmentEncryptor.encryptFile(at: clear.path, to: destination, key: key, iv: iv)
            var identity = FNV1a64()
            identity.update("\(clear.entityTag) aes-128 \(keying.channel) \(rendition) \(msn)".utf8)
            return SegmentFile(
                path: destination, length: Int64(length), entityTag: "\"\(identity.hexDigest)\"",
                contentType: clear.contentType, lastModified: clear.lastModified)
        } catch {
            logger.error(
                "cannot encrypt segment; it is not served",
                metadata: ["hls.rendition": "\(rendition)", "hls.segment": "\(name)", "error.message": "\(error)"])
            return nil
        }
    }
}
