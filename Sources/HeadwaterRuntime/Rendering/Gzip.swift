import CHeadwaterZlib

/// gzip (RFC 1952) with zlib. ``compress(_:level:)`` runs once per shared playlist version, so it
/// can afford the default level; bodies made per request use ``compressPerResponse(_:)``.
public enum Gzip {
    /// Compresses `bytes` into a gzip member. Returns `nil` only if zlib fails to initialize.
    public static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8]? {
        // windowBits 15 + 16 selects the gzip wrapper.
        deflateOnce(bytes, level: level, windowBits: 15 + 16, flush: Z_FINISH)
    }

    /// `bytes` deflated by one fresh zlib stream in one call: to the end of the stream (`Z_FINISH`)
    /// or to a byte boundary (`Z_SYNC_FLUSH`, for pieces that others follow). `nil` if zlib fails.
    static func deflateOnce(_ bytes: [UInt8], level: Int32, windowBits: Int32, flush: Int32) -> [UInt8]? {
        // At a fixed address: zlib keeps a pointer back to its stream and checks it on every call.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deallocate() }
        guard deflateInit2_(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(stream) }
        // A sync flush adds at most an empty stored block (5 bytes) and a partial byte.
        var output = [UInt8](repeating: 0, count: Int(deflateBound(stream, uLong(bytes.count))) + 16)
        let written: Int? = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.pointee.avail_in = uInt(input.count)
                stream.pointee.next_out = out.baseAddress
                stream.pointee.avail_out = uInt(out.count)
                let result = deflate(stream, flush)
                let done = flush == Z_FINISH
                    ? result == Z_STREAM_END
                    : result == Z_OK && stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0
                return done ? out.count - Int(stream.pointee.avail_out) : nil
            }
        }
        guard let written else { return nil }
        output.removeSubrange(written...)
        return output
    }

    /// Decompresses a gzip member (for tests and diagnostics). `nil` on malformed input.
    public static func decompress(_ bytes: [UInt8], limit: Int = 64 << 20) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit2_(&stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        return bytes.withUnsafeBufferPointer { input -> [UInt8]? in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    return (status, out.count - Int(stream.avail_out))
                }
                output.append(contentsOf: chunk[..<produced])
                if output.count > limit { return nil }
                if status == Z_STREAM_END { return output }
                if status != Z_OK || (produced == 0 && stream.avail_in == 0) { return nil }
            }
        }
    }
}
