public import HeadwaterLiveWindow
import Metrics
public import Prometheus
import Synchronization

/// Every metric Headwater exports at `/metrics`, in one Prometheus registry: HTTP requests by route
/// template, playlist renders and gzip savings, ingest, stalls, config reloads, the live-edge age
/// of each channel (computed when scraped), open connections, the build and the process
/// (`process_*`, read from `/proc` when scraped). README.md "Logs, metrics and health" lists them.
///
/// One instance per process in production (``shared``, exported by the server and bound to
/// swift-metrics by ``bootstrap()``); tests make their own, with a fresh registry, and pass it in,
/// so their counts are exact whatever runs in parallel:
///
/// ```swift
/// let metrics = OriginMetrics()
/// var configuration = OriginServerConfiguration(port: 0)
/// configuration.metrics = metrics
/// ```
///
/// Every component that counts is given its instance when it is made (the composition root passes
/// ``shared``; a test passes its own): there is no ambient instance to report to.
///
/// Labels are bounded by construction: route templates (never a raw URI), configured channel
/// names, enum reasons. Nothing is labelled by session, URI or creative.
///
/// Every labelled counter whose label values are known in advance is exported at 0 before its
/// first event, so `rate()` and `increase()` see that event: fixed label sets when the instance
/// is made, each configured channel's series at the first scrape that lists it (also after a
/// reload adds one; ``exposition(channels:)``), a source's own when it is set up
/// (``counters(_:help:labels:by:values:)``).
public final class OriginMetrics: Sendable {
    /// What a configuration reload ended in (`headwater_config_reloads_total{result}`).
    public enum ConfigReloadResult: String, Sendable, Hashable, CaseIterable {
        /// The new configuration was valid and is now serving.
        case applied
        /// The files were read again and nothing had changed.
        case unchanged
        /// The new configuration was invalid; the previous one keeps serving.
        case rejected
    }

    /// Which kind of playlist was rendered (`headwater_playlist_renders_total{kind}`).
    public enum PlaylistKind: String, Sendable, Hashable, CaseIterable {
        case media
        case multivariant
    }

    /// The registry `/metrics` emits.
    public let registry: PrometheusCollectorRegistry

    /// The process's instance: what ``bootstrap()`` binds swift-metrics to, and what the server
    /// exports unless given another.
    public static let shared = OriginMetrics()

