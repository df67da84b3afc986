/// An open file that several responses may be sending at once (each by `sendfile` at its own
/// offset, so they share no file position), closed when it is no longer kept (``drop()``) and the
/// last response sending it is done.
///
/// ``PreencodedFileHeads`` keeps the hot files' descriptors this way, so a request for a segment
/// or static file it knows costs one `fstat(2)` instead of `open`, `fstat` and `close`: about 5% of
/// a 188 KiB range request's CPU went to opening and closing (`perf`, kernel and user). A file not
/// kept is one of these too, dropped from the start: closed when its one response is done.
/// Confined to one event loop, like the cache and the handler that use it.
final class SharedFile {
    let file: OpenFile
    /// Responses that have not finished sending it.
    private var users = 0
    /// The cache still holds it.
    private(set) var isKept: Bool
    private var closed = false
    /// For a kept static file, the second it was opened in (it is opened again by path in a new
    /// second, so a file replaced under another name is noticed within a second).
    let openedSecond: Int64

    init(_ file: OpenFile, kept: Bool, openedSecond: Int64) {
        self.file = file
        self.isKept = kept
        self.openedSecond = openedSecond
    }

    /// Counts a response that will send it; pair with ``done()``.
    func use() -> SharedFile {
        users += 1
        return self
    }

    /// A response that was sending it is done with it.
    func done() {
        precondition(users > 0, "a SharedFile finished more often than used")
        users -= 1
        closeIfUnused()
    }

    /// The cache no longer holds it: closed now, or when the last response sending it is done.
    func drop() {
        isKept = false
        closeIfUnused()
    }

    private func closeIfUnused() {
        if !isKept && users == 0 && !closed {
            closed = true
            file.close()
        }
    }
}

@available(*, unavailable)
extension SharedFile: Sendable {}
