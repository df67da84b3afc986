import CHeadwaterZlib
public import NIOCore
import NIOConcurrencyHelpers

extension Gzip {
    /// gzip for small bodies made per request (a session's multivariant playlist): level 1, with a
    /// small window and hash (``DeflateState``) and deflate states reused from a pool. Setting up a
    /// default deflate state allocates and clears ~256 KB, and even `deflateReset` clears its 64 KB
    /// hash table: for a 2 KB body that costs more than compressing it. `nil` only if zlib fails.
    public static func compressPerResponse(_ bytes: [UInt8]) -> [UInt8]? {
        guard let state = DeflatePool.shared.acquire() else { return nil }
        defer { DeflatePool.shared.release(state) }
        let stream = state.stream
        guard deflateReset(stream) == Z_OK else { return nil }
        let bound = Int(deflateBound(stream, uLong(bytes.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let written: Int? = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.pointee.avail_in = uInt(input.count)
                stream.pointee.next_out = out.baseAddress
                stream.pointee.avail_out = uInt(out.count)
                guard deflate(stream, Z_FINISH) == Z_STREAM_END else { return nil }
                return out.count - Int(stream.pointee.avail_out)
            }
        }
        guard let written else { return nil }
        output.removeSubrange(written...)
        return output
    }

    /// Part of a body compressed ahead of time, for ``Composer``: raw deflate blocks (none final),
    /// ending on a byte boundary (a sync flush), with the CRC-32 and length of what they hold.
    public struct DeflatedPiece: Sendable {
        /// The deflate blocks.
        public let deflated: [UInt8]
        /// The bytes they hold.
        public let length: Int
        let crc: uLong
        /// `crc32_combine_gen(length)`: appends this piece's CRC to another in one multiplication.
        let combineOperator: uLong

        /// Compresses `bytes` (not empty) on its own: no back-reference leaves the piece, so it can
        /// follow anything. `nil` only if zlib fails.
        public init?(_ bytes: [UInt8], level: Int32 = 6) {
            precondition(!bytes.isEmpty, "a deflated piece holds at least one byte")
            // Negative windowBits: raw deflate, no zlib or gzip wrapper.
            guard let output = Gzip.deflateOnce(bytes, level: level, windowBits: -15, flush: Z_SYNC_FLUSH) else {
                return nil
            }
            self.deflated = output
            self.length = bytes.count
            self.crc = bytes.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
            self.combineOperator = crc32_combine_gen(bytes.count)
        }
    }

    /// Writes one gzip member (RFC 1952) into a `ByteBuffer` from pieces compressed ahead of time
    /// (``DeflatedPiece``) and bytes stored as they are (RFC 1951 stored blocks): a response whose
    /// bytes are mostly shared with other responses costs copies and a CRC of the rest, no
    /// compression. The same calls give the same bytes in any process.
    public struct Composer {
        private var buffer: ByteBuffer
        private var crc: uLong = 0
        private var length = 0

        /// The fixed member header: no name or time, "Unix".
        private static let header: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]
        /// A stored block holds at most this many bytes.
        static let storedBlockLimit = 65_535

        /// - Parameter capacity: the compressed size expected, to allocate once.
        public init(capacity: Int) {
            buffer = ByteBufferAllocator().buffer(capacity: capacity + Self.header.count + 32)
            buffer.writeBytes(Self.header)
        }

        public mutating func append(_ piece: DeflatedPiece) {
            buffer.writeBytes(piece.deflated)
            crc = crc32_combine_op(crc, piece.crc, piece.combineOperator)
            length += piece.length
        }

        /// Appends, uncompressed, what `write` writes into the buffer.
        public mutating func appendStored(_ write: (inout ByteBuffer) -> Void) {
            let headerIndex = buffer.writerIndex
            buffer.writeRepeatingByte(0, count: 5)  // the header, set below
            let start = buffer.writerIndex
            write(&buffer)
            let count = buffer.writerIndex - start
            let (before, position) = (crc, start - buffer.readerIndex)
            crc = buffer.withUnsafeReadableBytes { raw in
                crc32(before, raw.baseAddress!.advanced(by: position).assumingMemoryBound(to: Bytef.self), uInt(count))
            }
            length += count
            if count <= Self.storedBlockLimit {
                Self.setStoredHeader(&buffer, at: headerIndex, count: count)
                return
            }
            // Rare (the caller's parts are small): split into blocks, each with its header.
            let bytes = buffer.getBytes(at: start, length: count)!
            buffer.moveWriterIndex(to: headerIndex)
            var offset = 0
            while offset < count {
                let chunk = min(Self.storedBlockLimit, count - offset)
                let index = buffer.writerIndex
                buffer.writeRepeatingByte(0, count: 5)  // the header, set below
                Self.setStoredHeader(&buffer, at: index, count: chunk)
                buffer.writeBytes(bytes[offset..<(offset + chunk)])
                offset += chunk
            }
        }

        /// The member: the pieces, a final empty block, the CRC-32 and the length.
        public mutating func finish() -> ByteBuffer {
            // BFINAL = 1, BTYPE = 01 (fixed Huffman), end-of-block code (7 zero bits).
            buffer.writeBytes([0x03, 0x00])
            buffer.writeInteger(UInt32(truncatingIfNeeded: crc), endianness: .little)
            buffer.writeInteger(UInt32(truncatingIfNeeded: length), endianness: .little)
            return buffer
        }

        /// A stored block's header at a byte boundary: BFINAL = 0, BTYPE = 00 (padded to a byte),
        /// LEN and its one's complement, little-endian.
        private static func setStoredHeader(_ buffer: inout ByteBuffer, at index: Int, count: Int) {
            buffer.setInteger(UInt8(0), at: index)
            buffer.setInteger(UInt16(count), at: index + 1, endianness: .little)
            buffer.setInteger(~UInt16(count), at: index + 3, endianness: .little)
        }
    }
}

/// One zlib deflate state for per-response gzip (gzip wrapper, level 1, a 4 KB window and a 2 K-entry
/// hash: per-response bodies are a few kilobytes) at a fixed address: zlib keeps a pointer back to
/// its `z_stream`, so the stream must never move.
///
/// `@unchecked Sendable`: a state is used by one thread at a time — it is only reachable through
/// ``DeflatePool``, which hands each out to one caller under its lock until it is released.
final class DeflateState: @unchecked Sendable {
    let stream: UnsafeMutablePointer<z_stream>

    /// windowBits 12 (+ 16 selects the gzip wrapper) and memLevel 4: `deflateReset` clears 4 KB of
    /// hash instead of 64 KB; on playlists the output is within a few percent of the defaults'.
    static let windowBits: Int32 = 12
    static let memoryLevel: Int32 = 4

    init?() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard deflateInit2_(stream, 1, Z_DEFLATED, Self.windowBits + 16, Self.memoryLevel, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else {
            stream.deallocate()
            return nil
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }
}

/// Idle deflate states, at most one per concurrent compression up to ``capacity``.
final class DeflatePool: Sendable {
    static let shared = DeflatePool()
    /// More than event loops on any machine Headwater runs on; extra states are freed on release.
    let capacity = 64
    private let idle = NIOLockedValueBox<[DeflateState]>([])

    func acquire() -> DeflateState? {
        idle.withLockedValue { $0.popLast() } ?? DeflateState()
    }

    /// Returns `state` to the pool, or lets it be freed (after the lock is released) when full.
    func release(_ state: DeflateState) {
        idle.withLockedValue { idle in
            if idle.count < capacity { idle.append(state) }
        }
    }
}
