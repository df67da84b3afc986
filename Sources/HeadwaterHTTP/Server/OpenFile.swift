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
    /// The path it was opened by (``OriginFastPath`` opens the same file again on the next request).
    let path: String
    /// Size in bytes at open time.
    let size: Int64
    /// Modification time, Unix seconds.
    let modified: Int64
    /// Modification time: the nanoseconds within ``modified``.
    let modifiedNanoseconds: Int

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
        let (modified, nanoseconds) = Self.modificationTime(info)
        return .success(
            OpenFile(
                handle: NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: fd),
                path: path,
                size: Int64(info.st_size),
                modified: modified,
                modifiedNanoseconds: nanoseconds
            )
        )
    }

    /// Whether the file is as it was when opened, by `fstat(2)` of the open descriptor: the same
    /// size and modification time (to the nanosecond), and still linked — a file deleted, or
    /// replaced by a rename over it, has no links left. A descriptor kept open between requests
    /// (``SharedFile``) is checked so before each response, which then matches the file it sends.
    func isUnchanged() -> Bool {
        (try? handle.withUnsafeFileDescriptor { fd in
            var info = stat()
            guard fstat(fd, &info) == 0 else { return false }
            let (modified, nanoseconds) = Self.modificationTime(info)
            return Int64(info.st_size) == size && modified == self.modified && nanoseconds == modifiedNanoseconds
                && info.st_nlink > 0
        }) ?? false
    }

    private static func modificationTime(_ info: stat) -> (seconds: Int64, nanoseconds: Int) {
        #if canImport(Darwin)
        (Int64(info.st_mtimespec.tv_sec), Int(info.st_mtimespec.tv_nsec))
        #else
        (Int64(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec))
        #endif
    }

    /// Closes the descriptor (once the response that sent it is written, or when it is not sent).
    func close() {
        try? handle.close()
    }

    /// The largest file body read into its head's write (see ``readSmallBody(offset:count:appendingTo:)``).
    static let smallBodyLimit: Int64 = 16 * 1024

    /// Appends the `count` bytes from `offset` to `buffer` (`pread(2)`) if there are at most
    /// ``smallBodyLimit`` of them, and returns how many it appended (0 for a larger body); the rest,
    /// if any, goes by `sendfile`.
    ///
    /// Why: with `TCP_NODELAY` a small body's head would otherwise leave as a packet of its own,
    /// and its body by a `sendfile` of its own; read into the head's buffer, head and body leave in
    /// one write. A larger body is not worth the copy: its head leaves alone either way (a
    /// `sendfile` of the rest follows in any case), and `pread` plus `write` of a 16 KiB prefix cost
    /// about 6 µs more kernel time per 188 KiB range request than a separate head (`/proc` stime,
    /// `headwater-bench` fixture). Bodies over ``OriginHTTPHandler/corkedBodyThreshold`` are corked,
    /// so their head and body leave together anyway. A short or failed read (the file shrank since
    /// `fstat`) appends what there was and leaves the rest to `sendfile`.
    func readSmallBody(offset: Int64, count: Int64, appendingTo buffer: inout ByteBuffer) -> Int64 {
        guard count <= Self.smallBodyLimit else { return 0 }
        return read(offset: offset, count: count, appendingTo: &buffer)
    }

    /// Appends up to `count` bytes from `offset` to `buffer` (`pread(2)`: the page cache, as for
    /// `sendfile`) and returns how many it appended; 0 at the end of the file or on an error.
    func read(offset: Int64, count: Int64, appendingTo buffer: inout ByteBuffer) -> Int64 {
        guard count > 0 else { return 0 }
        let wanted = Int(count)
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
