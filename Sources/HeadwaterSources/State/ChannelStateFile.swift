import Foundation
import HeadwaterLiveWindow
import HeadwaterStitching

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a durable channel keeps beside its store directory `{state}/{source}/{channel}/`:
/// `{state}/{source}/{channel}.window.json`, its live window (``WindowRecord``) and its ad breaks
/// (``BreakTrackerRecord``), with the format version first. (Beside, not inside: the store holds
/// segment files only.)
///
/// ```json
/// {"version": 1, "window": {…}, "breaks": {…}}
/// ```
///
/// It is replaced whole after every published version: written to `….window.json.tmp`, flushed
/// to disk, renamed over `….window.json`, and the directory flushed, so that a crash or a power
/// cut leaves either the previous file or the new one, never a torn one. A file that does not decode,
/// or states a version this build does not read, is reported and the channel starts empty: it is
/// never half-restored, and Headwater never fails to start over it.
struct ChannelStateFile: Sendable, Codable {
    /// The format this build writes and reads.
    static let formatVersion = 1
    /// Appended to the channel's store directory.
    static let suffix = ".window.json"
    /// Largest file read: a window is a few hundred KiB at most.
    static let maximumBytes = 64 << 20

    var version: Int
    var window: WindowRecord
    var breaks: BreakTrackerRecord?

    init(window: WindowRecord, breaks: BreakTrackerRecord?) {
        self.version = Self.formatVersion
        self.window = window
        self.breaks = breaks
    }

    /// Why a saved file was not used.
    struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Only the version, read before the rest: a future format may change everything else.
    private struct VersionField: Decodable {
        var version: Int?
    }

    /// The file's JSON.
    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }

    /// Decodes `bytes`, checking the version first.
    static func decode(_ bytes: Data) throws(Problem) -> ChannelStateFile {
        let decoder = JSONDecoder()
        let stated: Int?
        do { stated = try decoder.decode(VersionField.self, from: bytes).version } catch {
            throw Problem(message: "it is not JSON (a torn or foreign file): \(Self.reason(error))")
        }
        guard let stated else { throw Problem(message: "it states no format version") }
        guard stated == formatVersion else {
            throw Problem(message: "it is format version \(stated); this build reads version \(formatVersion)")
        }
        do { return try decoder.decode(ChannelStateFile.self, from: bytes) } catch {
            throw Problem(message: "it does not decode as version \(formatVersion): \(Self.reason(error))")
        }
    }

    /// One line for a decoding error: what and where.
    private static func reason(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .dataCorrupted(let context): "corrupted at \(path(context)): \(context.debugDescription)"
        case .keyNotFound(let key, let context): "\(path(context))\(key.stringValue) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            "\(path(context)): \(context.debugDescription)"
        default: "\(error)"
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }

    // MARK: Files

    /// The file of the channel whose store directory is `directory`.
    static func path(of directory: String) -> String {
        (directory.hasSuffix("/") ? String(directory.dropLast()) : directory) + suffix
    }

    /// The saved state of the channel whose store directory is `directory`, `nil` when there is none.
    ///
    /// - Throws: ``Problem`` for a file that is there but cannot be used.
    static func read(from directory: String) throws(Problem) -> ChannelStateFile? {
        let path = path(of: directory)
        guard SegmentStorage.exists(path) else { return nil }
        guard let bytes = SegmentStorage.contents(of: path, limit: maximumBytes + 1) else {
            throw Problem(message: "it cannot be read: \(SegmentStorage.errorText())")
        }
        guard bytes.count <= maximumBytes else { throw Problem(message: "it is larger than \(maximumBytes) bytes") }
        return try decode(Data(bytes))
    }

    /// Replaces the file of the channel whose store directory is `directory` with `bytes`,
    /// atomically and durably.
    static func write(_ bytes: Data, to directory: String) throws(Problem) {
        let final = path(of: directory)
        let temporary = final + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Problem(message: "cannot create \(temporary): \(SegmentStorage.errorText())") }
        var failure: String?
        if !bytes.withUnsafeBytes({ writeAll(fd, $0) }) {
            failure = "cannot write \(temporary): \(SegmentStorage.errorText())"
        }
        if failure == nil, fsync(fd) != 0 { failure = "cannot flush \(temporary): \(SegmentStorage.errorText())" }
        close(fd)
        if let failure {
            unlink(temporary)
            throw Problem(message: failure)
        }
        guard rename(temporary, final) == 0 else {
            let message = "cannot rename \(temporary): \(SegmentStorage.errorText())"
            unlink(temporary)
            throw Problem(message: message)
        }
        // The rename itself must reach the disk, or a power cut may bring the old file back.
        let parent = final.lastIndex(of: "/").map { String(final[..<$0]) } ?? "."
        let directoryFD = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// Removes the saved state of the channel whose store directory is `directory` (the channel is
    /// gone), and a copy left half-written.
    static func remove(from directory: String) {
        unlink(path(of: directory))
        removeHalfWritten(of: directory)
    }

    /// Removes a copy left half-written by a crash during ``write(_:to:)``.
    static func removeHalfWritten(of directory: String) {
        unlink(path(of: directory) + ".tmp")
    }

    /// Whether `file` is all there: a regular file of its recorded length (an upload is renamed
    /// into place only once complete, so a shorter one was torn by a crash of the machine).
    static func isIntact(_ file: SegmentFile) -> Bool {
        guard let status = SegmentStorage.status(of: file.path) else { return false }
        return status.isRegularFile && status.size == file.length
    }
}

/// Writes all of `bytes` to `fd` (short writes and `EINTR` retried); `false` with `errno` set on failure.
private func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            return false
        }
        offset += written
    }
    return true
}
