import Foundation
@testable import HeadwaterRuntime
import HeadwaterTesting
import Testing

/// The independent implementations the encryption tests check against: `openssl` and `python3`,
/// found on `PATH` (Tests/tools/install-test-clients.sh installs both). A missing one fails the
/// test with a message saying so, never skips it.
enum EncryptionReference {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Standard output of `tool arguments…`.
    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if process.terminationStatus == 127 {
            throw Failure(description: "\(tool) is not installed (Tests/tools/install-test-clients.sh installs it)")
        }
        guard process.terminationStatus == 0 else {
            throw Failure(
                description: "\(tool) \(arguments.prefix(1).joined()) exited \(process.terminationStatus): "
                    + String(decoding: err, as: UTF8.self))
        }
        return String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func python(_ script: String, _ arguments: [String]) throws -> String {
        try run("python3", ["-c", script] + arguments)
    }

    /// RFC 5869 HKDF-SHA256 in Python, with `info` built from ContentKeys' documented layout:
    /// argv = secret hex, label, then fields `s:<string>` (u32be length + UTF-8) or `n:<integer>`
    /// (u64be). Prints the 16 output bytes in hex.
    static let hkdfScript = """
        import hashlib, hmac, sys
        secret = bytes.fromhex(sys.argv[1])
        info = sys.argv[2].encode() + b"\\0"
        for field in sys.argv[3:]:
            kind, value = field.split(":", 1)
            if kind == "s":
                info += len(value.encode()).to_bytes(4, "big") + value.encode()
            else:
                info += int(value).to_bytes(8, "big")
        prk = hmac.new(b"\\0" * 32, secret, hashlib.sha256).digest()   # Extract, salt not provided
        okm, t, i = b"", b"", 1
        while len(okm) < 16:                                           # Expand
            t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
            okm, i = okm + t, i + 1
        print(okm[:16].hex())
        """

