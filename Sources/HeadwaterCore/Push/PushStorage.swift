#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few POSIX calls push ingest needs: directories, exclusive create, write, rename, unlink.
/// (No fsync: a pushed segment is worthless after a crash, since the window lives in memory.)
enum PushStorage {
    static func errorText() -> String { String(cString: strerror(errno)) }

    /// `mkdir -p`.
    static func makeDirectory(_ path: String) throws(PushError) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0, errno != EEXIST {
                throw storage("cannot create directory \(current): \(errorText())")
            }
        }
    }

    /// A fresh private directory under `$TMPDIR` (or `/tmp`).
    static func makeTemporaryDirectory() throws(PushError) -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template =
            Array((base.hasSuffix("/") ? base : base + "/").utf8CString.dropLast())
            + Array("headwater-XXXXXX".utf8CString)
        guard let result = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw storage("cannot create a temporary state directory in \(base): \(errorText())")
        }
        return String(cString: result)
    }

    /// Opens a new file for writing; fails if it exists.
    static func create(_ path: String) throws(PushError) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw storage("cannot create \(path): \(errorText())") }
        return fd
    }

    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(PushError) {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw storage("write failed: \(errorText())")
            }
            offset += written
        }
    }

    static func move(_ from: String, to: String) throws(PushError) {
        guard rename(from, to) == 0 else { throw storage("cannot rename \(from): \(errorText())") }
    }

    static func remove(_ path: String) { unlink(path) }

    /// Removes an empty directory (and nothing else).
    static func removeDirectory(_ path: String) { rmdir(path) }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The whole file, or `nil`.
    static func contents(of path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return bytes
    }

    /// Removes the files push ingest itself names (`{run}-{n}.{ext}` and their `.part`) from
    /// `directory`: leftovers of an earlier run are unreachable (numbering lives in memory).
    /// Anything else an operator put there is left alone.
    static func removeOwnFiles(in directory: String) {
        guard let handle = opendir(directory) else { return }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if isOwnFileName(name) { names.append(name) }
        }
        for name in names { unlink(directory + "/" + name) }
    }

    static func isOwnFileName(_ name: String) -> Bool {
        var base = Substring(name)
        if base.hasSuffix(".part") { base = base.dropLast(5) }
        guard let dash = base.firstIndex(of: "-"), let dot = base.lastIndex(of: "."), dash < dot else { return false }
        let number = base[base.index(after: dash)..<dot]
        let ext = base[base.index(after: dot)...]
        return !number.isEmpty && number.allSatisfy(\.isNumber) && PushPath.segmentExtensions.contains(String(ext))
    }

    private static func storage(_ message: String) -> PushError { PushError(status: 500, message, reason: .storage) }
}
