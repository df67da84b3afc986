package import HeadwaterLiveWindow
package import HeadwaterMedia

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few POSIX calls the segment store needs (push, directory and pull sources): directories,
/// exclusive create, write, rename, hard links, stat, unlink. (No fsync of segments: after a crash
/// of the machine a restored window checks each file's size and does not serve a torn one,
/// ``ChannelStateFile/isIntact(_:)``; the saved window itself is flushed, ``ChannelStateFile``.)
package enum SegmentStorage {
    static func errorText() -> String { String(cString: strerror(errno)) }

    /// `mkdir -p`.
    static func makeDirectory(_ path: String) throws(IngestRefusal) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0, errno != EEXIST {
                throw storage("cannot create directory \(current): \(errorText())")
            }
        }
    }

    /// A fresh private directory under `$TMPDIR` (or `/tmp`).
    static func makeTemporaryDirectory() throws(IngestRefusal) -> String {
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
    package static func create(_ path: String) throws(IngestRefusal) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw writeFailure(errno: errno, "cannot create \(path)") }
        return fd
    }

    /// Writes all of `bytes` (retrying short writes and `EINTR`).
    ///
    /// - Throws: disk full (507) for `ENOSPC`/`EDQUOT`, else a storage failure (500).
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(IngestRefusal) {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                throw writeFailure(errno: code, "write failed")
            }
            offset += written
        }
    }

    package static func move(_ from: String, to: String) throws(IngestRefusal) {
        guard rename(from, to) == 0 else { throw writeFailure(errno: errno, "cannot rename \(from)") }
    }

    package static func remove(_ path: String) { unlink(path) }

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
    /// `directory` (a channel's store that goes). Anything else an operator put there is left alone.
    static func removeOwnFiles(in directory: String) {
        for name in names(in: directory) ?? [] where isOwnFileName(name) { unlink(directory + "/" + name) }
    }

    /// The names in `directory` (without `.` and `..`), or `nil` if it cannot be read.
    static func names(in directory: String) -> [String]? {
        guard let handle = opendir(directory) else { return nil }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// What `stat(2)` says about a file: enough to tell one version of it from another.
    struct FileStatus: Sendable, Hashable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        /// Modification time, ns since the epoch.
        var modified: Int64
        var isDirectory: Bool
        var isRegularFile: Bool
    }

    /// `stat(2)` of `path` (following symbolic links), or `nil` when it does not exist.
    static func status(of path: String) -> FileStatus? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let kind = info.st_mode & S_IFMT
        return FileStatus(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
            isDirectory: kind == S_IFDIR, isRegularFile: kind == S_IFREG)
    }

    /// Puts the bytes of `source` at `destination` (which must not exist): a hard link when both are
    /// on one file system, else a copy written to `destination.part` and renamed into place.
    static func linkOrCopy(_ source: String, to destination: String) throws(IngestRefusal) {
        if link(source, destination) == 0 { return }
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw storage("cannot open \(source): \(errorText())") }
        defer { close(input) }
        let temporary = destination + ".part"
        let output = try create(temporary)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        do throws(IngestRefusal) {
            while true {
                let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress!, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count < 0 { throw storage("cannot read \(source): \(errorText())") }
                if count == 0 { break }
                let written = chunk.withUnsafeBytes { raw in
                    Result { () throws(IngestRefusal) in try writeAll(output, UnsafeRawBufferPointer(rebasing: raw[..<count])) }
                }
                try written.get()
            }
            close(output)
            try move(temporary, to: destination)
        } catch {
            close(output)
            unlink(temporary)
            throw error
        }
    }

    /// Codecs, resolution and frame rate of a stored MPEG-TS or packed-audio segment (probed from
    /// at most its first `limit` bytes), for the generated multivariant playlist; `nil` for other
    /// types or media that does not probe.
    package static func probe(_ path: String, extension ext: String, limit: Int) -> SegmentProbe? {
        inspect(path, extension: ext, limit: limit).probe
    }

    /// ``probe(_:extension:limit:)`` and, for MPEG-TS with video, where its first key frame lies
    /// (for I-frame playlists), from one read of the stored file.
    package static func inspect(
        _ path: String, extension ext: String, limit: Int
    ) -> (probe: SegmentProbe?, keyFrame: KeyFrameLocation?) {
        guard ext == "ts" || ext == "aac", var bytes = contents(of: path, limit: limit) else { return (nil, nil) }
        if bytes.count > limit { bytes.removeLast(bytes.count - limit) }
        guard ext == "ts" else { return (try? PackedAudioProbe.probe(bytes), nil) }
        bytes.removeLast(bytes.count % TransportStreamProbe.packetSize)
        guard let probe = try? TransportStreamProbe.probe(bytes) else { return (nil, nil) }
        return (probe, KeyFrameLocation(transportStream: bytes, probe: probe))
    }

    static func isOwnFileName(_ name: String) -> Bool {
        var base = Substring(name)
        if base.hasSuffix(".part") { base = base.dropLast(5) }
        guard let dash = base.firstIndex(of: "-"), let dot = base.lastIndex(of: "."), dash < dot else { return false }
        let number = base[base.index(after: dash)..<dot]
        let ext = base[base.index(after: dot)...]
        return !number.isEmpty && number.allSatisfy(\.isNumber) && IngestPath.segmentExtensions.contains(String(ext))
    }

    package static func storage(_ message: String) -> IngestRefusal { IngestRefusal(message, reason: .storage) }
}
