public import HeadwaterConfiguration
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the server's own access log is written (`server.access_log`): standard output, a file
/// opened append-only, or nowhere. Shared by every event loop's ``AccessLogLines``; each of their
/// writes is whole lines in one `write(2)`.
///
/// A file is reopened by ``reopen()`` (SIGUSR1, after logrotate has renamed it, as nginx does):
/// the new file is opened first, then swapped in, so a write either went to the old file before
/// the swap or goes to the new one after it, and a line is never split between them. The old
/// descriptor is closed when the last write still holding it returns, never under a write.
public final class AccessLogOutput: Sendable {
    /// The file being appended to; closed when the last reference goes.
    private final class OpenLog: Sendable {
        let path: String
        let descriptor: CInt

        init(path: String, descriptor: CInt) {
            self.path = path
            self.descriptor = descriptor
        }

        deinit { close(descriptor) }
    }

    private enum Target: Sendable {
        case standardOutput
        case file(OpenLog)
        case off
    }

    /// Opening the log file failed: `path` and `strerror`'s reason.
    public struct OpenError: Error, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "cannot open the access log \(path): \(reason)" }
    }

    private let target: Mutex<Target>
    /// Read per request without the lock: with `off` a request's line is not even formatted.
    private let enabled: Atomic<Bool>

    /// Opens `destination` (creating the file if needed, mode 0640 less the umask).
    public convenience init(_ destination: HeadwaterConfiguration.Server.AccessLog) throws(OpenError) {
        self.init(target: try Self.openTarget(destination), enabled: destination != .off)
    }

    /// Standard output (the default destination).
    public convenience init() {
        self.init(target: .standardOutput, enabled: true)
    }

    private init(target: Target, enabled: Bool) {
        self.target = Mutex(target)
        self.enabled = Atomic(enabled)
    }

    /// Whether lines are written at all (`false` for `off`).
    public var isEnabled: Bool { enabled.load(ordering: .relaxed) }

    /// The destination now, as configured (a file by its path).
    public var destination: HeadwaterConfiguration.Server.AccessLog {
        target.withLock { target in
            switch target {
            case .standardOutput: .standardOutput
            case .file(let log): .file(log.path)
            case .off: .off
            }
        }
    }

    /// Switches to `destination` (a reload that changed `server.access_log`). If it cannot be
    /// opened this throws and the current destination stays.
    public func apply(_ destination: HeadwaterConfiguration.Server.AccessLog) throws(OpenError) {
        guard destination != self.destination else { return }
        let next = try Self.openTarget(destination)
        target.withLock { $0 = next }
        enabled.store(destination != .off, ordering: .relaxed)
    }

    /// Opens the file again at its path (logrotate renamed the old one); lines written from now
    /// on go to the new file. Returns the path reopened, `nil` when the log is not a file. If the
    /// path cannot be opened this throws and lines keep going to the old file.
    @discardableResult
    public func reopen() throws(OpenError) -> String? {
        guard case .file(let path) = destination else { return nil }
        let next = try Self.openTarget(.file(path))
        target.withLock { $0 = next }
        return path
    }

    /// Writes `bytes` (whole lines): one `write(2)` unless interrupted or short. A failed write
    /// (disk full, stdout closed) drops the lines rather than block or stop the server.
    func write(_ bytes: UnsafeRawBufferPointer) {
        // The reference keeps the descriptor open for this write even if a reopen swaps it out.
        let current = target.withLock { $0 }
        switch current {
        case .standardOutput: writeWhole(bytes, to: STDOUT_FILENO)
        case .file(let log): writeWhole(bytes, to: log.descriptor)
        case .off: break
        }
    }

    private static func openTarget(_ destination: HeadwaterConfiguration.Server.AccessLog) throws(OpenError) -> Target {
        switch destination {
        case .standardOutput: return .standardOutput
        case .off: return .off
        case .file(let path):
            // O_APPEND: every write lands at the end, also after logrotate's copytruncate or a
            // second writer; the kernel never interleaves two writes' bytes.
            let descriptor = path.withCString { open($0, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640) }
            guard descriptor >= 0 else { throw OpenError(path: path, reason: String(cString: strerror(errno))) }
            return .file(OpenLog(path: path, descriptor: descriptor))
        }
    }
}

/// Writes all of `bytes` to `descriptor`: one `write(2)` unless interrupted or short; gives up on
/// an error (the lines are dropped). Also the server's own log's writer (standard error).
package func writeWhole(_ bytes: UnsafeRawBufferPointer, to descriptor: CInt) {
    guard let base = bytes.baseAddress else { return }
    var offset = 0
    while offset < bytes.count {
        let written = write(descriptor, base + offset, bytes.count - offset)
        if written > 0 {
            offset += written
        } else if written < 0 && errno == EINTR {
            continue
        } else {
            return
        }
    }
}