    /// Upper bounds of the request duration histogram, in seconds: playlists answer in well under
    /// a millisecond, segments to slow clients can take seconds.
    public static let durationBuckets: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500),
        .milliseconds(1), .microseconds(2_500), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .milliseconds(2_500), .seconds(5), .seconds(10), .seconds(30),
    ]

    private struct RequestKey: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    /// Handles of the per-request series, so a request costs one lock and no registry lookup.
    private struct RequestSeriesTable {
        var requests: [RequestKey: Prometheus.Counter] = [:]
        var durations: [String: DurationHistogram] = [:]
        var bytes: [String: Prometheus.Counter] = [:]
    }

    private let requestSeries = Mutex(RequestSeriesTable())
    /// Playlist bytes (sent, identity size) by content coding: every playlist request adds to one pair.
    private let gzipPlaylistBytes: (sent: Prometheus.Counter, uncompressed: Prometheus.Counter)
    private let identityPlaylistBytes: (sent: Prometheus.Counter, uncompressed: Prometheus.Counter)
    /// `headwater_stitched_playlists_total{outcome="ok"}`: counted on every stitched playlist
    /// served, so looked up once rather than per request (``stitchedPlaylist(outcome:)``).
    let stitchedPlaylistsServed: Prometheus.Counter
    /// Channels whose scrape-time gauges exist, to unregister those of removed channels.
    private let scrapedChannels = Mutex<[String: ChannelGauges]>([:])

    /// A channel's scrape-time gauges; age and target duration exist only once known.
    private struct ChannelGauges {
        var ready: Prometheus.Gauge
        var age: Prometheus.Gauge?
        var targetDuration: Prometheus.Gauge?

        var all: [Prometheus.Gauge] { [ready] + [age, targetDuration].compactMap { $0 } }
    }
    /// `headwater_http_open_connections`: accepted minus closed (``connectionOpened()``).
    let openConnections: Prometheus.Gauge
    /// `headwater_held_requests`: requests waiting for a later playlist version (blocking reload).
    let heldRequests: Prometheus.Gauge
    /// The `process_*` series, `nil` where there is no `/proc`.
    private let process: ProcessMetrics?

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        self.gzipPlaylistBytes = (
            Self.counter(in: registry, "headwater_playlist_sent_bytes_total", labels: [("encoding", "gzip")]),
            Self.counter(in: registry, "headwater_playlist_uncompressed_bytes_total", labels: [("encoding", "gzip")])
        )
        self.identityPlaylistBytes = (
            Self.counter(in: registry, "headwater_playlist_sent_bytes_total", labels: [("encoding", "identity")]),
            Self.counter(
                in: registry, "headwater_playlist_uncompressed_bytes_total", labels: [("encoding", "identity")])
        )
        self.stitchedPlaylistsServed = registry.makeCounter(
            descriptor: Self.descriptor("headwater_stitched_playlists_total", help: Self.stitchedPlaylistsHelp),
            labels: [("outcome", "ok")])
        self.openConnections = registry.makeGauge(
            descriptor: Self.descriptor(
                "headwater_http_open_connections",
                help: "Client connections open now (accepted and not yet closed), whichever path serves them."),
            labels: [])
        self.heldRequests = registry.makeGauge(
            descriptor: Self.descriptor(
                "headwater_held_requests",
                help: "Requests held open until a later playlist version (low-latency HLS blocking reload, _HLS_msn)."),
            labels: [])
        self.process = ProcessMetrics(registry: registry)
        for result in ConfigReloadResult.allCases { _ = configReloads(result) }
        for kind in PlaylistKind.allCases { _ = playlistRenders(kind) }
        for outcome in StitchedPlaylistOutcome.allCases { _ = stitchedPlaylists(outcome.rawValue) }
        _ = ingestRejections(channel: "")
        registerBuildInfo()
    }

    /// Binds swift-metrics (`MetricsSystem`) to the ``shared`` registry, so metrics that libraries
    /// emit through swift-metrics appear at `/metrics` too (with help text:
    /// ``DescribedMetricsFactory``), and returns ``shared``. Call once, at the start of the executable.
    @discardableResult
    public static func bootstrap() -> OriginMetrics {
        MetricsSystem.bootstrap(DescribedMetricsFactory(registry: shared.registry))
        return shared
    }

    // MARK: - HTTP

    /// One answered request: `route` is the route template (`/live/{channel}/{rendition}.m3u8`),
    /// `method` one of a fixed set (others are counted as `_OTHER`), `bytes` the body bytes sent.
    public func requestServed(route: String, method: String, status: Int, duration: Duration, bytes: Int64) {
        requestSeries(route: route, method: method, status: status).record(duration: duration, bytes: bytes)
    }

    /// The series one kind of request (route template, method, status) is counted in: what
    /// ``requestServed(route:method:status:duration:bytes:)`` looks up on every request, for a
    /// caller that answers the same kind of request many times to look up once.
    public struct RequestSeries: Sendable {
        fileprivate let requests: Prometheus.Counter
        fileprivate let duration: DurationHistogram
        fileprivate let bytes: Prometheus.Counter

        /// Counts one request that took `duration` and sent `bytes` of body.
        public func record(duration: Duration, bytes: Int64) {
            requests.increment()
            self.duration.record(duration)
            self.bytes.increment(by: max(0, bytes))
        }
    }

    public func requestSeries(route: String, method: String, status: Int) -> RequestSeries {
        let method = Self.knownMethods.contains(method) ? method : "_OTHER"
        let key = RequestKey(route: route, method: method, status: status)
        return requestSeries.withLock { series in
            let requests: Prometheus.Counter
            if let existing = series.requests[key] {
                requests = existing
            } else {
                requests = counter(
                    "headwater_http_requests_total",
                    labels: [("route", route), ("method", method), ("status", String(status))],
                    help: "HTTP requests answered, by route template, method and status code."
                )
                series.requests[key] = requests
            }
            if let histogram = series.durations[route], let bytesOut = series.bytes[route] {
                return RequestSeries(requests: requests, duration: histogram, bytes: bytesOut)
            }
            let histogram = durationHistogram(
                "headwater_http_request_duration_seconds",
                labels: [("route", route)],
                buckets: Self.durationBuckets,
                help: "Time from the request head to the last response byte written, by route template."
            )
            let bytesOut = counter(
                "headwater_http_response_body_bytes_total",
                labels: [("route", route)],
                help: "Response body bytes sent, by route template."
            )
            series.durations[route] = histogram
            series.bytes[route] = bytesOut
            return RequestSeries(requests: requests, duration: histogram, bytes: bytesOut)
        }
    }

    private static let knownMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "PUT", "POST", "DELETE"]

    /// A playlist body was sent: `bytes` on the wire in `encoding` (`gzip` or `identity`), and
    /// `uncompressedBytes` it would have been without compression.
    public func playlistSent(gzip: Bool, bytes: Int64, uncompressedBytes: Int64) {
        let counters = gzip ? gzipPlaylistBytes : identityPlaylistBytes
        counters.sent.increment(by: max(0, bytes))
        counters.uncompressed.increment(by: max(0, uncompressedBytes))
    }

    // MARK: - Rendering and ingest

    /// A playlist version was rendered (serialized and compressed): once per version, not per request.
    public func playlistRendered(_ kind: PlaylistKind) {
        playlistRenders(kind).increment()
    }

    private func playlistRenders(_ kind: PlaylistKind) -> Prometheus.Counter {
        counter(
            "headwater_playlist_renders_total",
            labels: [("kind", kind.rawValue)],
            help: "Playlist versions rendered and compressed, by kind."
        )
    }

    /// `count` files (segments, init sections, keys) of `bytes` in total were accepted for `channel`.
    public func ingested(channel: String, count: Int, bytes: Int64) {
        guard count > 0 else { return }
        let counters = ingestCounters(channel)
        counters.segments.increment(by: Int64(count))
        counters.bytes.increment(by: max(0, bytes))
    }

    /// An input was refused. `channel` is `nil` when the request named no configured channel
    /// (its name is then not used as a label).
    public func ingestRejected(channel: String?, reason: IngestCounters.Reason) {
        ingestRejections(channel: channel ?? "").increment(reason)
    }

    private func ingestCounters(_ channel: String) -> (segments: Prometheus.Counter, bytes: Prometheus.Counter) {
        (
            counter(
                "headwater_ingest_segments_total",
                labels: [("channel", channel)],
                help: "Segment files (with init sections and keys) accepted from the source, by channel."
            ),
            counter(
                "headwater_ingest_bytes_total",
                labels: [("channel", channel)],
                help: "Bytes of the segment files accepted from the source, by channel."
            )
        )
    }

    private func ingestRejections(channel: String) -> LabelledCounters<IngestCounters.Reason> {
        counters(
            "headwater_ingest_rejected_total",
            help: "Inputs refused (uploads, files, upstream responses), by channel and reason.",
            labels: [("channel", channel)], by: "reason")
    }

    // MARK: - Operations

    /// The source of `channel` stalled: nothing new for more than 1½ target durations. Count each
    /// stall once, when it starts.
    public func stallDetected(channel: String) {
        stalls(channel).increment()
    }

    /// A configuration reload finished with `result`.
    public func configReload(result: ConfigReloadResult) {
        configReloads(result).increment()
    }

    /// Every counter labelled by `channel` alone or with a fixed set of other labels, made at 0
    /// when a scrape first lists the channel (at start, or after a reload added it).
    private func registerChannelSeries(_ channel: String) {
        _ = ingestCounters(channel)
        _ = ingestRejections(channel: channel)
        _ = stalls(channel)
        registerAdSeries(channel: channel)
    }

    private func stalls(_ channel: String) -> Prometheus.Counter {
        counter(
            "headwater_stalls_total",
            labels: [("channel", channel)],
            help: "Source stalls (no new segment for more than 1.5 target durations), by channel."
        )
    }

    private func configReloads(_ result: ConfigReloadResult) -> Prometheus.Counter {
        counter(
            "headwater_config_reloads_total",
            labels: [("result", result.rawValue)],
            help: "Configuration reloads, by result."
        )
    }

    // MARK: - Exposition

    /// The Prometheus text exposition (format 0.0.4), after setting each channel's scrape-time
    /// gauges from `channels` (the current health of every configured channel). Gauges of
    /// channels no longer configured are removed.
    public func exposition(channels: [ChannelHealth]) -> [UInt8] {
        process?.update()
        scrapedChannels.withLock { scraped in
            var seen: Set<String> = []
            for channel in channels {
                seen.insert(channel.name)
                if scraped[channel.name] == nil { registerChannelSeries(channel.name) }
                var gauges = scraped[channel.name] ?? ChannelGauges(ready: makeReadyGauge(channel.name))
                // No segment yet: no age, rather than a made-up one; likewise the target duration.
                gauges.age = set(gauges.age, to: channel.liveEdgeAgeSeconds) { makeAgeGauge(channel.name) }
                gauges.targetDuration = set(
                    gauges.targetDuration, to: channel.targetDuration > 0 ? Double(channel.targetDuration) : nil
                ) { makeTargetDurationGauge(channel.name) }
                gauges.ready.set(to: channel.isReady ? 1 : 0)
                scraped[channel.name] = gauges
            }
            for (name, gauges) in scraped where !seen.contains(name) {
                for gauge in gauges.all { registry.unregisterGauge(gauge) }
                scraped[name] = nil
            }
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 * 1024)
        registry.emit(into: &buffer)
        return buffer
    }

    // MARK: - Registry

    func counter(_ name: String, labels: [(String, String)], help: String) -> Prometheus.Counter {
        registry.makeCounter(descriptor: Self.descriptor(name, help: help), labels: labels)
    }

    /// The playlist byte counters, made before `self` exists (their help text is fixed here).
    private static func counter(
        in registry: PrometheusCollectorRegistry, _ name: String, labels: [(String, String)]
    ) -> Prometheus.Counter {
        let help =
            name == "headwater_playlist_sent_bytes_total"
            ? "Playlist body bytes sent, by content coding."
            : "Identity size of the playlist bodies sent, by the content coding they were sent in."
        return registry.makeCounter(descriptor: descriptor(name, help: help), labels: labels)
    }

    private func gauge(_ name: String, labels: [(String, String)], help: String) -> Prometheus.Gauge {
        registry.makeGauge(descriptor: Self.descriptor(name, help: help), labels: labels)
    }

    private func durationHistogram(
        _ name: String, labels: [(String, String)], buckets: [Duration], help: String
    ) -> DurationHistogram {
        registry.makeDurationHistogram(descriptor: Self.descriptor(name, help: help), labels: labels, buckets: buckets)
    }

    /// `name` is the whole metric name (`headwater_…_total`).
    static func descriptor(_ name: String, help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    /// `gauge` (made by `make` if need be) set to `value`, or unregistered when there is no value.
    private func set(
        _ gauge: Prometheus.Gauge?, to value: Double?, make: () -> Prometheus.Gauge
    ) -> Prometheus.Gauge? {
        guard let value else {
            if let gauge { registry.unregisterGauge(gauge) }
            return nil
        }
        let existing = gauge ?? make()
        existing.set(to: value)
        return existing
    }

    private func makeTargetDurationGauge(_ channel: String) -> Prometheus.Gauge {
        gauge(
            "headwater_channel_target_duration_seconds",
            labels: [("channel", channel)],
            help: "The channel's EXT-X-TARGETDURATION, to compare the live-edge age with."
        )
    }

    private func makeAgeGauge(_ channel: String) -> Prometheus.Gauge {
        gauge(
            "headwater_channel_live_edge_age_seconds",
            labels: [("channel", channel)],
            help: "Seconds since the newest segment of the channel arrived from its source, when scraped."
        )
    }

    private func makeReadyGauge(_ channel: String) -> Prometheus.Gauge {
        gauge(
            "headwater_channel_ready",
            labels: [("channel", channel)],
            help: "1 when the channel is live and fresh (what /readyz requires of every channel), else 0."
        )
    }
}

extension OriginMetrics: Hashable {
    /// Identity: two values are equal when they are the same instance (the same registry).
    public static func == (lhs: OriginMetrics, rhs: OriginMetrics) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
