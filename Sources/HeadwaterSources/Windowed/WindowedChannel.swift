public import HeadwaterHLS
public import HeadwaterLiveWindow
public import HeadwaterRuntime
import HeadwaterStitching
public import Logging
import NIOConcurrencyHelpers

/// A channel whose live window Headwater keeps itself — push, directory and pull sources all feed
/// one: a ``LiveWindow`` behind a lock, its snapshots published to the registry in order, the
/// files it no longer needs deleted, and what it reports logged and counted.
///
/// The lock is held only for the pure state change and the render of a new version (never for
/// file or network I/O), so a source's own I/O never blocks readers of the registry.
public final class WindowedChannel: Sendable {
    /// Largest playlist a source may deliver, pushed, written or fetched: playlists are read whole
    /// into memory to be parsed.
    public static let maxPlaylistBytes = 1 << 20

    struct State: Sendable {
        var window: LiveWindow
        var renderer: WindowRenderer
        var nextFile: UInt64 = 0
        var counters = IngestCounters()
        /// Counts the snapshots made, so an encrypted channel publishes them in order.
        var made: UInt64 = 0
    }

    /// For an encrypted channel: the newest snapshot published, by ``State/made``. Encrypting new
    /// segments is file I/O, so it happens under this lock, not the window's: ingest events keep
    /// changing the window meanwhile, and an older snapshot that finishes late is dropped.
    private let publishing = NIOLockedValueBox<UInt64>(0)

    public let name: String
    /// Where this channel's stored files live.
    public let directory: String
    /// Prefix of stored and served file names (`{run}-{n}.ts`), unique per run of Headwater.
    public let runTag: String
    /// `push`, `directory` or `pull`, for the status page.
    public let sourceType: String
    let registry: ChannelRegistry
    let clock: any WallClock
    let logger: Logger
    /// Where ingest, rejections and playlist renders are counted.
    let metrics: OriginMetrics
    let state: NIOLockedValueBox<State>
    /// The channel's encrypted segments, `nil` when it is clear.
    let encryption: SegmentEncryption?
    /// Saves the window after every published version; `nil` when the state directory is
    /// temporary (nothing survives a restart then).
    let stateWriter: ChannelStateWriter?
    /// Ad breaks restored with the window, until the channel's break tracker takes them up: at the
    /// first publish that finds one (directory and pull channels: at once), at the latest at the
    /// first tick (push channels open before the trackers are made).
    private let restoredBreaks: NIOLockedValueBox<BreakTrackerRecord?>

    public convenience init(
        name: String, sourceType: String, window: LiveWindow, directory: String, registry: ChannelRegistry,
        clock: any WallClock, logger: Logger, metrics: OriginMetrics = .shared, encryption: SegmentEncryption? = nil
    ) {
        self.init(
            name: name, sourceType: sourceType, window: window, directory: directory, registry: registry, clock: clock,
            logger: logger, metrics: metrics, encryption: encryption, stateWriter: nil, restoredBreaks: nil)
    }

    init(
        name: String, sourceType: String, window: LiveWindow, directory: String, registry: ChannelRegistry,
        clock: any WallClock, logger: Logger, metrics: OriginMetrics, encryption: SegmentEncryption?,
        stateWriter: ChannelStateWriter?, restoredBreaks: BreakTrackerRecord?
    ) {
        self.stateWriter = stateWriter
        self.restoredBreaks = NIOLockedValueBox(restoredBreaks)
        self.encryption = encryption
        self.name = name
        self.sourceType = sourceType
        self.directory = directory
        self.runTag = window.configuration.runTag
        self.registry = registry
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        self.state = NIOLockedValueBox(State(window: window, renderer: WindowRenderer(metrics: metrics)))
    }

    /// Refusals and reported problems so far.
    public var counters: IngestCounters { state.withLockedValue { $0.counters } }

