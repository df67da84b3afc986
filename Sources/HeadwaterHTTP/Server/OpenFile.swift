import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A regular file opened for reading, with what `fstat(2)` said about it, ready to be sent as a
/// `FileRegion` (`sendfile`).
///
/// Files are opened with `open(2)` directly on the event loop rather than through
/// `NonBlockingFileIO`'s thread pool. Segments and status-page files live on local disk and are
/// almost always in the page cache (a segment is fetched right after it was written), so `open` +
/// `fstat` cost a few microseconds, less than the two thread hops and the allocations of a pool
/// round trip on every segment request (nginx makes the same choice). The bytes themselves never
/// pass through the loop: the kernel copies them with `sendfile`. `O_NONBLOCK` keeps `open` from
/// hanging on a FIFO someone left under the public directory; it does not affect regular files.
struct OpenFile {
    let handle: NIOFileHandle
    /// Size in bytes at open time.
    let size: Int64
    /// Modification time, Unix seconds.
    let modified: Int64

    enum Failure: Error, Equatable {
        /// `ENOENT` or `ENOTDIR`: nothing there.
        case notFound
        /// A directory, device, FIFO or socket.
        case notRegularFile
        /// Any other `errno` (`EACCES`, `EMFILE`, …).
        case failed(errno: CInt)
    }

    static func open(_ path: String) -> Result<OpenFile, Failure> {
        let fd = path.withCString { Self.systemOpen($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else {
            let code = errno
            return .failure(code == ENOENT || code == ENOTDIR ? .notFound : .failed(errno: code))
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            _ = Self.systemClose(fd)
            return .failure(.failed(errno: code))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            _ = Self.systemClose(fd)
            return .failure(.notRegularFile)
        }
        #if canImport(Darwin)
        let modified = Int64(info.st_mtimespec.tv_sec)
        #else
        let modified = Int64(info.st_mtim.tv_sec)
        #endif
        return .success(
            OpenFile(
                handle: NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: fd),
                size: Int64(info.st_size),
                modified: modified
            )
        )
    }

    /// Closes the descriptor (once the response that sent it is written, or when it is not sent).
    func close() {
        try? handle.close()
    }

    /// How much of a file body goes out with its head, read into the same write (see
    /// ``readPrefix(offset:count:appendingTo:)``).
    static let bodyPrefixLimit: Int64 = 16 * 1024

    /// Appends up to ``bodyPrefixLimit`` bytes of `count` from `offset` to `buffer` (`pread(2)`),
    /// and returns how many it appended; the rest, if any, goes by `sendfile`.
    ///
    /// Why: with `TCP_NODELAY` the head would otherwise leave as a packet of its own, ahead of the
    /// body — a small segment the client wakes up for, and fewer MB/s (the stock NIO segment path
    /// measured 0.65× nginx). Coalescing the head with the start of the body costs one copy of at most
    /// 16 KiB from the page cache, where `TCP_CORK` around the response cost two `setsockopt` calls
    /// and NIO's option machinery (about 7% of a range request's CPU in `perf`); a body that fits
    /// is sent whole in that one write, with no `sendfile` at all. A short or failed read (the file
    /// shrank since `fstat`) appends what there was and leaves the rest to `sendfile`, as before.
    func readPrefix(offset: Int64, count: Int64, appendingTo buffer: inout ByteBuffer) -> Int64 {
        let wanted = Int(min(count, Self.bodyPrefixLimit))
        guard wanted > 0 else { return 0 }
        let read = (try? handle.withUnsafeFileDescriptor { fd in
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { bytes in
                let result = pread(fd, bytes.baseAddress, wanted, off_t(offset))
                return result > 0 ? result : 0
            }
        }) ?? 0
        return Int64(read)
    }

    private static func systemOpen(_ path: UnsafePointer<CChar>, _ flags: CInt) -> CInt {
        #if canImport(Darwin)
        Darwin.open(path, flags)
        #elseif canImport(Musl)
        Musl.open(path, flags)
        #else
        Glibc.open(path, flags)
        #endif
    }

    private static func systemClose(_ fd: CInt) -> CInt {
        #if canImport(Darwin)
        Darwin.close(fd)
        #elseif canImport(Musl)
        Musl.close(fd)
        #else
        Glibc.close(fd)
        #endif
    }
}
