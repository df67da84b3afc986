import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which symbolic links may be followed below a root that files are served from (the public
/// directory, a segment's directory): `server.follow_symlinks` in `Config/README.md`. A link
/// leading out of its root is never followed, and the root itself (the configured path) is
/// resolved as any path is.
public enum SymlinkPolicy: String, Sendable, Hashable, CaseIterable {
    /// No link at all below the root: a file or directory that is a link answers 404. The default:
    /// a link someone left (or a packager wrote) under a served directory can then expose nothing.
    case never
    /// Links are followed while they resolve to something beneath the root (`latest -> v2/`).
    case inside
}

/// A path to open beneath a root it must not leave: the root directory (the operator's or
/// Headwater's own path, resolved as given) and a path relative to it, checked component by
/// component (``OpenFile/open(_:)``) under the ``SymlinkPolicy`` it carries, so that a cached
/// response (``PreencodedFileHeads``) opens its file again under the same rule.
struct ConfinedPath: Hashable, Sendable, CustomStringConvertible {
    let root: String
    /// `/`-separated; a component that is empty, `.` or `..` is never opened.
    let relative: String
    let symlinks: SymlinkPolicy

    init(root: String, relative: String, symlinks: SymlinkPolicy) {
        self.root = root
        self.relative = relative
        self.symlinks = symlinks
    }

    /// `path` opened beneath its own directory: its last component may not be a link (leading
    /// anywhere, under ``SymlinkPolicy/never``; out of that directory, under ``SymlinkPolicy/inside``).
    /// How segment files are opened: their directories are Headwater's own, the file names are
    /// what an encoder or packager could have made a link.
    init(file path: String, symlinks: SymlinkPolicy) {
        if let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) {
            let directory = String(path[..<slash])
            self.init(
                root: directory.isEmpty ? "/" : directory, relative: String(path[path.index(after: slash)...]), symlinks: symlinks)
        } else {
            self.init(root: ".", relative: path, symlinks: symlinks)
        }
    }

    /// `root/relative`, for logs.
    var description: String { root.hasSuffix("/") ? root + relative : root + "/" + relative }

    /// Every component names an entry of the directory before it: none empty, `.` or `..`, no NUL.
    var isPlain: Bool {
        !relative.isEmpty && !relative.utf8.contains(0)
            && relative.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { $0 != "" && $0 != "." && $0 != ".." }
    }
}

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
///
/// Every file is opened beneath a root (``ConfinedPath``) with no symbolic link leading out of it
/// (issue 18: `GET /passwd-link` once answered `/etc/passwd`): by `openat2(2)` with
/// `RESOLVE_BENEATH` (and `RESOLVE_NO_SYMLINKS` under ``SymlinkPolicy/never``), which decides in
/// the kernel, during the one lookup; where the kernel lacks it (before Linux 5.6, or a seccomp
/// filter refusing it), by an explicit check of where the open descriptor really is
/// (``openChecked(_:root:flags:)``). A segment (one component, no link allowed) costs one `open`
/// with `O_NOFOLLOW`, as before; a static file with no link on its whole path, one `openat2`.
struct OpenFile {
    let handle: NIOFileHandle
    /// The path it was opened by (``OriginFastPath`` opens the same file again on the next request).
    let path: ConfinedPath
    /// Size in bytes at open time.
    let size: Int64
    /// Modification time, Unix seconds.
    let modified: Int64
    /// Modification time: the nanoseconds within ``modified``.
    let modifiedNanoseconds: Int

    enum Failure: Error, Equatable {
        /// `ENOENT` or `ENOTDIR`: nothing there; or a path with an empty, `.` or `..` component.
        case notFound
        /// A directory, device, FIFO or socket.
        case notRegularFile
        /// A symbolic link the policy does not follow: any link under ``SymlinkPolicy/never``, one
        /// leading out of the root under ``SymlinkPolicy/inside``. Answered as ``notFound`` is, so
        /// a client learns nothing of what the link points to.
        case refusedSymlink
        /// Any other `errno` (`EACCES`, `EMFILE`, …).
        case failed(errno: CInt)
    }

