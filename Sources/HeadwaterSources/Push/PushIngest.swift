public import HeadwaterConfiguration
import HeadwaterHLS
public import HeadwaterLiveWindow
import HeadwaterMedia
public import HeadwaterRuntime
public import Logging
import NIOConcurrencyHelpers
public import NIOCore
public import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Push ingest for every `source.type: push` channel: checks credentials and paths, stores
/// uploads, feeds each channel's ``LiveWindow`` and publishes its snapshots to the registry.
///
/// Playlists are read tolerantly (``OriginMetrics/IngestDeviations``): the forms encoders write
/// that players accept are taken, counted and served canonical; broken ones are refused with 422.
///
/// Thread-safe: each channel's window sits behind its own lock, held only for the pure state
/// change and the render of the new version (never for file I/O), and snapshots are published
/// under it so versions reach the registry in order. As a `Service`, it expires removed segments
/// once a second so their files go even when the encoder is quiet.
public final class PushIngest: Service, Sendable {
    /// Where uploads are stored (`server.state`, or a temporary directory).
    public let stateDirectory: String
    /// Whether channel windows are saved there and come back after a restart: only in a
    /// configured `server.state` (a temporary directory is removed at exit).
    public let isDurable: Bool
    /// The push channels, by name (replaced whole by ``reconfigure(_:slate:)``).
    private let channelsBox: NIOLockedValueBox<[String: PushChannel]>
    var channels: [String: PushChannel] { channelsBox.withLockedValue { $0 } }
    /// Prefix of this run's stored and served names.
    public let runTag: String
    private let environment: [String: String]?
    let registry: ChannelRegistry
    let clock: any WallClock
    let logger: Logger
    /// Where refusals are counted (and, through each channel, ingest and renders).
    let metrics: OriginMetrics
    private let ownsStateDirectory: Bool
    private let countersBox = NIOLockedValueBox(IngestCounters())
    /// Says, at most once per interval, that uploads are refused for a full disk.
    private let diskFullLog = DiskFullLog()

    /// Sets up every push channel of `configuration`: its directory under the state directory and
    /// its first snapshot in `registry` — the window saved there by an earlier run when
    /// `server.state` is configured (``isDurable``), else an empty one.
    ///
    /// - Parameter environment: where bearer tokens are looked up (`token_env`); `nil` reads the
    ///   process environment.
    /// - Parameter metrics: where ingest, refusals and renders are counted.
    /// - Throws: ``IngestRefusal`` (500) when a directory cannot be created.
    /// What encrypted push channels are keyed from.
    let keyring: ChannelKeyring

    public init(
        configuration: HeadwaterConfiguration, registry: ChannelRegistry, clock: any WallClock, logger: Logger,
        slate: SlateLibrary? = nil, environment: [String: String]? = nil, keyring: ChannelKeyring = ChannelKeyring(),
        metrics: OriginMetrics = .shared
    ) throws(IngestRefusal) {
        self.keyring = keyring
        self.metrics = metrics
        self.registry = registry
        self.clock = clock
        self.logger = logger
        self.environment = environment
        if let directory = configuration.server.stateDirectory {
            try SegmentStorage.makeDirectory(directory)
            stateDirectory = directory
            ownsStateDirectory = false
            logger.info(
                "channel windows are saved in the state directory and restored at start",
                metadata: ["state.directory": "\(directory)"])
        } else {
            stateDirectory = try SegmentStorage.makeTemporaryDirectory()
            ownsStateDirectory = true
            logger.notice(
                "server.state is not set: segments are kept in a temporary directory, and a restart loses every channel's window",
                metadata: ["state.directory": "\(stateDirectory)"])
        }
        isDurable = !ownsStateDirectory
        runTag = WindowedChannel.newRunTag(startedAt: clock.now())
        channelsBox = NIOLockedValueBox([:])
        try reconfigure(configuration, slate: slate)
    }

