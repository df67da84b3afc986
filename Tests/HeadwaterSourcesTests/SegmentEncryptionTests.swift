import Foundation
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
@testable import HeadwaterSources
import Logging
import NIOCore
import Testing

/// ``SegmentEncryption``: a snapshot's fetchable segments replaced by encrypted copies, written
/// once each into the channel's directory, removed once no snapshot lists them, and never the clear
/// bytes of an encrypted channel. Checked against `openssl enc -d`, an implementation independent
/// of Headwater's.
@Suite("Segment encryption")
struct SegmentEncryptionTests {
    static let keys = try! ContentKeys(secretText: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
    static let keying = ChannelKeying(channel: "enc", keys: keys, rotateEvery: 2, access: .open)

    /// A clear directory of segment files and the encrypted directory, removed at the end.
    final class Scratch {
        let root = NSTemporaryDirectory() + "headwater-segment-encryption-\(UUID().uuidString)"
        var clear: String { root + "/clear" }
        var encrypted: String { root + "/encrypted" }

        init() throws {
            try FileManager.default.createDirectory(atPath: clear, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }

        /// Writes `bytes` as the clear file `name`; its segment file.
        func segment(_ name: String, _ bytes: [UInt8]) throws -> SegmentFile {
            let path = clear + "/" + name
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return SegmentFile(
                path: path, length: Int64(bytes.count), entityTag: "\"clear-\(name)\"", contentType: "video/mp2t",
                lastModified: 1_795_282_560)
        }

        func encryption() throws -> SegmentEncryption {
            try SegmentEncryption(keying: SegmentEncryptionTests.keying, directory: encrypted, logger: Logger(label: "test"))
        }

        /// The names in the encrypted directory.
        var encryptedNames: Set<String> { Set((try? FileManager.default.contentsOfDirectory(atPath: encrypted)) ?? []) }
    }

    static func snapshot(_ segments: [String: [String: SegmentFile]]) -> ChannelSnapshot {
        ChannelSnapshot(name: "enc", state: .live, multivariant: nil, mediaPlaylists: [:], segments: segments, targetDuration: 2)
    }

    /// Distinct bytes per segment and size (sizes around the 16-byte block and the 64 KiB chunk).
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    /// msn → clear bytes, per rendition: v0 5…7, v1 5 and 6.
    static let clearBytes: [String: [UInt64: [UInt8]]] = [
        "v0": [5: bytes(70_000, seed: 1), 6: bytes(16, seed: 2), 7: bytes(1_000, seed: 3)],
        "v1": [5: bytes(65_536, seed: 4), 6: bytes(0, seed: 5)],
    ]

    static func clearSegments(_ scratch: Scratch, msns: ClosedRange<UInt64> = 5...7) throws -> [String: [String: SegmentFile]] {
        var segments: [String: [String: SegmentFile]] = [:]
        for (rendition, files) in clearBytes {
            for (msn, bytes) in files where msns.contains(msn) {
                segments[rendition, default: [:]]["\(msn).ts"] = try scratch.segment("\(rendition)-clear-\(msn).ts", bytes)
            }
        }
        return segments
    }

    @Test("each encrypted file decrypts, with the served key of its index and the IV of its msn, to the clear file")
    func encryptedFilesDecryptToTheClearFiles() throws {
        let scratch = try Scratch()
        let encryption = try scratch.encryption()
        let clear = try Self.clearSegments(scratch)
        let encrypted = encryption.encrypt(Self.snapshot(clear))
        #expect(encrypted.keying?.channel == "enc")
        #expect(encrypted.keyIndexes == 2...3, "msn 5, 6, 7 under rotate_every 2")
        for (rendition, files) in clear {
            let served = try #require(encrypted.segments[rendition])
            #expect(Set(served.keys) == Set(files.keys), "\(rendition): every readable segment stays fetchable")
            for (name, clearFile) in files {
                let file = try #require(served[name])
                let msn = try #require(UInt64(name.dropLast(3)))
                let clearBytes = try #require(Self.clearBytes[rendition]?[msn])
                #expect(file.path != clearFile.path && file.path.hasPrefix(scratch.encrypted + "/"), "\(rendition)/\(name)")
                let onDisk = Array(try Data(contentsOf: URL(fileURLWithPath: file.path)))
                #expect(onDisk.count == SegmentEncryptor.encryptedSize(clearSize: clearBytes.count))
                #expect(file.length == Int64(onDisk.count), "the served length is the encrypted file's")
                #expect(file.entityTag != clearFile.entityTag && file.contentType == clearFile.contentType)
                #expect(clearBytes.isEmpty || Array(onDisk.prefix(clearBytes.count)) != clearBytes, "not the clear bytes")
                let key = Self.keys.key(channel: "enc", index: msn / 2)
                let iv = Self.keys.iv(channel: "enc", rendition: rendition, mediaSequence: msn)
                let decrypted = try opensslDecrypt(onDisk, key: key.bytes, iv: iv.bytes, scratch: scratch)
                #expect(decrypted == clearBytes, "\(rendition)/\(name) decrypts to its clear bytes")
            }
        }
        // Another rendition's IV, or the neighbouring key, does not decrypt it to the same bytes.
        let v0five = Array(try Data(contentsOf: URL(fileURLWithPath: try #require(encrypted.segments["v0"]?["5.ts"]).path)))
        let wrongIV = try? opensslDecrypt(
            v0five, key: Self.keys.key(channel: "enc", index: 2).bytes,
            iv: Self.keys.iv(channel: "enc", rendition: "v1", mediaSequence: 5).bytes, scratch: scratch)
        #expect(wrongIV != Self.clearBytes["v0"]?[5])
    }

    @Test("a second encryption of the same snapshot writes nothing; a new segment adds one file")
    func encryptsOnce() throws {
        let scratch = try Scratch()
        let encryption = try scratch.encryption()
        let clear = try Self.clearSegments(scratch)
        let first = encryption.encrypt(Self.snapshot(clear))
        let names = scratch.encryptedNames
        #expect(names.count == 5, "\(names)")
        let identities = try Self.identities(first)
        let again = encryption.encrypt(Self.snapshot(clear))
        #expect(scratch.encryptedNames == names, "no file added, none left behind")
        #expect(try Self.identities(again) == identities, "the same files, not written again")
        #expect(again.segments == first.segments && again.keyIndexes == first.keyIndexes)

        var more = clear
        more["v1"]?["7.ts"] = try scratch.segment("v1-clear-7.ts", Self.bytes(3_000, seed: 9))
        let third = encryption.encrypt(Self.snapshot(more))
        #expect(scratch.encryptedNames.subtracting(names).count == 1, "one new file: \(scratch.encryptedNames)")
        let kept = try Self.identities(third).filter { first.segments[$0.key.rendition]?[$0.key.name] != nil }
        #expect(kept == identities, "the earlier files untouched")
    }

    @Test("a segment no snapshot lists any more has its encrypted file removed")
    func droppedSegmentsAreRemoved() throws {
        let scratch = try Scratch()
        let encryption = try scratch.encryption()
        let clear = try Self.clearSegments(scratch)
        let first = encryption.encrypt(Self.snapshot(clear))
        let dropped = try #require(first.segments["v0"]?["5.ts"]?.path)
        let droppedToo = try #require(first.segments["v1"]?["5.ts"]?.path)
        var later = clear
        later["v0"]?["5.ts"] = nil
        later["v1"]?["5.ts"] = nil
        let second = encryption.encrypt(Self.snapshot(later))
        #expect(!FileManager.default.fileExists(atPath: dropped), "v0/5.ts removed")
        #expect(!FileManager.default.fileExists(atPath: droppedToo), "v1/5.ts removed")
        #expect(second.segments["v0"]?["5.ts"] == nil)
        #expect(scratch.encryptedNames.count == 3, "\(scratch.encryptedNames)")
        for files in second.segments.values {
            for file in files.values { #expect(FileManager.default.fileExists(atPath: file.path), "\(file.path)") }
        }
        #expect(second.keyIndexes == 3...3, "msn 6 and 7 only")
        let none = encryption.encrypt(Self.snapshot([:]))
        #expect(scratch.encryptedNames.isEmpty && none.keyIndexes == nil)
    }

    @Test("a clear file that cannot be read makes its segment unfetchable, never served clear; it is encrypted once readable")
    func unreadableSegmentIsAbsent() throws {
        let scratch = try Scratch()
        let encryption = try scratch.encryption()
        var segments = try Self.clearSegments(scratch)
        let missingPath = scratch.clear + "/v0-clear-9.ts"
        segments["v0"]?["9.ts"] = SegmentFile(
            path: missingPath, length: 1_000, entityTag: "\"gone\"", contentType: "video/mp2t", lastModified: 0)
        segments["v0"]?["8.ts"] = SegmentFile(
            path: scratch.clear, length: 4_096, entityTag: "\"dir\"", contentType: "video/mp2t", lastModified: 0)
        let encrypted = encryption.encrypt(Self.snapshot(segments))
        let served = try #require(encrypted.segments["v0"])
        #expect(served["9.ts"] == nil, "a missing file: not fetchable")
        #expect(served["8.ts"] == nil, "a file that cannot be read: not fetchable")
        #expect(Set(served.keys) == ["5.ts", "6.ts", "7.ts"])
        for files in encrypted.segments.values {
            for file in files.values {
                #expect(file.path.hasPrefix(scratch.encrypted + "/"), "never a clear path: \(file.path)")
            }
        }
        #expect(encrypted.keyIndexes == 2...3, "key 4 (msn 8, 9) serves nothing fetchable")
        #expect(scratch.encryptedNames.count == 5, "no partial or temporary file left: \(scratch.encryptedNames)")

        // Once the file is there, the next snapshot encrypts it.
        let bytes = Self.bytes(500, seed: 11)
        try Data(bytes).write(to: URL(fileURLWithPath: missingPath))
        segments["v0"]?["9.ts"]?.length = 500
        let later = encryption.encrypt(Self.snapshot(segments))
        let file = try #require(later.segments["v0"]?["9.ts"])
        let decrypted = try opensslDecrypt(
            Array(try Data(contentsOf: URL(fileURLWithPath: file.path))), key: Self.keys.key(channel: "enc", index: 4).bytes,
            iv: Self.keys.iv(channel: "enc", rendition: "v0", mediaSequence: 9).bytes, scratch: scratch)
        #expect(decrypted == bytes)
        #expect(later.keyIndexes == 2...4)
    }

    @Test(
        "the media sequence number of a served name",
        arguments: [
            ("123.ts", UInt64?.some(123)), ("k3x-123.ts", 123), ("k3x9-0.m4s", 0), ("k3x-b4.ts", nil), ("init.mp4", nil),
            ("abc.ts", nil), ("k3x-123-x.ts", nil), ("18446744073709551615.ts", UInt64.max),
        ])
    func mediaSequenceOfServedName(name: String, expected: UInt64?) {
        #expect(SegmentEncryption.mediaSequence(ofServedName: name) == expected, "\(name)")
    }

    @Test("a byte-range segment (`{run}-b{n}.ts`) cannot be encrypted whole, so it is not served")
    func byteRangeSegmentsAreNotServed() throws {
        let scratch = try Scratch()
        let encryption = try scratch.encryption()
        let upload = try scratch.segment("upload.ts", Self.bytes(2_000, seed: 7))
        let named = try scratch.segment("named.ts", Self.bytes(2_000, seed: 8))
        let encrypted = encryption.encrypt(Self.snapshot(["v0": ["k3x-b4.ts": upload, "k3x-12.ts": named]]))
        #expect(encrypted.segments["v0"]?["k3x-b4.ts"] == nil)
        #expect(encrypted.segments["v0"]?["k3x-12.ts"] != nil)
        #expect(encrypted.keyIndexes == 6...6)
    }

    @Test("a file without a media sequence number (an fMP4 init section) is not served: never clear on an encrypted channel (ingest refuses fMP4 there)")
    func initializationSectionIsNotServedClear() throws {
        let scratch = try Scratch()
        let encryption = try scratch.encryption()
        let initSection = try scratch.segment("init.mp4", Self.bytes(700, seed: 12))
        let fragment = try scratch.segment("frag.m4s", Self.bytes(5_000, seed: 13))
        let encrypted = encryption.encrypt(Self.snapshot(["v0": ["k3x-init0.mp4": initSection, "k3x-12.m4s": fragment]]))
        #expect(encrypted.segments["v0"]?["k3x-12.m4s"] != nil)
        #expect(encrypted.segments["v0"]?["k3x-init0.mp4"] == nil)
    }

    @Test("files an earlier run left in the directory are removed at start")
    func earlierRunIsCleared() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.encrypted, withIntermediateDirectories: true)
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: scratch.encrypted + "/v0-5.ts"))
        _ = try scratch.encryption()
        #expect(scratch.encryptedNames.isEmpty)
    }

    /// Each served file's inode and modification time, by rendition and name: a file written
    /// again (a new temporary renamed over it) gets a new inode.
    struct FileKey: Hashable {
        var rendition: String
        var name: String
    }

    static func identities(_ snapshot: ChannelSnapshot) throws -> [FileKey: String] {
        var identities: [FileKey: String] = [:]
        for (rendition, files) in snapshot.segments {
            for (name, file) in files {
                let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
                let inode = attributes[.systemFileNumber].map { "\($0)" } ?? "?"
                let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
                identities[FileKey(rendition: rendition, name: name)] = "\(file.path) \(inode) \(modified)"
            }
        }
        return identities
    }
}

/// The encrypted loop channel: `EXT-X-KEY` with an explicit IV on every segment, the key of
/// `msn / rotate_every`, no I-frame playlists, and playlists the validator finds nothing in.
@Suite("Encrypted loop channel")
struct EncryptedLoopChannelTests {
    static let package = try! LoopPackage.load(multivariantPath: demoPackagePath)
    static let keys = SegmentEncryptionTests.keys
    static let rotateEvery: UInt64 = 3
    static let start: Int64 = 1_795_282_560_000_000

    @Test("every segment of every media playlist has one AES-128 EXT-X-KEY: the key of msn / rotate_every and the IV of its msn")
    func everySegmentHasItsKey() throws {
        let scratch = try SegmentEncryptionTests.Scratch()
        let keying = ChannelKeying(channel: "demo", keys: Self.keys, rotateEvery: Self.rotateEvery, access: .open)
        let channel = LoopChannel(name: "demo", package: Self.package, windowSeconds: 12, startedAt: 0, keying: keying)
        let registry = ChannelRegistry()
        let clock = ManualWallClock(Self.start)
        let publisher = try LoopChannelPublisher(
            channel: channel, registry: registry, clock: clock, logger: Logger(label: "test"), metrics: OriginMetrics(),
            stateDirectory: scratch.root)
        var previous: [String: MediaPlaylist] = [:]
        var indexes: Set<UInt64> = []
        var checkedCiphertext = false
        // 40 s in 1 s steps: key changes every 6 s, and a loop point of the package.
        for _ in 0..<40 {
            publisher.publishNow()
            let snapshot = try #require(registry.snapshot(of: "demo"))
            let keyIndexes = try #require(snapshot.keyIndexes, "an encrypted snapshot says which keys it serves")
            #expect(snapshot.keying?.channel == "demo")
            #expect(snapshot.iFramePlaylists.isEmpty, "no I-frame playlists for an encrypted channel")
            let multivariantText = String(buffer: try #require(snapshot.multivariant).body)
            #expect(!multivariantText.contains("EXT-X-I-FRAME-STREAM-INF"))
            let multivariant = try PlaylistParser().parseMultivariant(Array(multivariantText.utf8))
            #expect(multivariant.iFrameVariants.isEmpty)
            #expect(PlaylistValidator.validate(multivariant).isEmpty, "\(PlaylistValidator.validate(multivariant))")
            for rendition in Self.package.renditions {
                let body = try #require(snapshot.mediaPlaylists[rendition.name]).body
                let playlist = try PlaylistParser().parseMedia(Array(buffer: body))
                let issues = PlaylistValidator.validate(playlist)
                #expect(issues.isEmpty, "\(rendition.name) at \(clock.now()): \(issues)")
                if let before = previous[rendition.name] {
                    let errors = LiveUpdateChecker.check(previous: before, next: playlist).filter { $0.severity == .error }
                    #expect(errors.isEmpty, "\(rendition.name): \(errors)")
                }
                previous[rendition.name] = playlist
                let content = snapshot.content?.media[rendition.name]
                #expect(content?.segments == playlist.segments, "stitching sees the segments served, keys and all")
                for (index, segment) in playlist.segments.enumerated() {
                    let msn = playlist.mediaSequenceNumber(at: index)
                    let context = "\(rendition.name) msn \(msn)"
                    try #require(segment.tags.keys.count == 1, "\(context): \(segment.tags.keys)")
                    let key = segment.tags.keys[0]
                    #expect(key.method == "AES-128", "\(context)")
                    #expect(key.iv == Self.keys.iv(channel: "demo", rendition: rendition.name, mediaSequence: msn).bytes, "\(context)")
                    #expect(key.uri == "/keys/demo/\(msn / Self.rotateEvery).key", "\(context): \(key.uri ?? "-")")
                    #expect(keyIndexes.contains(msn / Self.rotateEvery), "\(context): its key is served (\(keyIndexes))")
                    indexes.insert(msn / Self.rotateEvery)
                    let file = try #require(snapshot.segments[rendition.name]?["\(msn).ts"], "\(context) is fetchable")
                    #expect(file.path.hasPrefix(scratch.root + "/"), "\(context): served from the encrypted copies")
                }
                if !checkedCiphertext, let last = playlist.segments.indices.last {
                    let msn = playlist.mediaSequenceNumber(at: last)
                    let served = try #require(snapshot.segments[rendition.name]?["\(msn).ts"])
                    let clearPath = rendition.segments[channel.timeline.fileIndex(of: msn)].file.path
                    let decrypted = try opensslDecrypt(
                        Array(try Data(contentsOf: URL(fileURLWithPath: served.path))),
                        key: Self.keys.key(channel: "demo", index: msn / Self.rotateEvery).bytes,
                        iv: try #require(playlist.segments[last].tags.keys.first?.iv), scratch: scratch)
                    #expect(decrypted == Array(try Data(contentsOf: URL(fileURLWithPath: clearPath))), "\(rendition.name) \(msn)")
                }
            }
            checkedCiphertext = true
            clock.advance(seconds: 1)
        }
        #expect(indexes.count >= 5, "keys rotated: \(indexes.sorted())")
    }

    @Test("the same channel clear has I-frame playlists (what encryption takes away)")
    func clearChannelHasIFrames() throws {
        let channel = LoopChannel(name: "demo", package: Self.package, windowSeconds: 12, startedAt: 0)
        let snapshot = channel.snapshot(at: Self.start)
        #expect(!snapshot.iFramePlaylists.isEmpty)
        #expect(String(buffer: try #require(snapshot.multivariant).body).contains("EXT-X-I-FRAME-STREAM-INF"))
        #expect(snapshot.keying == nil && snapshot.keyIndexes == nil)
        let playlist = try PlaylistParser().parseMedia(Array(buffer: try #require(snapshot.mediaPlaylists["v1"]).body))
        #expect(playlist.segments.allSatisfy { $0.tags.keys.isEmpty })
    }
}

/// `bytes` decrypted by `openssl enc -d -aes-128-cbc`, which checks and removes the PKCS#7 padding.
func opensslDecrypt(_ bytes: [UInt8], key: [UInt8], iv: [UInt8], scratch: SegmentEncryptionTests.Scratch) throws -> [UInt8] {
    let name = UUID().uuidString
    let input = scratch.root + "/\(name).enc"
    let output = scratch.root + "/\(name).dec"
    try Data(bytes).write(to: URL(fileURLWithPath: input))
    defer {
        try? FileManager.default.removeItem(atPath: input)
        try? FileManager.default.removeItem(atPath: output)
    }
    let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["openssl", "enc", "-d", "-aes-128-cbc", "-K", hex(key), "-iv", hex(iv), "-in", input, "-out", output]
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    struct OpenSSLFailed: Error, CustomStringConvertible {
        var status: Int32
        var description: String { "openssl enc -d exited \(status) (wrong key or IV, or openssl missing)" }
    }
    guard process.terminationStatus == 0 else { throw OpenSSLFailed(status: process.terminationStatus) }
    return Array(try Data(contentsOf: URL(fileURLWithPath: output)))
}
