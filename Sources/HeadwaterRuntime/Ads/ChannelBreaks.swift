public import HeadwaterHLS
import HeadwaterLiveWindow
public import HeadwaterStitching
public import Logging
import NIOConcurrencyHelpers

/// One channel's ad breaks: a ``BreakTracker`` fed with every version the channel publishes, so the
/// break log always describes exactly the content published with it. Breaks come from the source's
/// cues, the channel's schedule (`ads.schedule`) and "cue now" requests
/// (`POST /admin/channels/{channel}/breaks`).
///
/// The tracker follows one rendition, the *cue rendition*: the first variant of the multivariant
/// playlist (all renditions of a channel share numbering and dates, so its breaks apply to all).
public final class ChannelBreaks: Sendable {
    public let channel: String
    private let state: NIOLockedValueBox<State>
    private let ruleBook: AdRuleBook
    private let logger: Logger
    private let metrics: OriginMetrics

    private struct State {
        var tracker: BreakTracker
        var cueRendition: String?
        /// The (rule-set version, renditions) last checked, and why they do not fit, if they don't.
        var checked: (version: UInt64, renditions: [String])?
        var unfit: String?
    }

    /// Why the channel's ladder cannot be stitched with the current ad configuration (a creative
    /// lacks one of its renditions, a segment is longer than its target duration), `nil` when it can.
    /// Loop channels are checked when the configuration loads; push, directory and pull channels
    /// only know their renditions once media arrives.
    public var unfitReason: String? { state.withLockedValue { $0.unfit } }

    public init(
        channel: String, schedule: BreakSchedule?, defaultDuration: HLSDuration = .seconds(30), ruleBook: AdRuleBook,
        logger: Logger, metrics: OriginMetrics = .shared
    ) {
        self.channel = channel
        self.state = NIOLockedValueBox(
            State(tracker: BreakTracker(channel: channel, schedule: schedule, defaultDuration: defaultDuration)))
        self.ruleBook = ruleBook
        self.logger = logger
        self.metrics = metrics
    }

    /// A configuration reload changed the channel's schedule.
    public func reconfigure(schedule: BreakSchedule?) {
        state.withLockedValue { $0.tracker.schedule = schedule }
    }

    /// The tracker as of the version last published: what a durable channel saves with that
    /// version's window (``BreakTrackerRecord``).
    public var tracker: BreakTracker { state.withLockedValue { $0.tracker } }

