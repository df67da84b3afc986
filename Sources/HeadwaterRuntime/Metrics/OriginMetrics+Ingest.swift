public import HeadwaterHLS
public import Logging
import Synchronization

extension OriginMetrics {
    /// `headwater_ingest_deviations_total{channel, rule}`: one series per ``IngestDeviation/Rule``,
    /// all made at 0 when `channel` is configured, so `increase()` sees the first deviation.
    public func ingestDeviations(channel: String) -> LabelledCounters<IngestDeviation.Rule> {
        counters(
            "headwater_ingest_deviations_total",
            help: "Deviations from RFC 8216bis that ingest tolerated in source playlists (read as the canonical form, never re-emitted), by channel and rule.",
            labels: [("channel", channel)], by: "rule", values: IngestDeviation.Rule.self)
    }

    /// What one channel's ingest tolerated: every deviation counted, each rule logged once.
    ///
    /// An encoder writes the same deviation into every version of its playlist, several times a
    /// second per rendition: a warning per occurrence would drown the log, and one per reload would
    /// repeat it forever. So the first occurrence of each rule is logged (with the file and line, to
    /// show the operator what their encoder does) and the rest only counted. Push, directory and pull
    /// ingest each keep one per channel, for as long as the channel lives.
    public final class IngestDeviations: Sendable {
        public let channel: String
        private let counters: LabelledCounters<IngestDeviation.Rule>
        private let logger: Logger
        private let logged = Mutex<Set<IngestDeviation.Rule>>([])

        /// Makes the channel's series (at 0) in `metrics`.
        public init(channel: String, metrics: OriginMetrics, logger: Logger) {
            self.channel = channel
            self.counters = metrics.ingestDeviations(channel: channel)
            self.logger = logger
        }

        /// Parses a playlist read at `path` of the source with
        /// ``PlaylistParser/parseTolerating(_:)`` and records what it tolerated: how every ingest
        /// path reads playlists.
        ///
        /// - Throws: the parse error of a playlist that is broken, not merely deviant.
        public func parse(_ bytes: [UInt8], path: String) throws(PlaylistParseError) -> Playlist {
            let (playlist, deviations) = try PlaylistParser().parseTolerating(bytes)
            record(deviations, path: path)
            return playlist
        }

        /// Counts `deviations`, found in the playlist at `path` of the source, and logs each rule
        /// not logged before for this channel.
        public func record(_ deviations: [IngestDeviation], path: String) {
            guard !deviations.isEmpty else { return }
            var first: [IngestDeviation] = []
            logged.withLock { logged in
                for deviation in deviations where logged.insert(deviation.rule).inserted { first.append(deviation) }
            }
            for deviation in deviations { counters.increment(deviation.rule) }
            for deviation in first {
                logger.warning(
                    "\(path):\(deviation.line): \(deviation.rule.rawValue): \(deviation.message) (tolerated and served in canonical form; further occurrences are only counted)",
                    metadata: [
                        "hls.channel.id": "\(channel)", "source.path": "\(path)",
                        "hls.ingest.rule": "\(deviation.rule.rawValue)",
                    ])
            }
        }

        /// The rules logged so far (each once).
        public var loggedRules: Set<IngestDeviation.Rule> { logged.withLock { $0 } }
    }
}
