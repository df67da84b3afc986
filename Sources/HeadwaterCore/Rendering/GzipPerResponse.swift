import CHeadwaterZlib
import NIOConcurrencyHelpers

extension Gzip {
    /// gzip for bodies made per request (stitched playlists): level 1, with deflate states reused
    /// from a small pool. Setting up a deflate state allocates and clears ~256 KB, which costs more
    /// than compressing a 2 KB playlist (mostly page faults on freshly allocated memory);
    /// `deflateReset` on a kept state does not. `nil` only if zlib fails.
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
}

/// One zlib deflate state (gzip wrapper, level 1) at a fixed address: zlib keeps a pointer back to
/// its `z_stream`, so the stream must never move.
///
/// `@unchecked Sendable`: a state is used by one thread at a time — it is only reachable through
/// ``DeflatePool``, which hands each out to one caller under its lock until it is released.
final class DeflateState: @unchecked Sendable {
    let stream: UnsafeMutablePointer<z_stream>

    init?() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // windowBits 15 + 16 selects the gzip wrapper; level 1: per-request bodies favour speed.
        guard deflateInit2_(stream, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
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
