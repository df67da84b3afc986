import Dispatch
import HeadwaterLiveWindow
import HeadwaterStitching
import Logging
import NIOConcurrencyHelpers

/// Saves a durable channel's state (``ChannelStateFile``) after every version it publishes,
/// without making the publisher wait: the window is handed over as a value (a copy-on-write copy,
/// taken under the channel's lock with the version it published), and encoding, writing and
/// `fsync` happen on the writer's own serial queue. A publisher may be an event loop (push ingest
/// completes uploads there), which must never block on a disk.
///
/// Saves coalesce: while one is written, only the newest version waits (an older one is never
/// written after a newer one), so a burst of versions costs one or two writes, and the file is at
/// most one write (a few milliseconds) behind what was published. A clean stop loses nothing
/// (``flush()``); a crash within those milliseconds of a publish restores the version before it.
///
/// A dispatch queue rather than a task: saving must keep its order and its single writer whatever
/// the caller's executor, and must finish (``flush()``) at shutdown after the services stop.
final class ChannelStateWriter: Sendable {
    /// A published version to save.
    struct Version: Sendable {
        /// Counts the versions made, so that an older one is never saved after a newer one.
        var number: UInt64
        var window: LiveWindow
        /// The channel's ad breaks as published with it.
        var breaks: Breaks
        var savedAt: Int64
    }

    /// The channel's ad breaks.
    enum Breaks: Sendable {
        /// The channel does not stitch ads (or no break tracker was made yet).
        case none
        case tracker(BreakTracker)
        /// Restored from the file and not taken up by a tracker yet: saved again as it was.
        case record(BreakTrackerRecord)
    }

    private struct Queue: Sendable {
        var next: Version?
        /// The number of the newest version taken.
        var newest: UInt64 = 0
        var draining = false
        /// The last write failed: its error, so the log says it once and says when writing works again.
        var failing: String?
    }

    let directory: String
    private let logger: Logger
    private let queue: DispatchQueue
    private let state = NIOLockedValueBox(Queue())

    init(directory: String, channel: String, logger: Logger) {
        self.directory = directory
        self.logger = logger
        self.queue = DispatchQueue(label: "headwater.state.\(channel)")
    }

    /// Saves `version` soon; a version still waiting is replaced by it, and a version older than
    /// one already taken is dropped.
    func save(_ version: Version) {
        let start = state.withLockedValue { state -> Bool in
            guard version.number > max(state.newest, state.next?.number ?? 0) else { return false }
            state.next = version
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if start { queue.async { self.drain() } }
    }

    /// Waits until every version handed over is on disk.
    func flush() {
        queue.sync {}
    }

    private func drain() {
        while let version = state.withLockedValue({ state -> Version? in
            defer { state.next = nil }
            guard let next = state.next else {
                state.draining = false
                return nil
            }
            state.newest = next.number
            return next
        }) {
            write(version)
        }
    }

    private func write(_ version: Version) {
        let breaks: BreakTrackerRecord? =
            switch version.breaks {
            case .none: nil
            case .tracker(let tracker): tracker.record
            case .record(let record): record
            }
        let file = ChannelStateFile(
            window: version.window.record(directory: directory, savedAt: version.savedAt), breaks: breaks)
        var failure: String?
        do {
            try ChannelStateFile.write(try file.encoded(), to: directory)
        } catch let problem as ChannelStateFile.Problem {
            failure = problem.message
        } catch {
            failure = "cannot encode the window: \(error)"
        }
        let previous = state.withLockedValue { state in
            defer { state.failing = failure }
            return state.failing
        }
        if let failure, failure != previous {
            logger.error(
                "cannot save the channel's window; a restart will lose what changed since the last save",
                metadata: ["state.file": "\(ChannelStateFile.path(of: directory))", "error.message": "\(failure)"])
        } else if failure == nil, previous != nil {
            logger.notice("the channel's window is saved again", metadata: ["state.file": "\(ChannelStateFile.path(of: directory))"])
        }
    }
}
