import Logging
import NIOCore

/// One event loop's access log. With the server's own access log (``AccessLogLineHandler``, at
/// `info`), lines are gathered and written to its ``AccessLogOutput`` once per turn of the loop: one
/// `write(2)` for all the requests answered on one wake-up, as nginx's `access_log … buffer=`
/// does, instead of one per request. A line waits microseconds, not a timer: the write is queued
/// on the loop when its first line comes, and runs after the loop has handled the I/O it woke for.
/// With any other handler (a test's, or an operator's log backend) each line goes to the `Logger`
/// with its metadata, as it comes.
///
/// Per request this writes the line's bytes into one buffer that keeps its capacity: formatting
/// into a new array for each line was about a tenth of a range request's user time (`perf`), and
/// each line had a `write(2)` of its own.
final class AccessLogLines {
    /// Lines are written at once when this many bytes are waiting (a loop answering thousands of
    /// requests on one wake-up).
    static let flushThreshold = 32 * 1024

    private let logger: Logger
    private let eventLoop: any EventLoop
    /// Lines go to ``output`` from ``buffer``, not through `logger`.
    private let direct: Bool
    /// The server's own access log's destination (`off` is checked per request), if `direct`.
    private let output: AccessLogOutput?
    /// `logger` takes `info` lines (read once: a request's line should not copy the handler to ask).
    private let logsInfo: Bool
    /// Writes whole lines (to ``output``, but in tests).
    private let write: (UnsafeRawBufferPointer) -> Void
    private var buffer: [UInt8] = []
    private var flushQueued = false

    /// - Parameter write: where whole lines go instead of the handler's output (tests).
    init(logger: Logger, eventLoop: any EventLoop, write: ((UnsafeRawBufferPointer) -> Void)? = nil) {
        self.logger = logger
        self.eventLoop = eventLoop
        let output = (logger.handler as? AccessLogLineHandler)?.output
        self.output = output
        self.write = write ?? { bytes in output?.write(bytes) }
        direct = output != nil
        logsInfo = logger.logLevel <= .info
        if direct { buffer.reserveCapacity(Self.flushThreshold + 4096) }
    }

    /// Whether a line logged now would be written anywhere (`false` with `server.access_log: off`
    /// or a logger above `info`), so a caller can skip what only the line needs.
    var isEnabled: Bool { logsInfo && output?.isEnabled != false }

    /// Logs `entry`'s line, finished at `finished`. Call on the loop this belongs to.
    /// - Parameter time: ``AccessLogEntry/commonLogTime(unixSeconds:)`` of the entry's `receivedAt`.
    func log(_ entry: AccessLogEntry, error: (any Error)?, time: String, finished: NIODeadline) {
        guard direct else {
            entry.log(to: logger, error: error, time: time, finished: finished)
            return
        }
        guard isEnabled else { return }
        entry.appendLine(to: &buffer, duration: (finished - entry.started).nanoseconds / 1000, time: time)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= Self.flushThreshold {
            flush()
        } else if !flushQueued {
            flushQueued = true
            eventLoop.assumeIsolated().execute { self.flush() }
        }
    }

    /// Writes the waiting lines now.
    func flush() {
        flushQueued = false
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { write($0) }
        buffer.removeAll(keepingCapacity: true)
    }
}

@available(*, unavailable)
extension AccessLogLines: Sendable {}
