public import Logging
import Synchronization

/// Collects log records, for tests of what is logged (the access log; problems logged once per
/// state change).
public final class LogRecorder: Sendable {
    public struct Record: Sendable {
        public let level: Logger.Level
        public let message: String
        public let metadata: [String: String]
    }

    let records = Mutex<[Record]>([])

    public init() {}

    /// A logger whose records land here.
    public var logger: Logger {
        Logger(label: "test") { _ in Handler(recorder: self) }
    }

    public var snapshot: [Record] { records.withLock { $0 } }

    /// Records at `level` or above whose message contains `text`.
    public func count(_ text: String, atLeast level: Logger.Level = .trace) -> Int {
        snapshot.filter { $0.level >= level && $0.message.contains(text) }.count
    }

    /// Every record as `level: message`, for failure messages.
    public var lines: [String] { snapshot.map { "\($0.level): \($0.message)" } }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var merged = metadata
            if let more = event.metadata { merged.merge(more) { $1 } }
            let record = Record(
                level: event.level,
                message: "\(event.message)",
                metadata: merged.mapValues { "\($0)" }
            )
            recorder.records.withLock { $0.append(record) }
        }
    }
}
