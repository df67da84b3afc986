import Foundation
public import HeadwaterLiveWindow
import Yams

/// The server's configuration: `Config/headwater.yaml` (every key is documented in
/// `Config/README.md`). Relative paths are resolved against the directory of the config file.
public struct HeadwaterConfiguration: Sendable, Hashable {
    public struct Server: Sendable, Hashable {
        /// `server.listen` (string, optional, default `127.0.0.1:8080`): address and port to listen on.
        public var host: String = "127.0.0.1"
        public var port: Int = 8080
        /// `server.public` (path, optional): static root served at `/` (status page, demo media, ads).
        /// Must be a directory (``publicDirectoryProblem(file:)``, checked at start and by `check-config`).
        public var publicDirectory: String?
        /// Line of the `public` key, so a directory that is not there is reported where it was named.
        public var publicDirectoryLine: Int?
        /// `server.follow_symlinks` (`never` or `inside`, default `never`): which symbolic links below
        /// `server.public` and in segment directories are followed. A link leading out never is.
        public var followSymlinks = FollowSymlinks.never

        /// `server.follow_symlinks`.
        public enum FollowSymlinks: String, Sendable, Hashable, CaseIterable {
            /// No link at all: a file reached through one answers 404.
            case never
            /// Links that stay beneath the directory (relative ones: `latest -> v2`).
            case inside
        }
        /// `server.cors` (bool, optional, default false): send `Access-Control-Allow-Origin: *`.
        public var cors: Bool = false
        /// `server.threads` (integer 1...256, optional): event-loop threads serving HTTP. `nil`: one
        /// per CPU the process may run on (its affinity mask and cgroup limits), the usual choice;
        /// set it to leave cores to an encoder on the same machine.
        public var threads: Int?
        /// `server.state` (path, optional): where pushed segments are stored while they are listed or
        /// still fetchable. `nil` means a fresh temporary directory per process: pushed media is
        /// only useful while its channel is live, so nothing needs to survive a restart.
        public var stateDirectory: String?
        /// `server.slate` (path, optional): a VOD multivariant playlist (`Public/slate/master.m3u8`)
        /// whose segments fill a stalled channel (`stall: slate`), matched to each rendition.
        public var slatePackage: String?
        /// `server.ads` (path, optional): the ad configuration (`ads.yaml`: creatives, pods, rules).
        /// Without it, nothing is stitched and `/ssai/…` answers 404.
        public var adsFile: String?
        /// `server.session_key_env` (string, default `HEADWATER_SESSION_KEY`): the environment variable
        /// holding the secret session tokens are signed with. Give every node the same one; without
        /// it a random key is made per process (sessions then do not survive a restart).
        public var sessionKeyEnvironmentVariable = "HEADWATER_SESSION_KEY"
        /// `server.admin_token_env` (string, default `HEADWATER_ADMIN_TOKEN`): the environment variable
        /// holding the bearer token of `POST /admin/…`. Unset: the admin API answers 403.
        public var adminTokenEnvironmentVariable = "HEADWATER_ADMIN_TOKEN"
        /// `server.key_secret_env` (string, default `HEADWATER_KEY_SECRET`): the environment variable
        /// holding the 32-byte secret (64 hex digits or base64) every key of an encrypted channel is
        /// derived from. Give every node the same one; it is only required when a channel has `encryption`.
        public var keySecretEnvironmentVariable = "HEADWATER_KEY_SECRET"
        /// `server.access_log` (`stdout`, `off` or a file path; default `stdout`): where the access
        /// log goes. A file is reopened on SIGUSR1 (logrotate) and on a reload that names another.
        public var accessLog: AccessLog = .standardOutput
        /// `server.tls` (mapping, optional): the TLS listener (HTTP/1.1 and HTTP/2 by ALPN) and its
        /// certificate. `nil`: plain HTTP only.
        public var tls: ServerTLS?
        /// `server.ingest_listen` (`HOST:PORT`, optional): a listener of its own for push ingest and
        /// the admin API, which the public listeners then do not serve. `nil`: served on the public ones.
        public var ingestListen: (host: String, port: Int)? {
            get { ingestHost.map { ($0, ingestPort) } }
            set {
                ingestHost = newValue?.host
                ingestPort = newValue?.port ?? 0
            }
        }
        private var ingestHost: String?
        private var ingestPort = 0
        /// `server.limits` (mapping, optional): deadlines and connection caps; unset keys keep the
        /// server's defaults.
        public var limits = ServerLimits()