    /// A fresh path in ``directory`` for a file with extension `ext` (`{run}-{n}.{ext}`).
    public func newFilePath(extension ext: String) -> String {
        let number = state.withLockedValue { state -> UInt64 in
            state.nextFile += 1
            return state.nextFile
        }
        return "\(directory)/\(runTag)-\(number).\(ext)"
    }

    /// Counts a refused input (upload, file, upstream response) by reason.
    @discardableResult
    public func rejected(_ error: IngestRefusal) -> IngestRefusal {
        state.withLockedValue { $0.counters.count(error.reason) }
        metrics.ingestRejected(channel: name, reason: error.reason)
        return error
    }

    /// Publishes the current snapshot (at start: an empty window, or the one restored).
    public func publishNow() {
        let now = clock.now()
        publish(state.withLockedValue { snapshot(&$0, now: now) })
    }

    /// A snapshot made under the window lock: its number (publishing order) and the window it was
    /// made from (what a durable channel saves).
    private typealias Made = (snapshot: ChannelSnapshot, number: UInt64, window: LiveWindow)

    private func snapshot(_ state: inout State, now: Int64) -> Made {
        var version = state.window.snapshot(now: now)
        if let keying = encryption?.keying {
            // EXT-X-KEY on every segment; no I-frame playlists (byte ranges of CBC cannot be decrypted alone).
            for (name, playlist) in version.media { version.media[name]?.model = keying.encrypting(playlist.model, rendition: name) }
            version.iFrames = [:]
            version.multivariant?.model.iFrameVariants = []
        }
        var snapshot = state.renderer.snapshot(of: version)
        snapshot.status.source = sourceType
        snapshot.status.ingest.rejected = UInt64(state.counters.rejections.values.reduce(0, +))
        state.made += 1
        return (snapshot, state.made, state.window)
    }

    /// Publishes a snapshot made under the window lock: at once for a clear channel (still under
    /// it), after encrypting its new segments for an encrypted one (outside it, in order). A
    /// durable channel then saves it with the ad breaks published with it.
    private func publish(_ made: Made) {
        guard let encryption else {
            adoptRestoredBreaks()
            registry.publish(made.snapshot)
            return save(made)
        }
        publishing.withLockedValue { newest in
            guard made.number > newest else { return }
            newest = made.number
            adoptRestoredBreaks()
            registry.publish(encryption.encrypt(made.snapshot))
            save(made)
        }
    }

    /// Hands the ad breaks restored with the window to the channel's break tracker, once there is
    /// one: before the first version it publishes, so that it processes the restored window as the
    /// tracker that saved them did (nothing new: the breaks stay as they were).
    private func adoptRestoredBreaks() {
        guard restoredBreaks.withLockedValue({ $0 != nil }), let desk = registry.breaks(of: name),
            let record = restoredBreaks.withLockedValue({ state in defer { state = nil }; return state })
        else { return }
        do {
            try desk.restore(record)
        } catch {
            logger.error(
                "the saved ad breaks cannot be used; breaks start afresh from the restored window: \(error.message)")
        }
    }

    /// Hands a version just published to the state writer (a durable channel), with the ad breaks
    /// published with it: the tracker's, or those restored and not taken up yet.
    private func save(_ made: Made) {
        guard let stateWriter else { return }
        let breaks: ChannelStateWriter.Breaks
        if let record = restoredBreaks.withLockedValue({ $0 }) {
            breaks = .record(record)
        } else if let desk = registry.breaks(of: name) {
            breaks = .tracker(desk.tracker)
        } else {
            breaks = .none
        }
        stateWriter.save(.init(number: made.number, window: made.window, breaks: breaks, savedAt: clock.now()))
    }

    /// Waits until every version published is saved (a durable channel); at shutdown, and for tests.
    public func flushState() { stateWriter?.flush() }

