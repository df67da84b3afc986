import CHeadwaterZlib

/// gzip (RFC 1952) with zlib. ``compress(_:level:)`` runs once per shared playlist version, so it
/// can afford the default level; bodies made per request use ``compressPerResponse(_:)``.
public enum Gzip {
    /// Compresses `bytes` into a gzip member. Returns `nil` only if zlib fails to initialize.
    public static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8]? {
        var stream = z_stream()
        // windowBits 15 + 16 selects the gzip wrapper.
        guard deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let written: Int? = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                guard deflate(&stream, Z_FINISH) == Z_STREAM_END else { return nil }
                return out.count - Int(stream.avail_out)
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