    /// Applies a (re)loaded configuration: push channels that are new get a directory and a first
    /// snapshot (a saved window when durable, see ``WindowedChannel``); removed ones are dropped
    /// from the registry with their files and saved window; the others keep their window and
    /// numbering, taking the new window length, stall policy, token and upload limit in place. A
    /// changed target duration is the caller's to refuse (it never changes while a channel lives, B2).
    ///
    /// - Throws: ``IngestRefusal`` (500) when a directory cannot be created; nothing changes then.
    public func reconfigure(_ configuration: HeadwaterConfiguration, slate: SlateLibrary?) throws(IngestRefusal) {
        let wanted = configuration.channels.compactMap { channel in
            if case .push(let source) = channel.source { (channel, source) } else { nil }
        }
        let current = channelsBox.withLockedValue { $0 }
        var next: [String: PushChannel] = [:]
        for (channel, source) in wanted {
            let token = Self.lookUp(source.tokenEnvironmentVariable, in: environment).map { Array($0.utf8) }
            if token == nil {
                logger.warning(
                    "push ingest disabled: \(source.tokenEnvironmentVariable) is not set",
                    metadata: ["hls.channel.id": "\(channel.name)"])
            }
            let stall = StallPolicy(fill: channel.stall, slate: slate)
            if let existing = current[channel.name] {
                existing.windowed.apply { window, _ in
                    window.reconfigure(windowSeconds: channel.windowSeconds, stall: stall)
                    return LiveWindow.Outcome()
                }
                next[channel.name] = PushChannel(
                    source: source, token: token, windowed: existing.windowed, deviations: existing.deviations)
                continue
            }
            let windowed = try WindowedChannel.open(
                channel: channel, sourceType: "push", targetDuration: source.targetDuration,
                stateDirectory: stateDirectory, runTag: runTag, stall: stall, keyring: keyring, registry: registry,
                clock: clock, logger: logger, metrics: metrics, durable: isDurable)
            let deviations = OriginMetrics.IngestDeviations(channel: channel.name, metrics: metrics, logger: logger)
            next[channel.name] = PushChannel(source: source, token: token, windowed: windowed, deviations: deviations)
        }
        channelsBox.withLockedValue { $0 = next }
        for (name, removed) in current where next[name] == nil {
            registry.remove(name)
            removed.windowed.removeStore()
        }
    }

    /// Counts of refused uploads and of reported problems, for metrics.
    public var counters: IngestCounters { countersBox.withLockedValue { $0 } }

    /// Names of the channels that accept push ingest.
    public var channelNames: [String] { channels.keys.sorted() }

    // MARK: Requests

    /// Checks the `Authorization` field of an ingest request for `channel`.
    ///
    /// - Throws: 404 for a channel that does not take push ingest, 403 when its token variable was
    ///   not set at start (push is disabled) or the token is wrong, 401 without a bearer token
    ///   (the HTTP layer adds `WWW-Authenticate: Bearer`).
    public func authorize(channel name: String, authorization: String?) throws(IngestRefusal) {
        let channel = try self.channel(name)
        guard let expected = channel.token else {
            throw rejected(
                IngestRefusal("push ingest disabled: \(channel.source.tokenEnvironmentVariable) is not set",
                    reason: .disabled),
                channel: channel)
        }
        guard let authorization, let presented = BearerToken.bearerToken(authorization) else {
            throw rejected(
                IngestRefusal("ingest needs Authorization: Bearer <token>", reason: .missingCredentials),
                channel: channel)
        }
        guard BearerToken.matches(presented, expected: expected) else {
            throw rejected(IngestRefusal("wrong ingest token", reason: .wrongToken), channel: channel)
        }
    }

    /// Starts an upload of `path` (the components after `/ingest/{channel}/`). Call
    /// ``authorize(channel:authorization:)`` first.
    ///
    /// - Throws: 404 unknown channel, 400 hostile path, 415 unknown file type, 413 when
    ///   `contentLength` exceeds `max_upload_bytes` (1 MiB for playlists), 500 if the file cannot
    ///   be created.
    public func beginUpload(
        channel name: String, path components: [String], contentLength: Int?
    ) throws(IngestRefusal)
        -> PushUpload
    {
        let channel = try self.channel(name)
        let path: IngestPath
        do { path = try IngestPath(components) } catch { throw rejected(error, channel: channel) }
        let limit =
            path.kind == .playlist
            ? min(WindowedChannel.maxPlaylistBytes, channel.source.maxUploadBytes) : channel.source.maxUploadBytes
        if let contentLength, contentLength > limit {
            throw rejected(Self.tooLarge(path, limit: limit), channel: channel)
        }
        var sink = PushUpload.Sink.buffer([])
        if path.kind == .segment {
            let final = channel.windowed.newFilePath(extension: path.fileExtension)
            let fd: Int32
            do { fd = try SegmentStorage.create(final + ".part") } catch { throw rejected(error, channel: channel) }
            sink = .file(fd: fd, temporary: final + ".part", final: final)
        }
        return PushUpload(channel: channel, path: path, contentLength: contentLength, limit: limit, sink: sink)
    }

    /// Appends a chunk of `upload`'s body.
    ///
    /// - Throws: 413 past the size limit, 500 when the disk refuses; the upload is discarded then.
    public func write(_ chunk: ByteBuffer, to upload: PushUpload) throws(IngestRefusal) {
        do { try upload.write(chunk) } catch { throw rejected(error, channel: upload.channel) }
    }

    /// Appends bytes to `upload`'s body (see ``write(_:to:)-…``).
    public func write(_ bytes: [UInt8], to upload: PushUpload) throws(IngestRefusal) {
        do { try upload.write(bytes) } catch { throw rejected(error, channel: upload.channel) }
    }

