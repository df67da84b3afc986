public import Logging

/// Writes each access-log message (one combined-log-format line per request) as it is, without the
/// timestamp, level and metadata prefix of the ordinary log on standard error, so log tools read
/// it directly: to its ``AccessLogOutput`` (`server.access_log`: standard output, a file, or
/// nowhere). For the ``OriginServer/accessLogLabel`` logger.
///
/// The server recognises this handler and writes its lines straight from bytes to the output,
/// skipping the metadata it would ignore (the access log is on every request's path); any other
/// handler gets the line and the metadata through `Logger` as usual.
public struct AccessLogLineHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    /// Where the lines go; shared, so a reopen or a reload reaches every logger made with it.
    public let output: AccessLogOutput

    public init(output: AccessLogOutput = AccessLogOutput()) {
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        guard output.isEnabled else { return }
        var line = "\(event.message)\n"
        line.withUTF8 { output.write(UnsafeRawBufferPointer($0)) }
    }
}
