import Metrics
import Prometheus

/// The swift-metrics factory ``OriginMetrics/bootstrap()`` installs: metrics that code reports
/// through swift-metrics (the beacon dispatcher's `headwater_beacons_total`, any library's) land
/// in the same registry as the rest, each with a `# HELP` line.
///
/// swift-prometheus's own `PrometheusMetricsFactory` registers them with no help text, which
/// `promtool check metrics` rejects; and the registry refuses a second registration of a name with
/// different help, so the help must be given where the series is made: here.
struct DescribedMetricsFactory: MetricsFactory {
    let registry: PrometheusCollectorRegistry
    /// Only for its default histogram buckets.
    private let defaults: PrometheusMetricsFactory

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        self.defaults = PrometheusMetricsFactory(registry: registry)
    }

    /// Help text of the metrics Headwater reports through swift-metrics, by name.
    static let help: [String: String] = [
        "headwater_beacons_total":
            "Server-side ad tracking beacon URLs, by event and outcome (sent, failed, dropped, duplicate)."
    ]

    /// What an unknown metric's help says: that it came from a library, under its own name.
    static func help(for label: String) -> String {
        help[label] ?? "Reported through swift-metrics as \(label)."
    }

    private func descriptor(_ label: String) -> MetricNameDescriptor {
        OriginMetrics.descriptor(label, help: Self.help(for: label))
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: descriptor(label), labels: dimensions) }
        return registry.makeValueHistogram(
            descriptor: descriptor(label), labels: dimensions, buckets: defaults.defaultValueHistogramBuckets)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(
            descriptor: descriptor(label), labels: dimensions, buckets: defaults.defaultDurationHistogramBuckets)
    }

    func destroyCounter(_ handler: any CounterHandler) { defaults.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        defaults.destroyFloatingPointCounter(handler)
    }
    func destroyRecorder(_ handler: any RecorderHandler) { defaults.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { defaults.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { defaults.destroyTimer(handler) }
}