    /// `path`'s file, if it is a regular file reached without leaving its root. `resolvingInKernel`
    /// `false` (tests) checks as on a kernel without `openat2`.
    static func open(_ path: ConfinedPath, resolvingInKernel: Bool = true) -> Result<OpenFile, Failure> {
        guard path.isPlain else { return .failure(.notFound) }
        let fd: CInt
        switch descriptor(path, resolvingInKernel: resolvingInKernel) {
        case .success(let opened): fd = opened
        case .failure(let failure): return .failure(failure)
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

    // MARK: - Opening beneath a root

    /// Opens `path` for reading under its policy: the descriptor, or why not.
    private static func descriptor(_ path: ConfinedPath, resolvingInKernel: Bool) -> Result<CInt, Failure> {
        let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK
        // One component and no link allowed (every segment): `O_NOFOLLOW` decides what `openat2`
        // would, in the one `open` a file always cost.
        if path.symlinks == .never, !path.relative.utf8.contains(UInt8(ascii: "/")) {
            let fd = path.description.withCString { systemOpen($0, flags | O_NOFOLLOW) }
            return fd >= 0 ? .success(fd) : .failure(failure(errno: errno, symlinks: .never))
        }
        // No link allowed: a whole path with no link at all (`RESOLVE_NO_SYMLINKS` from the
        // working directory) has none below the root either — one call, as a plain `open`, where
        // opening the root as well would double the cost (two more system calls: about 7 µs per
        // file here). A link met anywhere, the root's own path included (the operator's), takes the
        // way below, which tells the two apart.
        if resolvingInKernel, path.symlinks == .never,
            let opened = KernelResolution.openat2(AT_FDCWD, path.description, flags: flags, resolve: KernelResolution.noLinksAtAll)
        {
            switch opened {
            case .success(let fd): return .success(fd)
            case .failure(let error) where error.code == ELOOP: break
            case .failure(let error): return .failure(failure(errno: error.code, symlinks: .never))
            }
        }
        let root = path.root.withCString { systemOpen($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard root >= 0 else {
            let code = errno
            return .failure(code == ENOENT || code == ENOTDIR ? .notFound : .failed(errno: code))
        }
        defer { _ = systemClose(root) }
        if resolvingInKernel,
            let opened = KernelResolution.openat2(
                root, path.relative, flags: flags,
                resolve: path.symlinks == .never ? KernelResolution.beneathWithoutLinks : KernelResolution.beneath)
        {
            return opened.mapError { failure(errno: $0.code, symlinks: path.symlinks) }
        }
        return openChecked(path, root: root, flags: flags)
    }

    /// Where the kernel has no `openat2` (``KernelResolution``): opens `path` beneath the directory
    /// open as `root`, then asks where the descriptor really is (`/proc/self/fd`) and keeps it only
    /// if that is beneath where `root` really is — exactly `root/relative` under
    /// ``SymlinkPolicy/never`` (so no link on the way changed anything), anywhere beneath under
    /// ``SymlinkPolicy/inside``. Checking the open descriptors, not the names, leaves no window for
    /// a link swapped in between. A location that cannot be read refuses the file.
    private static func openChecked(_ path: ConfinedPath, root: CInt, flags: CInt) -> Result<CInt, Failure> {
        let fd = path.relative.withCString { systemOpenAt(root, $0, flags | (path.symlinks == .never ? O_NOFOLLOW : 0)) }
        guard fd >= 0 else { return .failure(failure(errno: errno, symlinks: path.symlinks)) }
        guard let opened = location(of: fd), let base = location(of: root) else {
            let code = errno
            _ = systemClose(fd)
            return .failure(.failed(errno: code == 0 ? EACCES : code))
        }
        let prefix = base.hasSuffix("/") ? base : base + "/"
        let beneath = path.symlinks == .never ? opened == prefix + path.relative : opened.hasPrefix(prefix)
        guard beneath else {
            _ = systemClose(fd)
            return .failure(.refusedSymlink)
        }
        return .success(fd)
    }

    /// What a failed open's `errno` means for a path of plain components under `symlinks`.
    private static func failure(errno code: CInt, symlinks: SymlinkPolicy) -> Failure {
        switch code {
        case ENOENT, ENOTDIR: .notFound
        // A link met where none may be (`O_NOFOLLOW`, `RESOLVE_NO_SYMLINKS`); under `.inside` a
        // loop of links, an error like any other.
        case ELOOP where symlinks == .never: .refusedSymlink
        // `RESOLVE_BENEATH`: the lookup would have left the root; with no `..` in the path, only
        // a link leads there (an absolute one always does).
        case EXDEV: .refusedSymlink
        default: .failed(errno: code)
        }
    }

    /// The absolute path of what `fd` is open on, from the kernel; `nil` if it cannot tell.
    private static func location(of fd: CInt) -> String? {
        #if canImport(Darwin)
        var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
        guard fcntl(fd, F_GETPATH, &buffer) == 0 else { return nil }
        return String(cString: buffer)
        #else
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count)
        guard count > 0, count < buffer.count else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #endif
    }

    private static func systemOpenAt(_ directory: CInt, _ path: UnsafePointer<CChar>, _ flags: CInt) -> CInt {
        #if canImport(Darwin)
        Darwin.openat(directory, path, flags)
        #elseif canImport(Musl)
        Musl.openat(directory, path, flags)
        #else
        Glibc.openat(directory, path, flags)
        #endif
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

/// `openat2(2)` with `RESOLVE_BENEATH` (Linux 5.6): the kernel resolves the path beneath the root
/// directory and fails rather than leave it — by `..`, by an absolute link, or by a link whose
/// target climbs out — and with `RESOLVE_NO_SYMLINKS` fails at any link. Glibc has no wrapper, and
/// Swift cannot call the variadic `syscall(2)`, so it is called through its address as a
/// fixed-argument C function: on x86_64 and aarch64 Linux a variadic callee takes integer and
/// pointer arguments where a fixed one does, and glibc's `syscall` is assembly that only moves
/// them into place.
enum KernelResolution {
    /// `false` once the kernel (or a seccomp filter: systemd's `SystemCallFilter=` answers `EPERM`)
    /// refused the call itself; the explicit check (`OpenFile.openChecked`) is used from then on.
    static let isAvailable = Atomic<Bool>(true)

    #if canImport(Glibc) && (arch(x86_64) || arch(arm64))
    private typealias SyscallFunction = @convention(c) (CLong, CInt, UnsafePointer<CChar>?, UnsafeRawPointer?, Int) -> CLong
    /// `syscall`, looked up once.
    private static let syscall: SyscallFunction? = dlsym(nil, "syscall").map { unsafeBitCast($0, to: SyscallFunction.self) }
    /// `SYS_openat2`: one number on every architecture since Linux 5.1's unified table.
    private static let openat2Number: CLong = 437
    #endif

    /// A failed call's `errno`.
    struct Errno: Error {
        var code: CInt
    }

    /// `struct open_how` (`linux/openat2.h`): `flags`, `mode`, `resolve`, 64 bits each.
    private typealias OpenHow = (flags: UInt64, mode: UInt64, resolve: UInt64)
    private static let resolveNoMagicLinks: UInt64 = 0x02
    private static let resolveNoSymlinks: UInt64 = 0x04
    private static let resolveBeneath: UInt64 = 0x08
    /// Beneath the directory, links allowed while they stay there (relative ones only).
    static let beneath = resolveBeneath | resolveNoMagicLinks
    /// Beneath the directory, and no link at all.
    static let beneathWithoutLinks = resolveBeneath | resolveNoSymlinks | resolveNoMagicLinks
    /// No link anywhere on the path.
    static let noLinksAtAll = resolveNoSymlinks | resolveNoMagicLinks

    /// `path` opened relative to `directory` (or the working directory, `AT_FDCWD`) with `flags`
    /// and `resolve`: the descriptor, or the `errno`; `nil` when `openat2` is not there to ask
    /// (the caller checks by other means).
    static func openat2(_ directory: CInt, _ path: String, flags: CInt, resolve: UInt64) -> Result<CInt, Errno>? {
        #if canImport(Glibc) && (arch(x86_64) || arch(arm64))
        guard isAvailable.load(ordering: .relaxed), let syscall else { return nil }
        var how: OpenHow = (UInt64(UInt32(bitPattern: flags)), 0, resolve)
        let result = withUnsafeBytes(of: &how) { how in
            path.withCString { syscall(openat2Number, directory, $0, how.baseAddress, how.count) }
        }
        if result >= 0 { return .success(CInt(result)) }
        let code = errno
        if code == ENOSYS || code == EPERM {
            isAvailable.store(false, ordering: .relaxed)
            return nil
        }
        return .failure(Errno(code: code))
        #else
        return nil
        #endif
    }
}
