import CHeadwaterZlib

/// gzip with one deflate state reused for every call (`deflateReset`), to compare with
/// `Gzip.compress`, which sets up and frees zlib's state per call: with windowBits 15 and memLevel 8,
/// 256 KB, of which `deflateReset` clears the 64 KB hash table. A measurement of a possible change,
/// not used by the server.
final class ReusedGzip {
    private var stream = z_stream()

    /// - Parameters:
    ///   - windowBits: 9–15; a window at least as long as the input loses nothing.
    ///   - memLevel: 1–9; the hash table has 2^(memLevel + 7) two-byte entries.
    init?(level: Int32 = 1, windowBits: Int32 = 15, memLevel: Int32 = 8) {
        guard deflateInit2_(&stream, level, Z_DEFLATED, windowBits + 16, memLevel, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
    }

    deinit { deflateEnd(&stream) }

    func compress(_ bytes: [UInt8]) -> [UInt8]? {
        guard deflateReset(&stream) == Z_OK else { return nil }
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
}
