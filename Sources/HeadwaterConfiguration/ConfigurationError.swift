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

        /// One line whatever the file held: a line break inside a quoted value (a multi-line YAML
        /// scalar) is written as `\n` (or `\u{…}`), so editors and log readers see one problem a line.
        public var description: String {
            let location = line.map { "\(file):\($0)" } ?? file
            let text = keyPath.isEmpty ? "\(location): \(message)" : "\(location): \(keyPath): \(message)"
            guard text.contains(where: \.isNewline) else { return text }
            return String(text.unicodeScalars.flatMap { scalar -> String.UnicodeScalarView in
                guard Character(scalar).isNewline else { return String.UnicodeScalarView([scalar]) }
                return (scalar == "\n" ? "\\n" : scalar == "\r" ? "\\r" : "\\u{\(String(scalar.value, radix: 16))}").unicodeScalars
            }.map(Character.init))
        }
    }

    public var problems: [Problem]

    public init(problems: [Problem]) { self.problems = problems }

    public var description: String { problems.map(\.description).joined(separator: "\n") }

    /// `EX_CONFIG` from sysexits.h: systemd's `RestartPreventExitStatus=78` keeps a typo from crash-looping.
    public static let exitStatus: Int32 = 78
}