    /// `nil` when `a == b`, else their sizes and first differing offset. Large byte arrays are
    /// compared with this, not `==` in `#expect`, whose failure message diffs every byte (minutes).
    static func difference(_ a: [UInt8], _ b: [UInt8]) -> String? {
        guard a != b else { return nil }
        let common = min(a.count, b.count)
        let index = (0..<common).first { a[$0] != b[$0] } ?? common
        return "sizes \(a.count) and \(b.count), first difference at byte \(index)"
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("headwater-encryption-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `bytes` decrypted by `openssl enc -d -aes-128-cbc` (which checks and removes the padding).
    static func opensslDecrypt(_ bytes: [UInt8], key: ContentKey, iv: SegmentIV, in directory: URL) throws -> [UInt8] {
        let input = directory.appendingPathComponent("openssl-\(UUID().uuidString).enc")
        let output = directory.appendingPathComponent("openssl-\(UUID().uuidString).dec")
        try Data(bytes).write(to: input)
        _ = try run("openssl", [
            "enc", "-d", "-aes-128-cbc", "-K", hex(key.bytes), "-iv", hex(iv.bytes), "-in", input.path, "-out", output.path,
        ])
        return Array(try Data(contentsOf: output))
    }

    /// `bytes` encrypted by `openssl enc -aes-128-cbc` (PKCS#7 padding, its default).
    static func opensslEncrypt(_ bytes: [UInt8], key: ContentKey, iv: SegmentIV, in directory: URL) throws -> [UInt8] {
        let input = directory.appendingPathComponent("openssl-\(UUID().uuidString).clear")
        let output = directory.appendingPathComponent("openssl-\(UUID().uuidString).enc")
        try Data(bytes).write(to: input)
        _ = try run("openssl", [
            "enc", "-aes-128-cbc", "-K", hex(key.bytes), "-iv", hex(iv.bytes), "-in", input.path, "-out", output.path,
        ])
        return Array(try Data(contentsOf: output))
    }
}

let encryptionSecretHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
let encryptionSecretBytes = (0..<32).map { UInt8($0) }

// MARK: - Content keys and IVs

@Suite("Encryption: content keys and IVs (HKDF-SHA256)")
struct EncryptionKeyTests {
    static let keys = try! ContentKeys(secretText: encryptionSecretHex)

    @Test(arguments: [("news", 0), ("news", 1), ("news", 1 << 40), ("a", 7), (String(repeating: "x_-9", count: 16), .max)] as [(String, UInt64)])
    func keyMatchesAnRFC5869ImplementationInPython(channel: String, index: UInt64) throws {
        let expected = try EncryptionReference.python(
            EncryptionReference.hkdfScript, [encryptionSecretHex, "headwater content key v1", "s:\(channel)", "n:\(index)"])
        #expect(EncryptionReference.hex(Self.keys.key(channel: channel, index: index).bytes) == expected)
    }

    @Test func keyMatchesOpenSSLKDF() throws {
        // info per the documented layout, built here byte by byte.
        let info =
            Array("headwater content key v1".utf8) + [0] + [0, 0, 0, 6] + Array("sports".utf8)
            + [0, 0, 0, 0, 0, 0, 0x01, 0x2C]  // 300
        let output = try EncryptionReference.run("openssl", [
            "kdf", "-keylen", "16", "-kdfopt", "digest:SHA256", "-kdfopt", "hexkey:\(encryptionSecretHex)",
            "-kdfopt", "hexinfo:\(EncryptionReference.hex(info))", "HKDF",
        ])
        let expected = output.replacingOccurrences(of: ":", with: "").lowercased()
        #expect(expected.count == 32, "openssl kdf printed \(output)")
        #expect(EncryptionReference.hex(Self.keys.key(channel: "sports", index: 300).bytes) == expected)
    }

    @Test(arguments: [("news", "v0", 0), ("news", "audio-alt", 12_345), ("b", "v1", .max)] as [(String, String, UInt64)])
    func ivMatchesAnRFC5869ImplementationInPython(channel: String, rendition: String, mediaSequence: UInt64) throws {
        let expected = try EncryptionReference.python(
            EncryptionReference.hkdfScript,
            [encryptionSecretHex, "headwater segment iv v1", "s:\(channel)", "s:\(rendition)", "n:\(mediaSequence)"])
        let iv = Self.keys.iv(channel: channel, rendition: rendition, mediaSequence: mediaSequence)
        #expect(EncryptionReference.hex(iv.bytes) == expected)
    }

    @Test func twoNodesWithTheSameSecretDeriveTheSameKeysAndIVs() throws {
        // The second node reads the same secret in its other written form.
        let other = try ContentKeys(secretText: Data(encryptionSecretBytes).base64EncodedString())
        let third = try ContentKeys(secret: encryptionSecretBytes)
        for channel in ["news", "sports"] {
            for index: UInt64 in [0, 1, 99] {
                let key = Self.keys.key(channel: channel, index: index).bytes
                #expect(key.count == 16)
                #expect(other.key(channel: channel, index: index).bytes == key)
                #expect(third.key(channel: channel, index: index).bytes == key)
            }
            let iv = Self.keys.iv(channel: channel, rendition: "v0", mediaSequence: 42)
            #expect(other.iv(channel: channel, rendition: "v0", mediaSequence: 42) == iv)
        }
    }

    @Test func everyChannelIndexAndRenditionHasItsOwnKeyAndIV() throws {
        var seen = Set<[UInt8]>()
        var count = 0
        for channel in ["news", "sports", "new", "s", "news1"] {
            for index: UInt64 in [0, 1, 2, 256, 1 << 32] {
                seen.insert(Self.keys.key(channel: channel, index: index).bytes)
                count += 1
            }
            for rendition in ["v0", "v1", "audio"] {
                for msn: UInt64 in [0, 1, 2, 256] {
                    seen.insert(Self.keys.iv(channel: channel, rendition: rendition, mediaSequence: msn).bytes)
                    count += 1
                }
            }
        }
        #expect(seen.count == count, "\(count - seen.count) repeated keys or IVs")
        // An IV is never the key of the same numbers, and another secret gives other keys.
        #expect(Self.keys.iv(channel: "news", rendition: "", mediaSequence: 0).bytes != Self.keys.key(channel: "news", index: 0).bytes)
        let otherSecret = try ContentKeys(secret: encryptionSecretBytes.reversed())
        #expect(otherSecret.key(channel: "news", index: 0).bytes != Self.keys.key(channel: "news", index: 0).bytes)
    }

    @Test func keyBytesNeverShowInItsDescriptionOrMirror() {
        let key = Self.keys.key(channel: "news", index: 3)
        let hex = EncryptionReference.hex(key.bytes)
        var dumped = ""
        dump(key, to: &dumped)
        for text in ["\(key)", String(reflecting: key), dumped] {
            #expect(!text.lowercased().contains(hex), "\(text)")
            #expect(!text.contains("\(key.bytes)"), "\(text)")
        }
    }

    @Test func ivAttributeIsZeroXAndThirtyTwoHexDigits() {
        let iv = SegmentIV(bytes: [0x00, 0x01, 0xAB, 0xFF] + Array(repeating: 0x5C, count: 12))
        #expect(iv.attributeValue == "0x0001ABFF" + String(repeating: "5C", count: 12))
    }
}

// MARK: - The secret's text form

@Suite("Encryption: the key secret")
struct EncryptionSecretTests {
    static let expected = "expected 32 random bytes as 64 hex digits or 44 base64 characters (openssl rand -hex 32)"

    @Test func hexAndBase64FormsReadTheSameBytes() throws {
        let base64 = Data(encryptionSecretBytes).base64EncodedString()
        #expect(base64.count == 44)
        let urlSafe = base64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        for text in [
            encryptionSecretHex, encryptionSecretHex.uppercased(), base64, String(base64.dropLast()), urlSafe,
            "  \(encryptionSecretHex)\n", "\t\(base64)\r\n",
        ] {
            #expect(try KeySecret.decode(text) == encryptionSecretBytes, "\(text)")
        }
        // A secret with + and / in its base64 form.
        let awkward = [UInt8](repeating: 0xFB, count: 32)
        let awkwardText = Data(awkward).base64EncodedString()
        #expect(awkwardText.contains("+") || awkwardText.contains("/"))
        #expect(try KeySecret.decode(awkwardText) == awkward)
    }

    @Test func emptySecretIsRefused() {
        for text in ["", "   ", "\n"] {
            #expect(throws: KeySecretError("key secret is empty; \(Self.expected)")) { try ContentKeys(secretText: text) }
        }
    }

    @Test func wrongLengthIsRefusedWithItsLength() {
        for (text, length) in [
            (String(encryptionSecretHex.dropLast()), 63), (encryptionSecretHex + "00", 66),
            (String(encryptionSecretHex.prefix(32)), 32), ("secret", 6),
            (Data(encryptionSecretBytes + encryptionSecretBytes).base64EncodedString(), 88),
        ] {
            #expect(throws: KeySecretError("key secret is \(length) characters; \(Self.expected)")) {
                try ContentKeys(secretText: text)
            }
        }
    }

    @Test func sixtyFourCharactersThatAreNotHexAreRefused() {
        let text = String(encryptionSecretHex.dropLast()) + "g"
        #expect(throws: KeySecretError("key secret is 64 characters but not all hex digits; \(Self.expected)")) {
            try ContentKeys(secretText: text)
        }
    }

