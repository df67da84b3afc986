public import AsyncHTTPClient
import FoundationEssentials
public import HeadwaterConfiguration
import HeadwaterHLS
public import HeadwaterLiveWindow
public import HeadwaterRuntime
public import Logging
import NIOConcurrencyHelpers
public import ServiceLifecycle

/// A `source.type: pull` channel: Headwater polls an upstream HLS origin and serves the channel
/// through its own live window, as if the upstream had pushed it (numbering, restarts with a
/// discontinuity, C7 retention, the multivariant playlist).
///
/// - The entry URL may be a multivariant playlist (every media playlist it names is followed) or a
///   media playlist. Each media playlist is reloaded as a client would (RFC 8216bis §6.3.4): one
///   last-segment duration after it changed, half a target duration after it did not.
/// - `fetch` mode downloads each new segment (and init section) into the segment store, probes it
///   for the generated multivariant playlist's CODECS, and lists it once complete. `reference`
///   mode lists segments under their absolute upstream URLs and downloads nothing.
/// - Playlists are read tolerating the deviations players accept (counted, served canonical).
/// - Failures (HTTP errors, timeouts, refused connections, malformed playlists) are retried with
///   capped exponential backoff and jitter, counted by kind (``counters``), and logged when the
///   state changes, not at every retry. The last good window keeps being served meanwhile. A media
///   playlist unchanged for more than 1.5 target durations is counted and logged as stale.
public final class PullChannelSource: Service, Sendable {
    /// Largest segment accepted.
    public static let maxSegmentBytes = 256 << 20
    /// Largest prefix of a segment probed for codecs.
    static let probeLimit = 4 << 20

    /// The channel's window, store and snapshots.
    public let windowed: WindowedChannel
    public let source: HeadwaterConfiguration.Channel.PullSource
    /// The channel's `window`: segments older than that (plus two target durations) are not fetched.
    let windowSeconds: Int
    let entry: URL
    let layout: UpstreamLayout
    let upstream: Upstream
    let clock: any WallClock
    let logger: Logger
    let countersBox = NIOLockedValueBox(PullCounters())
    /// What the upstream's playlists deviate in (tolerated, counted, each rule logged once).
    public let deviations: OriginMetrics.IngestDeviations

    /// Sets up the channel: its store directory `{stateDirectory}/pull/{name}` and a `starting`
    /// snapshot in `registry`. Nothing is fetched before ``run()``.
    ///
    /// - Parameter httpClient: shared by every pull source; its owner shuts it down after they end.
    /// - Parameter metrics: where ingest, refusals, tolerated deviations and renders are counted.
    /// - Parameter durable: the window is saved in the store directory and restored from it
    ///   (a configured `server.state`): the channel comes back as it was after a restart.
    /// - Throws: ``IngestRefusal`` (400) for a URL that does not parse, (500) when the store directory
    ///   cannot be created.
    public init(
        channel: HeadwaterConfiguration.Channel, source: HeadwaterConfiguration.Channel.PullSource,
        stateDirectory: String, runTag: String, registry: ChannelRegistry, clock: any WallClock, logger: Logger,
        httpClient: HTTPClient, stall: StallPolicy = .init(), keyring: ChannelKeyring = ChannelKeyring(),
        metrics: OriginMetrics = .shared, durable: Bool = false
    ) throws(IngestRefusal) {
        guard let entry = URL(string: source.url), entry.scheme == "http" || entry.scheme == "https",
            entry.host() != nil
        else {
            throw IngestRefusal("source.url \(source.url) is not an http(s) URL", reason: .badPath)
        }
        var logger = logger
        logger[metadataKey: "hls.channel.id"] = "\(channel.name)"
        self.windowed = try WindowedChannel.open(
            channel: channel, sourceType: "pull", targetDuration: source.targetDuration, stateDirectory: stateDirectory,
            runTag: runTag, stall: stall, listsRemoteSegments: source.mode == .reference, keyring: keyring,
            registry: registry,
            clock: clock, logger: logger, metrics: metrics, durable: durable)
        self.deviations = OriginMetrics.IngestDeviations(channel: channel.name, metrics: metrics, logger: logger)
        self.source = source
        self.windowSeconds = channel.windowSeconds
        self.entry = entry
        self.layout = UpstreamLayout(entry: entry)
        self.upstream = Upstream(client: httpClient, timeoutMilliseconds: source.timeoutMilliseconds)
        self.clock = clock
        self.logger = logger
        countersBox.withLockedValue { $0.export(to: metrics, channel: channel.name) }
    }

    /// What was fetched, and failures by kind.
    public var counters: PullCounters { countersBox.withLockedValue { $0 } }

    /// Follows the upstream until graceful shutdown or cancellation, then finishes saving the window
    /// (`durable`) or deletes the stored files.
    public func run() async throws {
        defer { windowed.close() }
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    while !Task.isCancelled {
                        self.windowed.tick()
                        try? await Task.sleep(for: .microseconds(LiveWindow.tickInterval))
                    }
                }
                group.addTask { await self.follow() }
            }
        }
    }

    /// Fetches the entry playlist until it parses, then follows its media playlists.
    func follow() async {
        var health = Health(what: "\(entry)")
        var backoff = self.backoff()
        while !Task.isCancelled {
            do throws(PullFailure) {
                let bytes = try await upstream.fetch(entry, limit: WindowedChannel.maxPlaylistBytes)
                let playlist: Playlist
                do { playlist = try deviations.parse(bytes, path: "\(entry)") } catch {
                    throw PullFailure(.malformedPlaylist, "\(entry): \(error.description)")
                }
                count { $0.playlistsFetched += 1 }
                health.succeeded(logger)
                switch playlist {
                case .multivariant(let multivariant):
                    let (rewritten, media) = layout.rewrite(multivariant, at: entry)
                    let path = layout.path(for: entry, kind: .playlist)
                    do { try windowed.received(.multivariant(rewritten), path: path) } catch {
                        logger.warning("\(error.message)")
                    }
                    await withDiscardingTaskGroup { group in
                        for (url, path) in media {
                            group.addTask { await self.poll(url, path: path, first: nil) }
                        }
                    }
                case .media(let media):
                    await poll(entry, path: layout.path(for: entry, kind: .playlist), first: (bytes, media))
                }
                return
            } catch {
                count { $0.count(error.kind) }
                health.failed(error, logger)
                try? await Task.sleep(for: backoff.next())
            }
        }
    }

    /// Backoff for one upstream resource: from ¼ s, capped at two target durations (1–10 s).
    func backoff() -> Backoff {
        Backoff(base: .milliseconds(250), cap: .seconds(min(10, max(1, 2 * source.targetDuration))))
    }

    func count(_ change: (inout PullCounters) -> Void) { countersBox.withLockedValue { change(&$0) } }
}

/// Whether requests for one upstream resource succeed, so that a failure is logged when it
/// starts or changes kind and recovery once — not every retry.
struct Health {
    let what: String
    private(set) var failing: PullCounters.Failure?
    private var failures = 0

    init(what: String) { self.what = what }

    mutating func failed(_ failure: PullFailure, _ logger: Logger) {
        failures += 1
        guard failing != failure.kind else { return }
        failing = failure.kind
        logger.warning(
            "upstream \(failure.kind.rawValue) for \(what): \(failure.message); retrying with backoff, serving the last good window",
            metadata: ["error.type": "\(failure.kind.rawValue)"])
    }

    mutating func succeeded(_ logger: Logger) {
        guard failing != nil else { return }
        logger.notice("upstream \(what) answers again after \(failures) failed attempts")
        failing = nil
        failures = 0
    }
}
