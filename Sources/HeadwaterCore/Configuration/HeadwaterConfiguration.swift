import Yams

/// The server's configuration: `Config/headwater.yaml` (every key is documented in
/// `Config/README.md`). Relative paths are resolved against the directory of the config file.
public struct HeadwaterConfiguration: Sendable, Hashable {
    public struct Server: Sendable, Hashable {
        /// `server.listen` (string, optional, default `127.0.0.1:8080`): address and port to listen on.
        public var host: String = "127.0.0.1"
        public var port: Int = 8080
        /// `server.public` (path, optional): static root served at `/` (status page, demo media, ads).
        public var publicDirectory: String?
        /// `server.cors` (bool, optional, default false): send `Access-Control-Allow-Origin: *`.
        public var cors: Bool = false
        /// `server.state` (path, optional): where pushed segments are stored while they are listed or
        /// still fetchable. `nil` means a fresh temporary directory per process: pushed media is
        /// only useful while its channel is live, so nothing needs to survive a restart.
        public var stateDirectory: String?

        public init() {}
    }

    /// A live channel.
    public struct Channel: Sendable, Hashable {
        public enum Source: Sendable, Hashable {
            /// `source.type: loop`: a VOD HLS package played as a live channel forever.
            case loop(package: String)
            /// `source.type: push`: an encoder uploads segments and playlists to `/ingest/{channel}/…`.
            case push(PushSource)
        }

        /// The keys of a push source (`source.type: push`).
        public struct PushSource: Sendable, Hashable {
            /// `source.token_env` (string, optional, default `HEADWATER_INGEST_TOKEN`): the environment
            /// variable holding the bearer token encoders must send. The token itself never goes in
            /// a config file (they end up in repositories and bug reports).
            public var tokenEnvironmentVariable: String
            /// `source.target_duration` (integer seconds, 1–60, optional, default 6): the channel's
            /// fixed EXT-X-TARGETDURATION. It never changes (B2), whatever the encoder sends.
            public var targetDuration: Int
            /// `source.max_upload_bytes` (integer, optional, default 64 MiB): the largest accepted upload.
            public var maxUploadBytes: Int

            public static let defaultTokenEnvironmentVariable = "HEADWATER_INGEST_TOKEN"

            public init(
                tokenEnvironmentVariable: String = PushSource.defaultTokenEnvironmentVariable, targetDuration: Int = 6,
                maxUploadBytes: Int = 64 << 20
            ) {
                self.tokenEnvironmentVariable = tokenEnvironmentVariable
                self.targetDuration = targetDuration
                self.maxUploadBytes = maxUploadBytes
            }
        }

        /// The key under `channels`, used in URLs (`/live/{name}/…`).
        public var name: String
        public var source: Source
        /// `window` (integer seconds, optional, default 30): media time listed in each live playlist.
        /// The effective window is never shorter than 3 target durations plus one segment (C5, C16).
        public var windowSeconds: Int

        public init(name: String, source: Source, windowSeconds: Int = 30) {
            self.name = name
            self.source = source
            self.windowSeconds = windowSeconds
        }
    }

    public var server = Server()
    public var channels: [Channel] = []

    public init() {}

