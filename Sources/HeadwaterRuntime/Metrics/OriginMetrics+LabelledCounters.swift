import Prometheus

extension OriginMetrics {
    /// One counter of a metric for every value of a label whose values are known in advance
    /// (a reason, an outcome, a kind), all made, at 0, when this is.
    ///
    /// A series that appears only at its first event breaks `rate()` and `increase()` across that
    /// event (Prometheus sees no earlier sample, so the first increment is lost), and an alert on
    /// it misses the first occurrence. Making every series up front avoids both:
    ///
    /// ```swift
    /// let failures = metrics.counters(
    ///     "headwater_pull_failures_total", help: "…", labels: [("channel", name)], by: "reason",
    ///     values: PullCounters.Failure.self)
    /// failures.increment(.timeout)
    /// ```
    ///
    /// Make it where the fixed labels become known (a channel when it is configured, also on
    /// reload), keep it, and count into it: an increment costs no registry lookup.
    public struct LabelledCounters<Value: RawRepresentable & CaseIterable & Hashable & Sendable>: Sendable
    where Value.RawValue == String {
        private let counters: [Value: Prometheus.Counter]

        fileprivate init(_ counters: [Value: Prometheus.Counter]) { self.counters = counters }

        /// Adds `amount` to the series of `value`.
        public func increment(_ value: Value, by amount: Int64 = 1) {
            counters[value]?.increment(by: max(0, amount))
        }
    }

    /// The series of `name` with `labels` and then `label` set to each value of `Value`, made now
    /// (at 0) if they do not exist yet; the same series as every earlier call with these labels.
    public func counters<Value>(
        _ name: String, help: String, labels: [(String, String)] = [], by label: String,
        values: Value.Type = Value.self
    ) -> LabelledCounters<Value> {
        var counters: [Value: Prometheus.Counter] = [:]
        for value in Value.allCases {
            counters[value] = counter(name, labels: labels + [(label, value.rawValue)], help: help)
        }
        return LabelledCounters(counters)
    }
}