        /// Where the access log goes (`server.access_log`).
        public enum AccessLog: Sendable, Hashable {
            case standardOutput
            /// Appended to this file (the path resolved against the config file's directory).
            case file(String)
            case off
        }

        public init() {}
    }

    /// A channel's ad settings (`ads`).
    public struct ChannelAds: Sendable, Hashable {
        /// `ads.schedule`: operator-scheduled breaks besides the source's own cues.
        public enum Schedule: Sendable, Hashable {
            /// `every`, `duration`, `offset` (seconds): a break every `every` seconds, aligned to the
            /// Unix epoch plus `offset`, so every node and every restart agree on when.
            case every(seconds: Int, duration: Int, offset: Int)
            /// `at: ["HH:MM:SS/duration", …]` (UTC): breaks at fixed times of day.
            case at([(secondsOfDay: Int, duration: Int)])

            public static func == (lhs: Schedule, rhs: Schedule) -> Bool {
                switch (lhs, rhs) {
                case (.every(let a, let b, let c), .every(let d, let e, let f)): return a == d && b == e && c == f
                case (.at(let x), .at(let y)):
                    return x.count == y.count && zip(x, y).allSatisfy { $0.secondsOfDay == $1.secondsOfDay && $0.duration == $1.duration }
                default: return false
                }
            }

            public func hash(into hasher: inout Hasher) {
                switch self {
                case .every(let a, let b, let c): hasher.combine(0); hasher.combine(a); hasher.combine(b); hasher.combine(c)
                case .at(let times):
                    hasher.combine(1)
                    for time in times { hasher.combine(time.secondsOfDay); hasher.combine(time.duration) }
                }
            }
        }

        /// `ads.stitch` (bool, default true): whether `/ssai/{channel}/…` serves this channel.
        public var stitch = true
        public var schedule: Schedule?
        /// `ads.markers` (`daterange` or `cue`, default `daterange`): `cue` also writes
        /// `EXT-X-CUE-OUT`/`-CONT`/`-IN` in stitched playlists, for tools that read them.
        public var cueMarkers = false
        /// `ads.default_duration` (seconds, default 30): a break whose cue states no duration
        /// (bare `EXT-X-CUE-OUT`) lasts until its CUE-IN or this long.
        public var defaultDuration = 30

        public init() {}
    }

    /// A live channel.
    public struct Channel: Sendable, Hashable {
        public enum Source: Sendable, Hashable {
            /// `source.type: loop`: a VOD HLS package played as a live channel forever; its segments
            /// published in low-latency parts of about `partTarget` µs (`source.part_target`, default
            /// 0.4 s), or whole (`part_target: off`, `nil`).
            case loop(package: String, partTarget: Int64? = Source.defaultPartTarget)

            /// A loop channel's part target unless configured: 0.4 s, ten frames at 25 fps, twelve at 30.
            public static let defaultPartTarget: Int64 = 400_000
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

        /// What keeps a stalled channel's playlist advancing (`stall`; slate from `server.slate`).
        public typealias StallFill = StallPolicy.Fill

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
        /// `ads` (mapping, optional): the channel's ad breaks and stitching.
        public var ads = ChannelAds()
        /// `encryption` (mapping, optional): Headwater encrypts the channel's segments with AES-128
        /// and serves the keys; `nil` serves the segments as the source made them.
        public var encryption: ChannelEncryption?

