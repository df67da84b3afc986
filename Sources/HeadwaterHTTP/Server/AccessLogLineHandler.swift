public import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes each access-log message (one combined-log-format line per request) to standard output
/// as it is, without the timestamp, level and metadata prefix of the ordinary log on standard
/// error, so log tools read it directly. For the ``OriginServer/accessLogLabel`` logger.
///
/// The server recognises this handler and writes its lines straight from bytes, skipping the
/// metadata it would ignore (the access log is on every request's path); any other handler gets
/// the line and the metadata through `Logger` as usual.
public struct AccessLogLineHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info

    public init() {}

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = "\(event.message)\n"
        line.withUTF8 { Self.emit(UnsafeRawBufferPointer($0)) }
    }

    /// Writes `bytes` (whole lines) to standard output: one `write(2)` unless interrupted or short.
    static func emit(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = write(STDOUT_FILENO, base + offset, bytes.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return  // stdout closed or full: drop the line rather than block the server
            }
        }
    }
}