    /// Takes up the breaks a restart saved with the window it restores, keeping this configuration's
    /// schedule and default duration. Call it before the restored window is published.
    public func restore(_ record: BreakTrackerRecord) throws(BreakTrackerRecord.RestoreError) {
        let result: Result<Void, BreakTrackerRecord.RestoreError> = state.withLockedValue { state in
            do throws(BreakTrackerRecord.RestoreError) {
                state.tracker = try BreakTracker(
                    channel: channel, schedule: state.tracker.schedule, defaultDuration: state.tracker.defaultDuration,
                    restoring: record)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// "Cue now": a break of `duration` from the next segment the channel publishes. Returns the
    /// break's id.
    public func requestBreak(duration: HLSDuration) throws(BreakRequestError) -> String {
        let result: Result<String, BreakRequestError> = state.withLockedValue { state in
            do throws(BreakRequestError) {
                return .success(try state.tracker.requestBreak(duration: duration))
            } catch {
                return .failure(error)
            }
        }
        let id = try result.get()
        logger.info(
            "ad break requested", metadata: ["hls.channel.id": "\(channel)", "ad.break.id": "\(id)", "ad.break.duration": "\(duration)"])
        return id
    }

    /// The breaks as of the version about to be published, or `nil` when the version has no content
    /// to stitch. Called by ``ChannelRegistry/publish(_:)`` only, one version at a time.
    func advance(with content: ChannelContent) -> StitchingInput? {
        guard let ruleSet = ruleBook.current else { return nil }
        // A day of breaks, whatever the caps now: a reload may bring a longer cap period, and its
        // decisions must agree with a node that kept everything (a break is ~200 bytes).
        let cap: HLSDuration? = FrequencyCap.longestPeriod
        let advanced: (log: BreakLog, events: [BreakEvent])? = state.withLockedValue { state in
            if state.cueRendition.map({ content.media[$0] == nil }) ?? true {
                state.cueRendition = Self.cueRendition(of: content)
            }
            guard let name = state.cueRendition, let playlist = content.media[name] else { return nil }
            let renditions = content.media.keys.sorted()
            if state.checked.map({ $0.version != ruleSet.version || $0.renditions != renditions }) ?? true {
                state.checked = (ruleSet.version, renditions)
                let issues = ruleSet.validate(renditions: renditions, targetDuration: playlist.targetDuration)
                state.unfit = issues.isEmpty ? nil : issues.map(\.description).joined(separator: "; ")
                if let unfit = state.unfit {
                    logger.error(
                        "the ad configuration does not fit this channel: not stitching",
                        metadata: ["hls.channel.id": "\(channel)", "error.message": "\(unfit)"])
                }
            }
            guard state.unfit == nil else { return nil }
            let events = state.tracker.advance(to: playlist, ruleSetVersion: ruleSet.version)
            state.tracker.prune(before: Self.pruneBound(state.tracker.log, content: content, keeping: cap))
            return (state.tracker.log, events)
        }
        guard let advanced else { return nil }
        for event in advanced.events { record(event) }
        return StitchingInput(content: content.resolvingURIs(against: "/live/\(channel)/"), breaks: advanced.log)
    }

    private func record(_ event: BreakEvent) {
        var metadata: Logger.Metadata = ["hls.channel.id": "\(channel)", "ad.break.event": "\(event)"]
        switch event {
        case .started(let id, let msn, let source, _):
            metadata["ad.break.id"] = "\(id)"
            metadata["hls.msn"] = "\(msn)"
            metrics.adBreakStarted(channel: channel, source: "\(source)")
            logger.info("ad break started", metadata: metadata)
        case .ended(let id, let msn, _, _):
            metadata["ad.break.id"] = "\(id)"
            metadata["hls.msn"] = "\(msn)"
            logger.info("ad break ended", metadata: metadata)
        case .invalidCue(_, _, _, let label):
            metrics.adCueRejected(channel: channel, reason: label)
            logger.warning("ad cue rejected: not stitched, passed through", metadata: metadata)
        default:
            logger.notice("ad cue ignored", metadata: metadata)
        }
    }

    /// The rendition whose cues and numbering drive the log: the first variant's, else the first by name.
    static func cueRendition(of content: ChannelContent) -> String? {
        if let uri = content.multivariant?.variants.first?.uri, uri.hasSuffix(".m3u8") {
            let name = String(uri.dropLast(5))
            if content.media[name] != nil { return name }
        }
        return content.media.keys.min()
    }

    /// The first MSN whose breaks must stay: those that still reach into the oldest window, and —
    /// since frequency caps count a session's earlier breaks — every break that started within
    /// `period` before the oldest of those (the pod chooser replays them).
    static func pruneBound(_ log: BreakLog, content: ChannelContent, keeping period: HLSDuration?) -> UInt64 {
        let windowHead = content.media.values.map(\.effectiveMediaSequence).min() ?? 0
        guard let period else { return windowHead }
        let shown = log.breaks.first { $0.end.map { $0.mediaSequence >= windowHead } ?? true }
        guard let oldest = shown ?? log.breaks.last else { return windowHead }
        let cutoff = oldest.startDate.adding(HLSDuration(microseconds: -period.microseconds))
        guard let keep = log.breaks.first(where: { $0.startDate >= cutoff }) else { return windowHead }
        return min(windowHead, keep.startMediaSequence)
    }
}