        public init(
            name: String, source: Source, windowSeconds: Int = 30, stall: StallFill = .gap, encryption: ChannelEncryption? = nil
        ) {
            self.name = name
            self.source = source
            self.windowSeconds = windowSeconds
            self.stall = stall
            self.encryption = encryption
        }
    }

    public var server = Server()
    public var channels: [Channel] = []

    public init() {}

    /// Parses and validates `text` (the contents of `file`); relative paths resolve against
    /// `baseDirectory`. Throws every problem found at once.
    public static func parse(_ text: String, file: String, baseDirectory: String) throws(ConfigurationError) -> HeadwaterConfiguration {
        var reader = YAMLReader(file: file, text: text)
        let root = try YAMLReader.compose(text, file: file)
        var configuration = HeadwaterConfiguration()
        var sawChannels = false
        var explicitStall = Set<String>()
        for (key, value, _) in reader.mapping(root, "", allowed: ["server", "channels"]) {
            switch key {
            case "server":
                configuration.server = parseServer(value, reader: &reader, baseDirectory: baseDirectory)
            case "channels":
                sawChannels = true
                for (name, channelNode, keyNode) in reader.mapping(value, "channels") {
                    if !Naming.isValid(name) {
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
        var tlsNode: Node?
        var ingestNode: Node?
        for (key, value, _) in reader.mapping(node, "server", allowed: [
            "listen", "public", "cors", "threads", "state", "slate", "ads", "session_key_env", "admin_token_env",
            "key_secret_env", "access_log", "tls", "ingest_listen", "limits", "follow_symlinks",
        ]) {
            let path = "server.\(key)"
            switch key {
            case "listen":
                guard let address = parseListenAddress(value, path, reader: &reader, example: ("127.0.0.1", 8080)) else { continue }
                server.host = address.host
                server.port = address.port
            case "tls":
                server.tls = parseTLS(value, path: path, reader: &reader, baseDirectory: baseDirectory)
                tlsNode = value
            case "ingest_listen":
                server.ingestListen = parseListenAddress(value, path, reader: &reader, example: ("10.0.0.5", 8081))
                ingestNode = value
            case "limits":
                server.limits = parseLimits(value, path: path, reader: &reader)
            case "public":
                if let text = reader.string(value, path) {
                    server.publicDirectory = resolve(text, against: baseDirectory)
                    server.publicDirectoryLine = value.mark?.line
                }
            case "follow_symlinks":
                guard let text = reader.string(value, path) else { continue }
                if let policy = Server.FollowSymlinks(rawValue: text) {
                    server.followSymlinks = policy
                } else {
                    reader.fail(value, path, "must be never or inside, got \"\(text)\"")
                }
            case "cors":
                if let flag = reader.bool(value, path) { server.cors = flag }
            case "threads":
                if let threads = reader.integer(value, path, in: 1...256) { server.threads = threads }
            case "state":
                if let text = reader.string(value, path) { server.stateDirectory = resolve(text, against: baseDirectory) }
            case "slate":
                if let text = reader.string(value, path) { server.slatePackage = resolve(text, against: baseDirectory) }
            case "ads":
                if let text = reader.string(value, path) { server.adsFile = resolve(text, against: baseDirectory) }
            case "access_log":
                guard let text = reader.string(value, path) else { continue }
                switch text {
                case "stdout": server.accessLog = .standardOutput
                case "off": server.accessLog = .off
                case "stderr", "true", "false", "yes", "no", "on", "none", "-":
                    reader.fail(value, path, "must be stdout, off or a file path, got \"\(text)\"")
                default:
                    guard !text.hasSuffix("/") else {
                        reader.fail(value, path, "names a directory; give a file, e.g. /var/log/headwater/access.log")
                        continue
                    }
                    server.accessLog = .file(resolve(text, against: baseDirectory))
                }
            case "session_key_env", "admin_token_env", "key_secret_env":
                guard let name = reader.string(value, path) else { continue }
                guard isEnvironmentVariableName(name) else {
                    reader.fail(value, path, "must name an environment variable (letters, digits and '_', not starting with a digit), got \"\(name)\"")
                    continue
                }
                switch key {
                case "session_key_env": server.sessionKeyEnvironmentVariable = name
                case "admin_token_env": server.adminTokenEnvironmentVariable = name
                default: server.keySecretEnvironmentVariable = name
                }
            default:
                break
            }
        }
        // Both listeners on one address: the second bind would fail at start, after the channels
        // were set up; say so where the operator can fix it.
        if let tls = server.tls, tls.port != 0, tls.port == server.port, tls.host == server.host {
            reader.fail(tlsNode, "server.tls.listen", "must differ from server.listen (\(tls.host):\(tls.port)): one port cannot serve both")
        }
        if let ingest = server.ingestListen, ingest.port != 0 {
            let clashes = [("server.listen", server.host, server.port)] + (server.tls.map { [("server.tls.listen", $0.host, $0.port)] } ?? [])
            for (key, host, port) in clashes where port == ingest.port && host == ingest.host {
                reader.fail(ingestNode, "server.ingest_listen", "must differ from \(key) (\(host):\(port)): one port cannot serve both")
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
        var ads = ChannelAds()
        var encryption: (value: ChannelEncryption, keyNode: Node)?
        for (key, value, keyNode) in reader.mapping(node, base, allowed: ["source", "window", "stall", "ads", "encryption"]) {
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
            case "ads":
                ads = parseAds(value, path: "\(base).ads", reader: &reader)
            case "encryption":
                encryption = parseEncryption(value, path: "\(base).encryption", reader: &reader).map { ($0, keyNode) }
            default:
                break
            }
        }
        if !sawSource { reader.fail(node, "\(base).source", "required: where the channel's media comes from") }
        guard let source else { return nil }
        if stall != nil { explicitStall.insert(name) }
        var channel = Channel(name: name, source: source, windowSeconds: window, stall: stall ?? .gap)
        channel.ads = ads
        if let encryption {
            if let conflict = encryptionConflict(for: source) {
                reader.fail(encryption.keyNode, "\(base).encryption", conflict)
            } else {
                channel.encryption = encryption.value
            }
        }
        return channel
    }

    private static func parseAds(_ node: Node, path: String, reader: inout YAMLReader) -> ChannelAds {
        var ads = ChannelAds()
        for (key, value, _) in reader.mapping(node, path, allowed: ["stitch", "schedule", "markers", "default_duration"]) {
            let keyPath = "\(path).\(key)"
            switch key {
            case "stitch":
                if let flag = reader.bool(value, keyPath) { ads.stitch = flag }
            case "markers":
                guard let text = reader.string(value, keyPath) else { continue }
                switch text {
                case "daterange": ads.cueMarkers = false
                case "cue": ads.cueMarkers = true
                default: reader.fail(value, keyPath, "must be daterange or cue, got \"\(text)\"")
                }
            case "default_duration":
                if let seconds = reader.integer(value, keyPath, in: 1...3600) { ads.defaultDuration = seconds }
            case "schedule":
                ads.schedule = parseSchedule(value, path: keyPath, reader: &reader)
            default:
                break
            }
        }
        return ads
    }

    private static func parseSchedule(_ node: Node, path: String, reader: inout YAMLReader) -> ChannelAds.Schedule? {
        let entries = reader.mapping(node, path, allowed: ["every", "duration", "offset", "at"])
        func entry(_ key: String) -> Node? { entries.first { $0.key == key }?.value }
        if let at = entry("at") {
            for key in ["every", "duration", "offset"] where entry(key) != nil {
                reader.fail(entry(key), "\(path).\(key)", "cannot be combined with at (each time carries its duration)")
            }
            guard case .sequence(let sequence) = at, !sequence.isEmpty else {
                reader.fail(at, "\(path).at", "must be a list of \"HH:MM:SS/seconds\" (UTC start time / duration)")
                return nil
            }
            var times: [(secondsOfDay: Int, duration: Int)] = []
            for (index, item) in sequence.enumerated() {
                let itemPath = "\(path).at[\(index)]"
                guard let text = reader.string(item, itemPath) else { continue }
                guard let time = parseTimeOfDay(text) else {
                    reader.fail(item, itemPath, "must be \"HH:MM:SS/seconds\" or \"HH:MM/seconds\" (UTC), got \"\(text)\"")
                    continue
                }
                times.append(time)
            }
            return times.isEmpty ? nil : .at(times.sorted { $0.secondsOfDay < $1.secondsOfDay })
        }
        guard let everyNode = entry("every"), let durationNode = entry("duration") else {
            reader.fail(node, path, "needs every and duration (seconds), or at")
            return nil
        }
        guard let every = reader.integer(everyNode, "\(path).every", in: 10...86_400),
            let duration = reader.integer(durationNode, "\(path).duration", in: 1...3600)
        else { return nil }
        guard duration < every else {
            reader.fail(durationNode, "\(path).duration", "must be shorter than every (\(every) s), or breaks never end")
            return nil
        }
        let offset = entry("offset").flatMap { reader.integer($0, "\(path).offset", in: 0...86_400) } ?? 0
        return .every(seconds: every, duration: duration, offset: offset)
    }

    /// `HH:MM[:SS]/seconds` → (seconds of day, duration).
    static func parseTimeOfDay(_ text: String) -> (secondsOfDay: Int, duration: Int)? {
        let halves = text.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, let duration = Int(halves[1]), (1...3600).contains(duration) else { return nil }
        let fields = halves[0].split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard fields.count == 2 || fields.count == 3, fields.allSatisfy({ $0 != nil }) else { return nil }
        let hours = fields[0]!, minutes = fields[1]!, seconds = fields.count == 3 ? fields[2]! : 0
        guard (0..<24).contains(hours), (0..<60).contains(minutes), (0..<60).contains(seconds) else { return nil }
        return (hours * 3600 + minutes * 60 + seconds, duration)
    }

    /// The keys each source type takes besides `type`.
    private static let sourceKeys: [String: Set<String>] = [
        "loop": ["package", "part_target"],
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
            var partTarget: Int64? = Channel.Source.defaultPartTarget
            if let entry = entries.first(where: { $0.key == "part_target" }),
                let setting = reader.partTarget(entry.value, "\(path).part_target")
            {
                partTarget = setting.value
            }
            return .loop(package: resolve(package.text, against: baseDirectory), partTarget: partTarget)
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
}

extension HeadwaterConfiguration.Server {
    /// `server.public` as the server is about to use it: `nil` when unset or a directory this
    /// process can list and read, else the problem at its line (`file:line: server.public: …`), so
    /// a typo stops `serve` (and fails `check-config`) instead of answering 404 to everything.
    /// Checked where the configuration is loaded for use, not by ``HeadwaterConfiguration/parse(_:file:baseDirectory:)``,
    /// which reads no file.
    public func publicDirectoryProblem(file: String) -> ConfigurationError.Problem? {
        guard let publicDirectory else { return nil }
        var isDirectory: ObjCBool = false
        let message: String
        if !FileManager.default.fileExists(atPath: publicDirectory, isDirectory: &isDirectory) {
            message = "\"\(publicDirectory)\" does not exist"
        } else if !isDirectory.boolValue {
            message = "\"\(publicDirectory)\" is not a directory"
        } else if !FileManager.default.isReadableFile(atPath: publicDirectory)
            || !FileManager.default.isExecutableFile(atPath: publicDirectory)
        {
            message = "\"\(publicDirectory)\" cannot be read by this user"
        } else {
            return nil
        }
        return .init(file: file, line: publicDirectoryLine, keyPath: "server.public", message: message + ": the static root must be a directory")
    }
}
