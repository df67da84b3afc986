import Crypto
import _CryptoExtras

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-segment AES-128-CBC with PKCS#7 padding: `METHOD=AES-128` of RFC 8216 §4.3.2.4, which
/// every HLS player decrypts. The cipher is swift-crypto's (BoringSSL's `AES_cbc_encrypt`, AES-NI
/// where the CPU has it); nothing here touches a block.
///
/// A segment of `n` clear bytes becomes `(n / 16 + 1) * 16` encrypted bytes: PKCS#7 always adds
/// 1 to 16 bytes, a whole block when `n` is already a multiple of 16.
///
/// Synchronous and blocking (file I/O and about a millisecond of CPU per MiB): the server calls it
/// off the event loop, once per segment; it keeps no state, so any thread may.
public enum SegmentEncryptor {
    /// Bytes read, encrypted and written at a time by ``encryptFile(at:to:key:iv:chunkSize:)``.
    public static let defaultChunkSize = 1 << 16

    /// The encrypted size of `clearSize` bytes.
    public static func encryptedSize(clearSize: Int) -> Int { (clearSize / 16 + 1) * 16 }

    /// `clear`, encrypted in one call (tests, and whatever is small and already in memory).
    public static func encrypt(_ clear: [UInt8], key: ContentKey, iv: SegmentIV) -> [UInt8] {
        Array(cipher(clear[...], key: key, iv: cbcIV(iv.bytes), last: true))
    }

    /// Encrypts the file at `source` into `destination`, `chunkSize` bytes at a time, so a large
    /// segment is never in memory whole; returns the encrypted size.
    ///
    /// CBC chains through the chunks: each full chunk is encrypted without padding with the last
    /// ciphertext block before it as its IV, and the final, short chunk (possibly empty) with
    /// padding, which is byte for byte what one call over the whole file writes.
    ///
    /// The bytes go to a temporary file next to `destination` that is renamed over it once
    /// complete, so a reader sees the old file or the whole new one, never a part. (No fsync: an
    /// encrypted segment is derived, and is written again from its clear source after a crash.)
    ///
    /// - Parameter chunkSize: a positive multiple of 16.
    @discardableResult
    public static func encryptFile(
        at source: String, to destination: String, key: ContentKey, iv: SegmentIV, chunkSize: Int = defaultChunkSize
    ) throws(SegmentEncryptionError) -> Int {
        precondition(chunkSize > 0 && chunkSize % 16 == 0, "chunk size \(chunkSize) is not a positive multiple of 16")
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw .init("cannot open \(source): \(errorText())") }
        defer { close(input) }

        let temporary = destination + ".tmp-" + String(UInt64.random(in: .min ... .max), radix: 16)
        let output = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw .init("cannot create \(temporary): \(errorText())") }
        var written = 0
        var failure: SegmentEncryptionError?
        do throws(SegmentEncryptionError) {
            var chunk = [UInt8](repeating: 0, count: chunkSize)
            var chainIV = cbcIV(iv.bytes)
            while true {
                let filled = try fill(&chunk, from: input, path: source)
                let last = filled < chunkSize
                let encrypted = cipher(chunk[..<filled], key: key, iv: chainIV, last: last)
                if let reason = encrypted.withUnsafeBytes({ writeAll(output, $0) }) {
                    throw .init("cannot write \(temporary): \(reason)")
                }
                written += encrypted.count
                if last { break }
                chainIV = cbcIV(encrypted.suffix(16))
            }
        } catch {
            failure = error
        }
        if close(output) != 0, failure == nil { failure = .init("cannot write \(temporary): \(errorText())") }
        if let failure {
            unlink(temporary)
            throw failure
        }
        guard rename(temporary, destination) == 0 else {
            let text = errorText()
            unlink(temporary)
            throw .init("cannot rename \(temporary) to \(destination): \(text)")
        }
        return written
    }

    /// AES-128-CBC of `clear` from `iv`, padded when `last`. The only failures swift-crypto has
    /// are a key that is not 128, 192 or 256 bits and unpadded input that is not whole blocks; a
    /// ``ContentKey`` is 128 bits and the callers pass whole blocks unless `last`, so neither can
    /// happen.
    private static func cipher(_ clear: ArraySlice<UInt8>, key: ContentKey, iv: AES._CBC.IV, last: Bool) -> Data {
        try! AES._CBC.encrypt(clear, using: key.symmetricKey, iv: iv, noPadding: !last)
    }

    private static func cbcIV(_ bytes: some Collection<UInt8>) -> AES._CBC.IV {
        try! AES._CBC.IV(ivBytes: bytes)  // always 16 bytes: a SegmentIV or a cipher block
    }

    /// Reads until `chunk` is full or the file ends; the number of bytes read.
    private static func fill(_ chunk: inout [UInt8], from fd: Int32, path: String) throws(SegmentEncryptionError) -> Int {
        var filled = 0
        while filled < chunk.count {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .init("cannot read \(path): \(errorText())")
            }
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    /// Writes all of `bytes`; `nil`, or why it failed.
    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> String? {
        var offset = 0
        while offset < bytes.count {
            let count = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                return errorText()
            }
            offset += count
        }
        return nil
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}

/// Why a segment could not be encrypted: a file that would not open, read, write or rename. One
/// line naming the path and the system's reason; never a key.
public struct SegmentEncryptionError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String

    init(_ description: String) { self.description = description }
}
