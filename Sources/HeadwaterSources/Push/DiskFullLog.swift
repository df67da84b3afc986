import HeadwaterLiveWindow
import Logging
import NIOConcurrencyHelpers

/// Tells the operator that uploads are refused because the state directory's file system is full
/// (``IngestCounters/Reason/diskFull``, answered 507): an error line at the first refusal, then at
/// most one per ``interval``, each saying how many were refused since the line before. An encoder
/// retries every segment several times a second per rendition, so a line per refusal would flood
/// the log (and, with the journal on the same disk, fill it further); one line per interval keeps
/// the condition visible as long as it lasts. The metric counts every refusal.
final class DiskFullLog: Sendable {
    /// The shortest time between two lines, µs.
    static let interval: Int64 = 10_000_000
    private let throttle = NIOLockedValueBox(LogThrottle(interval: DiskFullLog.interval))

    /// Logs `refusal` if it is a disk-full one and a line is due at `now` (µs).
    func record(_ refusal: IngestRefusal, channel: String?, stateDirectory: String, logger: Logger, now: Int64) {
        guard refusal.reason == .diskFull, let count = throttle.withLockedValue({ $0.event(at: now) }) else { return }
        let since = count == 1 ? "" : "; \(count) uploads refused since the last line"
        logger.error(
            "ingest refused: \(refusal.message)\(since); free space in \(stateDirectory) and ingest resumes by itself",
            metadata: [
                "hls.channel.id": "\(channel ?? "-")", "headwater.state_directory": "\(stateDirectory)",
                "headwater.refused": "\(count)",
            ])
    }
}

/// When a repeated event deserves a log line: the first one, then the first one at least
/// `interval` after the previous line, which reports the events held back since. A value: the
/// caller keeps it (under a lock) and supplies the clock.
package struct LogThrottle: Sendable, Hashable {
    /// The shortest time between two lines, in the caller's clock unit.
    package let interval: Int64
    private var lastLine: Int64?
    private var heldBack = 0

    package init(interval: Int64) { self.interval = interval }

    /// An event at `now`: the number of events the line written now should report (this one and
    /// those held back since the last line), or `nil` when no line is due.
    package mutating func event(at now: Int64) -> Int? {
        if let lastLine, now - lastLine < interval {
            heldBack += 1
            return nil
        }
        let count = heldBack + 1
        lastLine = now
        heldBack = 0
        return count
    }
}
