import HeadwaterHTTP
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The server's own log (everything but the access log), on standard error, one `write(2)` per
/// line. On a terminal a line reads as swift-log's `StreamLogHandler` writes it:
///
/// ```
/// 2026-11-27T11:09:55+0000 info headwater : address=http://127.0.0.1:8080 [headwater] listening
/// ```
///
/// When standard error is the journal (``JournalStream``) each line starts with its syslog
/// priority instead of the time, which the journal records itself (`<6>info headwater : … listening`),
/// as sd-daemon(3) describes, so `journalctl -p err` finds errors and `-p warning` warnings.
///
/// Each call site may write ``LogRateLimit/burst`` lines per ``LogRateLimit/window``; further
/// lines from it are counted, and the count is written (one warning) with the first line logged
/// after that window, from whichever call site. A log call that some request or upload can
/// trigger (a missing file, a refused stitch) then cannot flood the journal, whose per-service
/// rate limit would drop every line after it, errors included.
struct StandardErrorLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .info
    let label: String
    /// Lines carry `<N>` priorities (standard error is the journal).
    let journal: Bool
    let limit: LogRateLimit

    init(label: String, journal: Bool, limit: LogRateLimit) {
        self.label = label
        self.journal = journal
        self.limit = limit
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let site = LogRateLimit.Site(file: event.file, line: event.line)
        let (admitted, dropped) = limit.admit(site, now: .now)
        var text = ""
        for (other, count) in dropped {
            text += Self.line(
                level: .warning, label: label, metadata: [:], source: event.source,
                message: "\(count) more lines from \(other.file):\(other.line) were dropped "
                    + "(log rate limit: \(limit.burst) per call site per \(limit.window))",
                journal: journal)
        }
        if admitted {
            var fields = metadata
            if let provided = metadataProvider?.get() { fields.merge(provided) { $1 } }
            if let explicit = event.metadata { fields.merge(explicit) { $1 } }
            if let error = event.error {
                fields["error.message"] = "\(error)"
                fields["error.type"] = "\(String(reflecting: type(of: error)))"
            }
            text += Self.line(
                level: event.level, label: label, metadata: fields, source: event.source, message: "\(event.message)",
                journal: journal)
        }
        guard !text.isEmpty else { return }
        text.withUTF8 { writeWhole(UnsafeRawBufferPointer($0), to: STDERR_FILENO) }  // standard error closed: dropped
    }

    /// One line (with its line feed), as ``log(event:)`` writes it. A message of several lines
    /// gets the priority on each, since the journal reads each line as an entry of its own.
    static func line(
        level: Logger.Level, label: String, metadata: Logger.Metadata, source: String, message: String, journal: Bool
    ) -> String {
        let fields = metadata.isEmpty ? "" : " " + metadata.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
        let body = "\(level) \(label) :\(fields) [\(source)] \(message)"
        guard journal else { return "\(timestamp()) \(body)\n" }
        let prefix = "<\(priority(of: level))>"
        return prefix + body.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n" + prefix) + "\n"
    }

    /// The syslog priority of `level` (sd-daemon(3): `<3>` error … `<7>` debug).
    static func priority(of level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Local time as `StreamLogHandler` writes it (`2026-11-27T11:09:55+0000`).
    private static func timestamp() -> String {
        var now = time(nil)
        var local = tm()
        guard localtime_r(&now, &local) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Whether standard error is connected to the journal: `JOURNAL_STREAM` (set by systemd for a
/// service whose output goes to the journal) names the device and inode of that stream, and
/// they are those of file descriptor 2 (sd_journal_stream_fd(3), systemd.exec(5)). Comparing them,
/// not just seeing the variable, keeps a child whose standard error was redirected (a terminal,
/// a file) from writing priorities there.
enum JournalStream {
    static func isStandardError(environment value: String?) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(STDERR_FILENO, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }
}

/// Per call site, at most ``burst`` lines per ``window``; shared by every logger of the process.
final class LogRateLimit: Sendable {
    struct Site: Hashable, Sendable {
        let file: String
        let line: UInt
    }

    private struct Window {
        var start: ContinuousClock.Instant
        var written = 0
        var dropped = 0
    }

    let burst: Int
    let window: Duration
    private let windows = Mutex<[Site: Window]>([:])

    init(burst: Int = 20, window: Duration = .seconds(10)) {
        self.burst = burst
        self.window = window
    }

    /// Whether `site` may write a line now (`false` once it wrote its ``burst`` in its current
    /// window: the line is counted instead), and the sites whose window with dropped lines has
    /// ended, with how many they dropped: reported with this line, whichever site it comes from,
    /// so a call site that goes quiet still has its count told when anything logs again.
    func admit(_ site: Site, now: ContinuousClock.Instant) -> (admitted: Bool, dropped: [(Site, Int)]) {
        windows.withLock { windows in
            var dropped: [(Site, Int)] = []
            for (other, state) in windows where state.dropped > 0 && now - state.start >= window {
                dropped.append((other, state.dropped))
                windows[other] = nil
            }
            var current = windows[site].flatMap { now - $0.start < window ? $0 : nil } ?? Window(start: now)
            defer { windows[site] = current }
            guard current.written < burst else {
                current.dropped += 1
                return (false, dropped)
            }
            current.written += 1
            return (true, dropped)
        }
    }
}