    /// Completes `upload`: a segment is renamed into place and offered to its channel's window; a
    /// playlist is parsed and followed.
    ///
    /// - Throws: 400 when fewer bytes than `Content-Length` arrived, 422 `path: line N: …` for a
    ///   playlist that does not parse, 409/400 for a playlist whose rendition name clashes or is
    ///   unusable, 500 for a disk error. Nothing is listed or kept then.
    public func finish(_ upload: PushUpload) throws(IngestRefusal) {
        let completed: PushUpload.Completed
        do { completed = try upload.finish(now: clock.now()) } catch { throw rejected(error, channel: upload.channel) }
        switch completed {
        case .segment(let file, let probe):
            upload.channel.windowed.apply { window, now in
                window.segmentStored(path: upload.path.description, file: file, completedAt: now, probe: probe)
            }
        case .playlist(let bytes):
            try received(upload.channel, upload.path, bytes: bytes)
        }
    }

    /// Abandons `upload` (the client went away): nothing is listed, the partial file is removed, and
    /// an upload that was still open counts as truncated.
    public func abort(_ upload: PushUpload) {
        if let refusal = upload.abort() { rejected(refusal, channel: upload.channel) }
    }

    /// The encoder deleted `path`. Listed segments, and removed ones still fetchable (C7), stay
    /// until their deadline; nothing else is kept.
    ///
    /// - Throws: 404 unknown channel, 400 hostile path, 415 unknown file type.
    public func delete(channel name: String, path components: [String]) throws(IngestRefusal) {
        let channel = try self.channel(name)
        let path: IngestPath
        do { path = try IngestPath(components) } catch { throw rejected(error, channel: channel) }
        guard path.kind == .segment else { return }  // playlists are not stored
        channel.windowed.apply { window, now in window.segmentDeleted(path: path.description, now: now) }
    }

    /// Expires removed segments past their C7 deadline in every channel and deletes their files.
    public func expire() {
        for name in channels.keys.sorted() {
            channels[name]!.windowed.tick()
        }
    }

    /// Ticks (stall detection, expiry) every ``LiveWindow/tickInterval`` until graceful shutdown,
    /// then finishes saving every window (a configured `server.state`, left as it is for the next
    /// start) or removes the temporary state directory Headwater made.
    public func run() async throws {
        defer {
            for channel in channels.values { channel.windowed.close() }
            if ownsStateDirectory { SegmentStorage.removeDirectory(stateDirectory) }
        }
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                self.expire()
                try? await Task.sleep(for: .microseconds(LiveWindow.tickInterval))
            }
        }
    }

    // MARK: Internals

    private func received(_ channel: PushChannel, _ path: IngestPath, bytes: [UInt8]) throws(IngestRefusal) {
        let playlist: Playlist
        do {
            playlist = try channel.deviations.parse(bytes, path: path.description)
        } catch {
            throw rejected(
                IngestRefusal("\(path): \(error.description)", reason: .malformedPlaylist), channel: channel)
        }
        do {
            try channel.windowed.receivedUncounted(playlist, path: path.description)
        } catch {
            throw rejected(error, channel: channel)
        }
    }

    /// Counts a refusal, once: in this ingest's totals, and in its channel's counters and metrics
    /// (``WindowedChannel/rejected(_:)``); `channel` is `nil` when the request named no push channel.
    @discardableResult
    private func rejected(_ error: IngestRefusal, channel: PushChannel? = nil) -> IngestRefusal {
        countersBox.withLockedValue { $0.count(error.reason) }
        diskFullLog.record(error, channel: channel?.name, stateDirectory: stateDirectory, logger: logger, now: clock.now())
        if let channel {
            channel.windowed.rejected(error)
        } else {
            metrics.ingestRejected(channel: nil, reason: error.reason)
        }
        return error
    }

    private func channel(_ name: String) throws(IngestRefusal) -> PushChannel {
        guard let channel = channels[name] else {
            throw rejected(
                IngestRefusal("no channel \"\(name)\" takes push ingest", reason: .unknownChannel))
        }
        return channel
    }

    static func tooLarge(_ path: IngestPath, limit: Int) -> IngestRefusal {
        IngestRefusal("\(path) is larger than the \(limit)-byte limit", reason: .tooLarge)
    }

    private static func lookUp(_ variable: String, in environment: [String: String]?) -> String? {
        let value: String?
        if let environment {
            value = environment[variable]
        } else {
            value = getenv(variable).map { String(cString: $0) }
        }
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}

/// One push channel: its configuration, credentials and window.
final class PushChannel: Sendable {
    let source: HeadwaterConfiguration.Channel.PushSource
    /// `nil` when the token variable was unset at start: push is disabled.
    let token: [UInt8]?
    let windowed: WindowedChannel
    /// What its encoder's playlists deviate in: kept across reloads, so each rule is logged once.
    let deviations: OriginMetrics.IngestDeviations

    var name: String { windowed.name }

    init(
        source: HeadwaterConfiguration.Channel.PushSource, token: [UInt8]?, windowed: WindowedChannel,
        deviations: OriginMetrics.IngestDeviations
    ) {
        self.source = source
        self.token = token
        self.windowed = windowed
        self.deviations = deviations
    }
}
