/// Everything wrong with a configuration file, each problem as `file:line: key.path: message` —
/// the form editors and `headwater check-config` print, and what the server logs when it refuses a
/// config at start (exit status 78, EX_CONFIG) or on reload.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        public var file: String
        /// 1-based line, when known.
        public var line: Int?
        /// Dotted key path, e.g. `channels.demo.window`.
        public var keyPath: String
        public var message: String

        public init(file: String, line: Int?, keyPath: String, message: String) {
            self.file = file
            self.line = line
            self.keyPath = keyPath
            self.message = message
        }

        public var description: String {
            let location = line.map { "\(file):\($0)" } ?? file
            return keyPath.isEmpty ? "\(location): \(message)" : "\(location): \(keyPath): \(message)"
        }
    }

    public var problems: [Problem]

    public init(problems: [Problem]) { self.problems = problems }

    public var description: String { problems.map(\.description).joined(separator: "\n") }

    /// `EX_CONFIG` from sysexits.h: systemd's `RestartPreventExitStatus=78` keeps a typo from crash-looping.
    public static let exitStatus: Int32 = 78
}