    @Test func textThatIsNotBase64OfThirtyTwoBytesIsRefused() {
        let base64 = Data(encryptionSecretBytes).base64EncodedString()
        for text in [
            String(base64.dropLast(2)) + "!=",  // a character outside the alphabet
            String(base64.dropLast()) + "A",  // 44 characters without the '='
            Data(encryptionSecretBytes.dropLast()).base64EncodedString(),  // 31 bytes: ends "=="
            Data(encryptionSecretBytes + [0]).base64EncodedString(),  // 33 bytes: 44, no '='
            String(base64.dropLast(2)) + "B",  // 43 characters, non-zero unused bits
        ] {
            #expect(throws: KeySecretError("key secret is not valid base64 of 32 bytes; \(Self.expected)"), "\(text)") {
                try ContentKeys(secretText: text)
            }
        }
    }

    @Test func wrongNumberOfBytesIsRefused() {
        for count in [0, 16, 31, 33, 64] {
            #expect(throws: KeySecretError("key secret is \(count) bytes; expected exactly 32")) {
                try ContentKeys(secret: [UInt8](repeating: 7, count: count))
            }
        }
    }

    @Test func refusalsAreOneLineAndNeverRepeatTheSecret() {
        let secretish = "Zq8" + String(repeating: "k", count: 61)  // 64 characters, not hex
        let texts = [secretish, String(secretish.prefix(44)), String(secretish.prefix(50)), ""]
        for text in texts {
            do throws(KeySecretError) {
                _ = try ContentKeys(secretText: text)
                Issue.record("accepted \(text)")
            } catch {
                #expect(!error.description.contains("\n"))
                #expect(!error.description.contains("Zq8"), "\(error.description)")
                #expect(error.description.hasPrefix("key secret is "))
            }
        }
    }
}

