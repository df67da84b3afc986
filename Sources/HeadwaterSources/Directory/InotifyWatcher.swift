#if canImport(Glibc)
import Glibc
#endif

/// Tells a directory source that something changed in its folder or one of its subdirectories,
/// with inotify: a file closed after writing, renamed in or out, created or deleted. What changed
/// is not decoded: any event makes the source rescan (cheap for a packager's few dozen files), so
/// a missed or overflowed event costs latency, never correctness.
///
/// The descriptor is non-blocking and drained by the source's loop every few milliseconds: a
/// blocking wait would hold one of the few cooperative threads. Owned by one task.
final class InotifyWatcher {
    #if canImport(Glibc)
    private let descriptor: Int32
    /// Watched directories (relative to the root; `""` is the root) by watch descriptor.
    private var watched: [String: Int32] = [:]
    private let root: String

    /// `nil` when inotify is unavailable (the source polls then).
    init?(root: String) {
        let fd = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        descriptor = fd
        self.root = root
    }

    deinit { close(descriptor) }

    /// Watches the root and `directories` (relative paths); forgets directories no longer there.
    /// Call after each scan, so subdirectories a packager creates later are watched too.
    func watch(directories: [String]?) {
        guard let directories else {
            watched = [:]  // the root is gone: its watches went with it
            return
        }
        let wanted = Set([""] + directories)
        for gone in watched.keys where !wanted.contains(gone) { watched[gone] = nil }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE)
        for directory in wanted where watched[directory] == nil {
            let path = directory.isEmpty ? root : "\(root)/\(directory)"
            let wd = inotify_add_watch(descriptor, path, mask)
            if wd >= 0 { watched[directory] = wd }
        }
    }

    /// Whether any event arrived since the last call (all pending events are consumed).
    func drain() -> Bool {
        var any = false
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count > 0 {
                any = true
                continue
            }
            if count < 0, errno == EINTR { continue }
            return any
        }
    }
    #else
    init?(root: String) { nil }
    func watch(directories: [String]?) {}
    func drain() -> Bool { false }
    #endif
}