    /// Parses and validates `text` (the contents of `file`); relative paths resolve against
    /// `baseDirectory`. Throws every problem found at once.
    public static func parse(_ text: String, file: String, baseDirectory: String) throws(ConfigurationError) -> HeadwaterConfiguration {
        var reader = YAMLReader(file: file)
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw ConfigurationError(problems: [.init(file: file, line: Self.line(of: error), keyPath: "", message: "not valid YAML: \(Self.summary(of: error))")])
        } catch {
            throw ConfigurationError(problems: [.init(file: file, line: nil, keyPath: "", message: "not valid YAML: \(error)")])
        }
        var configuration = HeadwaterConfiguration()
        guard let root else {
            throw ConfigurationError(problems: [.init(file: file, line: nil, keyPath: "", message: "the file is empty")])
        }
        var sawChannels = false
        for (key, value, _) in reader.mapping(root, "", allowed: ["server", "channels"]) {
            switch key {
            case "server":
                configuration.server = parseServer(value, reader: &reader, baseDirectory: baseDirectory)
            case "channels":
                sawChannels = true
                for (name, channelNode, keyNode) in reader.mapping(value, "channels") {
                    if !Self.isValidName(name) {
                        reader.fail(keyNode, "channels.\(name)", "channel names are letters, digits, '-' and '_' (they appear in URLs)")
                        continue
                    }
                    if let channel = parseChannel(name, channelNode, reader: &reader, baseDirectory: baseDirectory) {
                        configuration.channels.append(channel)
                    }
                }
            default:
                break
            }
        }
        if !sawChannels { reader.fail(root, "channels", "required: at least one channel") }
        if !reader.problems.isEmpty { throw ConfigurationError(problems: reader.problems) }
        return configuration
    }

    private static func parseServer(_ node: Node, reader: inout YAMLReader, baseDirectory: String) -> Server {
        var server = Server()
        for (key, value, _) in reader.mapping(node, "server", allowed: ["listen", "public", "cors", "state"]) {
            let path = "server.\(key)"
            switch key {
            case "listen":
                guard let text = reader.string(value, path) else { continue }
                guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                    (0...65535).contains(port), colon > text.startIndex
                else {
                    reader.fail(value, path, "must be HOST:PORT, e.g. 127.0.0.1:8080 or [::1]:8080, got \"\(text)\"")
                    continue
                }
                var host = String(text[..<colon])
                if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
                server.host = host
                server.port = port
            case "public":
                if let text = reader.string(value, path) { server.publicDirectory = resolve(text, against: baseDirectory) }
            case "cors":
                if let flag = reader.bool(value, path) { server.cors = flag }
            case "state":
                if let text = reader.string(value, path) { server.stateDirectory = resolve(text, against: baseDirectory) }
            default:
                break
            }
        }
        return server
    }

    private static func parseChannel(_ name: String, _ node: Node, reader: inout YAMLReader, baseDirectory: String) -> Channel? {
        let base = "channels.\(name)"
        var source: Channel.Source?
        var window = 30
        var sawSource = false
        for (key, value, _) in reader.mapping(node, base, allowed: ["source", "window"]) {
            switch key {
            case "source":
                sawSource = true
                source = parseSource(value, path: "\(base).source", reader: &reader, baseDirectory: baseDirectory)
            case "window":
                if let seconds = reader.integer(value, "\(base).window", in: 6...86_400) { window = seconds }
            default:
                break
            }
        }
        if !sawSource { reader.fail(node, "\(base).source", "required: where the channel's media comes from") }
        guard let source else { return nil }
        return Channel(name: name, source: source, windowSeconds: window)
    }

    private static let pushKeys: Set<String> = ["token_env", "target_duration", "max_upload_bytes"]

    private static func parseSource(_ node: Node, path: String, reader: inout YAMLReader, baseDirectory: String) -> Channel.Source? {
        let entries = reader.mapping(node, path, allowed: Set(["type", "package"]).union(pushKeys))
        guard let typeEntry = entries.first(where: { $0.key == "type" }) else {
            reader.fail(node, "\(path).type", "required: loop or push")
            return nil
        }
        guard let type = reader.string(typeEntry.value, "\(path).type") else { return nil }
        /// Keys that belong to the other source type are mistakes, not silently ignored settings.
        func rejectKeys(_ keys: Set<String>, reader: inout YAMLReader) {
            for entry in entries where keys.contains(entry.key) {
                let other = type == "loop" ? "push" : "loop"
                reader.fail(entry.keyNode, "\(path).\(entry.key)", "only applies to a \(other) source")
            }
        }
        switch type {
        case "loop":
            rejectKeys(pushKeys, reader: &reader)
            guard let packageEntry = entries.first(where: { $0.key == "package" }) else {
                reader.fail(node, "\(path).package", "required for a loop source: the VOD multivariant playlist to loop")
                return nil
            }
            guard let package = reader.string(packageEntry.value, "\(path).package") else { return nil }
            return .loop(package: resolve(package, against: baseDirectory))
        case "push":
            rejectKeys(["package"], reader: &reader)
            return .push(parsePushSource(entries, path: path, reader: &reader))
        default:
            reader.fail(typeEntry.value, "\(path).type", "unknown source type \"\(type)\" (expected: loop, push)")
            return nil
        }
    }

    private static func parsePushSource(
        _ entries: [(key: String, value: Node, keyNode: Node)], path: String, reader: inout YAMLReader
    ) -> Channel.PushSource {
        var source = Channel.PushSource()
        for (key, value, _) in entries {
            let keyPath = "\(path).\(key)"
            switch key {
            case "token_env":
                guard let name = reader.string(value, keyPath) else { continue }
                if isEnvironmentVariableName(name) {
                    source.tokenEnvironmentVariable = name
                } else {
                    reader.fail(
                        value, keyPath,
                        "must name an environment variable (letters, digits and '_', not starting with a digit), got \"\(name)\"")
                }
            case "target_duration":
                if let seconds = reader.integer(value, keyPath, in: 1...60) { source.targetDuration = seconds }
            case "max_upload_bytes":
                if let bytes = reader.integer(value, keyPath, in: 1024...(4 << 30)) { source.maxUploadBytes = bytes }
            default:
                break
            }
        }
        return source
    }

    static func isEnvironmentVariableName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(48...57).contains(first) else { return false }
        return name.utf8.allSatisfy { c in
            (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95
        }
    }

    static func resolve(_ path: String, against base: String) -> String {
        if path.hasPrefix("/") || base.isEmpty { return path }
        return base.hasSuffix("/") ? base + path : base + "/" + path
    }

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.utf8.allSatisfy { c in
                (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 45 || c == 95
            }
    }

    private static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _): return mark.line
        default: return nil
        }
    }

    private static func summary(of error: YamlError) -> String {
        switch error {
        case .scanner(_, let problem, _, _), .parser(_, let problem, _, _): return problem
        default: return "\(error)".split(separator: "\n").first.map(String.init) ?? "syntax error"
        }
    }
}
