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
        /// `server.slate` (path, optional): a VOD multivariant playlist (`Public/slate/master.m3u8`)
        /// whose segments fill a stalled channel (`stall: slate`), matched to each rendition.
        public var slatePackage: String?

        public init() {}
    }

    /// A live channel.
    public struct Channel: Sendable, Hashable {
        public enum Source: Sendable, Hashable {
            /// `source.type: loop`: a VOD HLS package played as a live channel forever.
            case loop(package: String)
            /// `source.type: push`: an encoder uploads segments and playlists to `/ingest/{channel}/…`.
            case push(PushSource)
            /// `source.type: directory`: a local packager writes segments and playlists into a directory.
            case directory(DirectorySource)
            /// `source.type: pull`: Headwater polls an upstream origin's playlists.
            case pull(PullSource)

            /// `loop`, `push`, `directory` or `pull`, as written in the config.
            public var typeName: String {
                switch self {
                case .loop: "loop"
                case .push: "push"
                case .directory: "directory"
                case .pull: "pull"
                }
            }

            /// The channel's fixed EXT-X-TARGETDURATION for the sources that keep their own window.
            public var targetDuration: Int? {
                switch self {
                case .loop: nil
                case .push(let source): source.targetDuration
                case .directory(let source): source.targetDuration
                case .pull(let source): source.targetDuration
                }
            }
        }

        /// What keeps a stalled channel's playlist advancing (`stall`).
        public enum StallFill: String, Sendable, Hashable, CaseIterable {
            /// Slate segments from `server.slate`, then a discontinuity back to the source.
            case slate
            /// `EXT-X-GAP` segments of one target duration.
            case gap
            /// Nothing: the playlist stops advancing (the channel is still marked degraded).
            case none
        }

        /// The keys of a directory source (`source.type: directory`).
        public struct DirectorySource: Sendable, Hashable {
            /// `source.path` (path, required): the directory the packager writes into. Every media
            /// playlist in it (`x_0.m3u8`, `v0/index.m3u8`) is a rendition, as for push; a
            /// multivariant playlist there is used as pushed.
            public var path: String
            /// `source.target_duration` (integer seconds, 1–60, default 6), as for push.
            public var targetDuration: Int
            /// `source.poll_interval_ms` (integer, 50–10000, default 250): how often the directory is
            /// rescanned when inotify is unavailable, and as a safety net when it is.
            public var pollIntervalMilliseconds: Int

            public init(path: String, targetDuration: Int = 6, pollIntervalMilliseconds: Int = 250) {
                self.path = path
                self.targetDuration = targetDuration
                self.pollIntervalMilliseconds = pollIntervalMilliseconds
            }
        }

        /// The keys of a pull source (`source.type: pull`).
        public struct PullSource: Sendable, Hashable {
            public enum Mode: String, Sendable, Hashable, CaseIterable {
                /// Segments are downloaded into the segment store and served by Headwater.
                case fetch
                /// Segments are listed by their absolute upstream URL; only playlists pass through Headwater.
                case reference
            }

            /// `source.url` (http or https URL, required): the upstream multivariant (or media) playlist.
            public var url: String
            /// `source.mode` (`fetch` or `reference`, default `fetch`).
            public var mode: Mode
            /// `source.target_duration` (integer seconds, 1–60, default 6), as for push.
            public var targetDuration: Int
            /// `source.timeout_ms` (integer, 100–60000, default 5000): per upstream request.
            public var timeoutMilliseconds: Int

            public init(url: String, mode: Mode = .fetch, targetDuration: Int = 6, timeoutMilliseconds: Int = 5000) {
                self.url = url
                self.mode = mode
                self.targetDuration = targetDuration
                self.timeoutMilliseconds = timeoutMilliseconds
            }
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
        /// `stall` (`slate`, `gap` or `none`; default `slate` when `server.slate` is set, else `gap`):
        /// how the playlist keeps advancing when the source stalls past 1½ target durations.
        public var stall: StallFill

        public init(name: String, source: Source, windowSeconds: Int = 30, stall: StallFill = .gap) {
            self.name = name
            self.source = source
            self.windowSeconds = windowSeconds
            self.stall = stall
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
        var explicitStall = Set<String>()
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
                    if let channel = parseChannel(
                        name, channelNode, reader: &reader, baseDirectory: baseDirectory, explicitStall: &explicitStall) {
                        configuration.channels.append(channel)
                    }
                }
            default:
                break
            }
        }
        if !sawChannels { reader.fail(root, "channels", "required: at least one channel") }
        if configuration.server.slatePackage != nil {
            for index in configuration.channels.indices where !explicitStall.contains(configuration.channels[index].name) {
                configuration.channels[index].stall = .slate
            }
        }
        if !reader.problems.isEmpty { throw ConfigurationError(problems: reader.problems) }
        return configuration
    }

    private static func parseServer(_ node: Node, reader: inout YAMLReader, baseDirectory: String) -> Server {
        var server = Server()
        for (key, value, _) in reader.mapping(node, "server", allowed: ["listen", "public", "cors", "state", "slate"]) {
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
            case "slate":
                if let text = reader.string(value, path) { server.slatePackage = resolve(text, against: baseDirectory) }
            default:
                break
            }
        }
        return server
    }

    private static func parseChannel(
        _ name: String, _ node: Node, reader: inout YAMLReader, baseDirectory: String, explicitStall: inout Set<String>
    ) -> Channel? {
        let base = "channels.\(name)"
        var source: Channel.Source?
        var window = 30
        var stall: Channel.StallFill?
        var sawSource = false
        for (key, value, _) in reader.mapping(node, base, allowed: ["source", "window", "stall"]) {
            switch key {
            case "source":
                sawSource = true
                source = parseSource(value, path: "\(base).source", reader: &reader, baseDirectory: baseDirectory)
            case "window":
                if let seconds = reader.integer(value, "\(base).window", in: 6...86_400) { window = seconds }
            case "stall":
                guard let text = reader.string(value, "\(base).stall") else { continue }
                if let fill = Channel.StallFill(rawValue: text) {
                    stall = fill
                } else {
                    reader.fail(value, "\(base).stall", "must be slate, gap or none, got \"\(text)\"")
                }
            default:
                break
            }
        }
        if !sawSource { reader.fail(node, "\(base).source", "required: where the channel's media comes from") }
        guard let source else { return nil }
        if stall != nil { explicitStall.insert(name) }
        return Channel(name: name, source: source, windowSeconds: window, stall: stall ?? .gap)
    }

    /// The keys each source type takes besides `type`.
    private static let sourceKeys: [String: Set<String>] = [
        "loop": ["package"],
        "push": ["token_env", "target_duration", "max_upload_bytes"],
        "directory": ["path", "target_duration", "poll_interval_ms"],
        "pull": ["url", "mode", "target_duration", "timeout_ms"],
    ]

    private static func parseSource(_ node: Node, path: String, reader: inout YAMLReader, baseDirectory: String) -> Channel.Source? {
        let allKeys = sourceKeys.values.reduce(into: Set(["type"])) { $0.formUnion($1) }
        let entries = reader.mapping(node, path, allowed: allKeys)
        guard let typeEntry = entries.first(where: { $0.key == "type" }) else {
            reader.fail(node, "\(path).type", "required: loop, push, directory or pull")
            return nil
        }
        guard let type = reader.string(typeEntry.value, "\(path).type") else { return nil }
        guard let ownKeys = sourceKeys[type] else {
            reader.fail(typeEntry.value, "\(path).type", "unknown source type \"\(type)\" (expected: loop, push, directory, pull)")
            return nil
        }
        // Keys that belong to another source type are mistakes, not silently ignored settings.
        for entry in entries where entry.key != "type" && !ownKeys.contains(entry.key) {
            let owners = sourceKeys.filter { $0.value.contains(entry.key) }.keys.sorted().joined(separator: " or ")
            reader.fail(entry.keyNode, "\(path).\(entry.key)", "only applies to a \(owners) source, not \(type)")
        }
        func required(_ key: String, _ what: String) -> (node: Node, text: String)? {
            guard let entry = entries.first(where: { $0.key == key }) else {
                reader.fail(node, "\(path).\(key)", "required for a \(type) source: \(what)")
                return nil
            }
            return reader.string(entry.value, "\(path).\(key)").map { (entry.value, $0) }
        }
        func integer(_ key: String, in range: ClosedRange<Int>) -> Int? {
            entries.first(where: { $0.key == key }).flatMap { reader.integer($0.value, "\(path).\(key)", in: range) }
        }
        switch type {
        case "loop":
            guard let package = required("package", "the VOD multivariant playlist to loop") else { return nil }
            return .loop(package: resolve(package.text, against: baseDirectory))
        case "push":
            return .push(parsePushSource(entries, path: path, reader: &reader))
        case "directory":
            guard let directory = required("path", "the directory the packager writes into") else { return nil }
            var source = Channel.DirectorySource(path: resolve(directory.text, against: baseDirectory))
            if let seconds = integer("target_duration", in: 1...60) { source.targetDuration = seconds }
            if let interval = integer("poll_interval_ms", in: 50...10_000) { source.pollIntervalMilliseconds = interval }
            return .directory(source)
        default:  // pull
            let url = required("url", "the upstream multivariant playlist URL")
            var valid = url != nil
            if let url, !(url.text.hasPrefix("http://") || url.text.hasPrefix("https://")) || url.text.count <= 8 {
                reader.fail(url.node, "\(path).url", "must be an http:// or https:// URL, got \"\(url.text)\"")
                valid = false
            }
            var source = Channel.PullSource(url: url?.text ?? "")
            if let entry = entries.first(where: { $0.key == "mode" }), let text = reader.string(entry.value, "\(path).mode") {
                if let mode = Channel.PullSource.Mode(rawValue: text) {
                    source.mode = mode
                } else {
                    reader.fail(entry.value, "\(path).mode", "must be fetch or reference, got \"\(text)\"")
                }
            }
            if let seconds = integer("target_duration", in: 1...60) { source.targetDuration = seconds }
            if let timeout = integer("timeout_ms", in: 100...60_000) { source.timeoutMilliseconds = timeout }
            return valid ? .pull(source) : nil
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