// MARK: - Rotation

@Suite("Encryption: key rotation (media sequence number to key index)")
struct EncryptionRotationTests {
    @Test func rotateEveryZeroKeepsKeyZeroForever() {
        for msn: UInt64 in [0, 1, 4, 1_000_000, .max] {
            #expect(ContentKeys.keyIndex(mediaSequence: msn, rotateEvery: 0) == 0)
        }
    }

    @Test func rotateEveryOneChangesKeyWithEverySegment() {
        for msn: UInt64 in [0, 1, 2, 3, 1_000_000, .max] {
            #expect(ContentKeys.keyIndex(mediaSequence: msn, rotateEvery: 1) == msn)
        }
    }

    @Test func rotateEveryFourChangesKeyAtMultiplesOfFour() {
        let indices = (UInt64(0)...12).map { ContentKeys.keyIndex(mediaSequence: $0, rotateEvery: 4) }
        #expect(indices == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3])
        #expect(ContentKeys.keyIndex(mediaSequence: .max, rotateEvery: 4) == UInt64.max / 4)
    }
}

// MARK: - Segment encryption

@Suite("Encryption: segments (AES-128-CBC, PKCS#7)")
struct EncryptionSegmentTests {
    static let keys = try! ContentKeys(secretText: encryptionSecretHex)
    static let key = keys.key(channel: "demo", index: 0)
    static let iv = keys.iv(channel: "demo", rendition: "v0", mediaSequence: 0)
    static let demoSegment = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Public/demo/v2/seg-00000.ts")

    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { _ in random.byte() }
    }

    /// `clear` encrypted by ``SegmentEncryptor/encryptFile(at:to:key:iv:chunkSize:)`` through files.
    static func encryptThroughFiles(_ clear: [UInt8], chunkSize: Int, in directory: URL) throws -> [UInt8] {
        let source = directory.appendingPathComponent("clear-\(UUID().uuidString).ts")
        let destination = directory.appendingPathComponent("enc-\(UUID().uuidString).ts")
        try Data(clear).write(to: source)
        let size = try SegmentEncryptor.encryptFile(at: source.path, to: destination.path, key: key, iv: iv, chunkSize: chunkSize)
        let encrypted = Array(try Data(contentsOf: destination))
        #expect(size == encrypted.count)
        return encrypted
    }

    @Test func demoSegmentDecryptsWithOpenSSLToTheOriginalBytes() throws {
        let directory = try EncryptionReference.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clear = Array(try Data(contentsOf: Self.demoSegment))
        #expect(clear.count > SegmentEncryptor.defaultChunkSize, "the demo segment should span chunks")
        let encryptedURL = directory.appendingPathComponent("seg-00000.ts")
        let size = try SegmentEncryptor.encryptFile(at: Self.demoSegment.path, to: encryptedURL.path, key: Self.key, iv: Self.iv)
        let encrypted = Array(try Data(contentsOf: encryptedURL))
        #expect(size == SegmentEncryptor.encryptedSize(clearSize: clear.count))
        #expect(encrypted.count == size)
        #expect(EncryptionReference.difference(Array(encrypted.prefix(188)), Array(clear.prefix(188))) != nil)
        #expect(EncryptionReference.difference(try EncryptionReference.opensslDecrypt(encrypted, key: Self.key, iv: Self.iv, in: directory), clear) == nil)
        // And openssl, encrypting the same bytes with the same key and IV, writes the same ciphertext.
        #expect(EncryptionReference.difference(try EncryptionReference.opensslEncrypt(clear, key: Self.key, iv: Self.iv, in: directory), encrypted) == nil)
    }

    @Test(arguments: [0, 1, 15, 16, 17, 31, 32, 33, 188 * 7])
    func smallSizesPadToTheNextWholeBlockAndDecrypt(count: Int) throws {
        let directory = try EncryptionReference.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clear = Self.bytes(count, seed: UInt64(count))
        let inMemory = SegmentEncryptor.encrypt(clear, key: Self.key, iv: Self.iv)
        #expect(inMemory.count == (count / 16 + 1) * 16)
        #expect(SegmentEncryptor.encryptedSize(clearSize: count) == (count / 16 + 1) * 16)
        #expect(EncryptionReference.difference(try Self.encryptThroughFiles(clear, chunkSize: SegmentEncryptor.defaultChunkSize, in: directory), inMemory) == nil)
        #expect(EncryptionReference.difference(try Self.encryptThroughFiles(clear, chunkSize: 16, in: directory), inMemory) == nil)
        #expect(EncryptionReference.difference(try EncryptionReference.opensslDecrypt(inMemory, key: Self.key, iv: Self.iv, in: directory), clear) == nil)
    }

    @Test(arguments: [65_535, 65_536, 65_537, 3 * 65_536 + 5, 4 * 65_536])
    func multiChunkFilesDecryptAndAgreeWithOneCall(count: Int) throws {
        let directory = try EncryptionReference.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clear = Self.bytes(count, seed: UInt64(count))
        let streamed = try Self.encryptThroughFiles(clear, chunkSize: SegmentEncryptor.defaultChunkSize, in: directory)
        #expect(streamed.count == (count / 16 + 1) * 16)
        #expect(EncryptionReference.difference(streamed, SegmentEncryptor.encrypt(clear, key: Self.key, iv: Self.iv)) == nil)
        #expect(EncryptionReference.difference(try EncryptionReference.opensslDecrypt(streamed, key: Self.key, iv: Self.iv, in: directory), clear) == nil)
    }

    @Test func streamingAgreesWithOneCallForAnySizeAndChunkSize() throws {
        let directory = try EncryptionReference.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var random = SeededRandom(seed: 19)
        for _ in 0..<60 {
            let count = random.int(0...1_500)
            let chunkSize = 16 * random.int(1...20)
            let clear = Self.bytes(count, seed: random.next())
            let streamed = try Self.encryptThroughFiles(clear, chunkSize: chunkSize, in: directory)
            #expect(
                EncryptionReference.difference(streamed, SegmentEncryptor.encrypt(clear, key: Self.key, iv: Self.iv)) == nil,
                "size \(count), chunk \(chunkSize)")
        }
    }

    @Test func destinationIsReplacedWholeAndNoTemporaryIsLeft() throws {
        let directory = try EncryptionReference.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("clear.ts")
        let destination = directory.appendingPathComponent("enc.ts")
        try Data(Self.bytes(1000, seed: 1)).write(to: source)
        try Data("old contents".utf8).write(to: destination)
        try SegmentEncryptor.encryptFile(at: source.path, to: destination.path, key: Self.key, iv: Self.iv)
        #expect(try Data(contentsOf: destination).count == 1008)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["clear.ts", "enc.ts"])
    }

    @Test func unreadableSourceOrUnwritableDestinationIsAnErrorNamingThePath() throws {
        let directory = try EncryptionReference.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing.ts").path
        #expect(throws: SegmentEncryptionError("cannot open \(missing): No such file or directory")) {
            try SegmentEncryptor.encryptFile(at: missing, to: directory.appendingPathComponent("out.ts").path, key: Self.key, iv: Self.iv)
        }
        let source = directory.appendingPathComponent("clear.ts")
        try Data([1, 2, 3]).write(to: source)
        do throws(SegmentEncryptionError) {
            try SegmentEncryptor.encryptFile(at: source.path, to: directory.path + "/no/such/dir/out.ts", key: Self.key, iv: Self.iv)
            Issue.record("wrote into a missing directory")
        } catch {
            #expect(error.description.hasPrefix("cannot create \(directory.path)/no/such/dir/out.ts.tmp-"), "\(error)")
            #expect(!error.description.contains(EncryptionReference.hex(Self.key.bytes)))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["clear.ts"])
    }
}
