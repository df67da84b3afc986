public import HeadwaterConfiguration
public import HeadwaterLiveWindow
public import HeadwaterRuntime
public import Logging
import NIOConcurrencyHelpers
public import ServiceLifecycle

/// A `source.type: directory` channel: a local packager (ffmpeg `-f hls`, possibly with
/// `-hls_flags delete_segments+temp_file` or `single_file` byte ranges) writes segments and
/// playlists into a folder, and Headwater serves them through its own live window, exactly as if
/// they had been pushed (numbering, restarts, C7 retention, the generated multivariant playlist).
///
/// - A playlist is read when it changes, tolerating the deviations players accept (counted, served
///   canonical). One that does not parse (caught mid-write by a packager
///   writing in place) is counted and retried on its next change; nothing already published changes.
/// - A segment is taken only once a playlist lists it (a packager lists a segment after writing
///   it), and is hard-linked into the segment store (copied across file systems) before it is
///   offered to the window: a packager deleting or replacing its file later never breaks a listed or
///   still-fetchable segment. (A packager that rewrites a file *in place* under the same name also
///   changes a hard-linked copy: use `temp_file` or `delete_segments` then.)
/// - The folder is watched with inotify (top level and one level of subdirectories, e.g. `v0/`)
///   and rescanned every `poll_interval_ms` as well, as a safety net; where inotify is unavailable
///   the rescans alone follow it.
public final class DirectoryChannelSource: Service, Sendable {
    /// How changes in the folder are noticed.
    public enum WatchMode: Sendable, Hashable {
        /// inotify events, plus a rescan every poll interval.
        case inotify
        /// A rescan every poll interval only.
        case polling
    }

    /// The channel's window, store and snapshots.
    public let windowed: WindowedChannel
    public let source: HeadwaterConfiguration.Channel.DirectorySource
    let watchMode: WatchMode
    let clock: any WallClock
    let logger: Logger
    let follower: NIOLockedValueBox<DirectoryFollower>
    /// What the packager's playlists deviate in (tolerated, counted, each rule logged once).
    public let deviations: OriginMetrics.IngestDeviations

    /// Largest prefix of a segment read to probe its codecs (a growing single file is not read whole).
    static let probeLimit = 4 << 20

    /// Sets up the channel: its store directory `{stateDirectory}/directory/{name}` and a `starting`
    /// snapshot in `registry`. The packager's folder need not exist yet.
    ///
    /// - Parameter watch: `.polling` to rely on rescans alone (tests; file systems without inotify).
    /// - Parameter metrics: where ingest, refusals, tolerated deviations and renders are counted.
    /// - Parameter durable: the window is saved in the store directory and restored from it
    ///   (a configured `server.state`): the channel comes back as it was after a restart.
    /// - Throws: ``IngestRefusal`` (500) when the store directory cannot be created.
    public init(
        channel: HeadwaterConfiguration.Channel, source: HeadwaterConfiguration.Channel.DirectorySource,
        stateDirectory: String, runTag: String, registry: ChannelRegistry, clock: any WallClock, logger: Logger,
        watch: WatchMode = .inotify, stall: StallPolicy = .init(), keyring: ChannelKeyring = ChannelKeyring(),
        metrics: OriginMetrics = .shared, durable: Bool = false
    ) throws(IngestRefusal) {
        var logger = logger
        logger[metadataKey: "hls.channel.id"] = "\(channel.name)"
        self.windowed = try WindowedChannel.open(
            channel: channel, sourceType: "directory", targetDuration: source.targetDuration,
            stateDirectory: stateDirectory, runTag: runTag, stall: stall, keyring: keyring, registry: registry,
            clock: clock, logger: logger, metrics: metrics, durable: durable)
        self.deviations = OriginMetrics.IngestDeviations(channel: channel.name, metrics: metrics, logger: logger)
        self.source = source
        self.watchMode = watch
        self.clock = clock
        self.logger = logger
        self.follower = NIOLockedValueBox(DirectoryFollower())
    }

    /// Refusals (malformed playlists, storage errors) and reported problems so far.
    public var counters: IngestCounters { windowed.counters }

    /// Follows the folder until graceful shutdown or cancellation, then finishes saving the window
    /// (`durable`) or deletes the stored files.
    public func run() async throws {
        defer { windowed.close() }
        let pollInterval = Duration.milliseconds(source.pollIntervalMilliseconds)
        await cancelWhenGracefulShutdown {
            let watcher = self.watchMode == .inotify ? InotifyWatcher(root: self.source.path) : nil
            if self.watchMode == .inotify, watcher == nil {
                self.logger.notice("inotify unavailable: rescanning \(self.source.path) every \(pollInterval)")
            }
            let clock = ContinuousClock()
            var lastScan: ContinuousClock.Instant?
            var lastTick = clock.now
            while !Task.isCancelled {
                let now = clock.now
                let woken = watcher?.drain() ?? false
                if woken || lastScan.map({ now - $0 >= pollInterval }) ?? true {
                    let directories = self.scan()
                    watcher?.watch(directories: directories)
                    lastScan = now
                }
                if now - lastTick >= .microseconds(LiveWindow.tickInterval) {
                    self.windowed.tick()
                    lastTick = now
                }
                let pause = watcher != nil ? Duration.milliseconds(20) : min(pollInterval, .microseconds(LiveWindow.tickInterval))
                try? await Task.sleep(for: pause)
            }
        }
    }

    /// Reads the folder once and feeds the window what changed. Returns the subdirectories read
    /// (`nil` when the folder cannot be read).
    @discardableResult
    func scan() -> [String]? {
        follower.withLockedValue { follower in
            follower.scan(source.path, into: windowed, deviations: deviations, clock: clock, logger: logger)
        }
    }
}