    /// Runs one window event under the lock, publishes the new version if it changed, then
    /// (outside the lock) deletes files nothing refers to and logs what the event reported.
    public func apply(_ event: (inout LiveWindow, Int64) -> LiveWindow.Outcome) {
        let now = clock.now()
        var ingested = (count: UInt64(0), bytes: UInt64(0))
        var made: Made?
        let outcome = state.withLockedValue { state in
            let before = state.window.ingested
            let outcome = event(&state.window, now)
            ingested = Self.added(from: before, to: state.window.ingested)
            if outcome.changed {
                made = snapshot(&state, now: now)
                if encryption == nil { publish(made!) }
            }
            for report in outcome.reports {
                switch report.kind {
                case .extinfAboveTargetDuration: state.counters.segmentsOverTargetDuration += 1
                case .segmentOverTargetDurationSkipped: state.counters.count(.overTargetDuration)
                case .missingSegment: state.counters.missingSegments += 1
                case .encoderRestart: state.counters.encoderRestarts += 1
                case .stall: state.counters.stalls += 1
                case .missingPart: state.counters.missingParts += 1
                case .serverControlDeviation: state.counters.serverControlDeviations += 1
                case .misaligned, .segmentDelayed, .stallEnded: break
                }
            }
            return outcome
        }
        if encryption != nil, let made { publish(made) }
        metrics.ingested(channel: name, count: Int(ingested.count), bytes: Int64(ingested.bytes))
        for file in outcome.filesToDelete { SegmentStorage.remove(file) }
        for report in outcome.reports where report.kind == .stall { metrics.stallDetected(channel: name) }
        for report in outcome.reports where report.kind == .segmentOverTargetDurationSkipped {
            metrics.ingestRejected(channel: name, reason: .overTargetDuration)
        }
        for report in outcome.reports {
            let metadata: Logger.Metadata = [
                "hls.channel.id": "\(name)", "hls.rendition": "\(report.rendition)",
                "source.report": "\(report.kind.rawValue)",
            ]
            switch report.kind {
            case .encoderRestart, .stallEnded: logger.notice("\(report.message)", metadata: metadata)
            case .segmentDelayed: logger.debug("\(report.message)", metadata: metadata)
            default: logger.warning("\(report.message)", metadata: metadata)
            }
        }
    }

    /// Segments and bytes ingested between two totals.
    private static func added(
        from before: ChannelStatus.Ingest, to after: ChannelStatus.Ingest
    ) -> (count: UInt64, bytes: UInt64) {
        (
            after.segments >= before.segments ? after.segments - before.segments : 0,
            after.bytes >= before.bytes ? after.bytes - before.bytes : 0
        )
    }

    /// Housekeeping for a quiet source: expires removed segments past their C7 deadline.
    public func tick() {
        if restoredBreaks.withLockedValue({ $0 != nil }) {
            // Push channels open before the break trackers exist: the restored breaks go to the
            // tracker as the window is published once more, or are dropped if the channel does
            // not stitch.
            if registry.breaks(of: name) != nil {
                publishNow()
            } else {
                restoredBreaks.withLockedValue { $0 = nil }
            }
        }
        apply { window, now in window.expire(now: now) }
    }

    /// Feeds a media or multivariant playlist (already parsed) read at `path` of the source.
    ///
    /// - Throws: what ``LiveWindow/playlistReceived(path:_:now:)`` throws, counted.
    public func received(_ playlist: Playlist, path: String) throws(IngestRefusal) {
        do { try receivedUncounted(playlist, path: path) } catch { throw rejected(error) }
    }

    /// ``received(_:path:)`` for a caller that counts the refusal itself.
    func receivedUncounted(_ playlist: Playlist, path: String) throws(IngestRefusal) {
        var failure: IngestRefusal?
        apply { window, now in
            switch playlist {
            case .media(let media):
                do throws(IngestRefusal) {
                    return try window.playlistReceived(path: path, media, now: now)
                } catch {
                    failure = error
                    return LiveWindow.Outcome()
                }
            case .multivariant(let multivariant):
                return window.multivariantReceived(path: path, multivariant, now: now)
            }
        }
        if let failure { throw failure }
    }
}
