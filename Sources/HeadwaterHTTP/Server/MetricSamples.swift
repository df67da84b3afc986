/// Counter values read back from ``OriginMetrics``' Prometheus exposition, for `/api/status`: the
/// Prometheus client keeps no readable value, and reading the text `/metrics` serves means the
/// status page shows exactly what an operator's Prometheus scrapes.
///
/// Reads the text format's sample lines (`name{label="value",…} number`); comments and series of
/// other names are skipped.
struct MetricSamples: Sendable {
    struct Sample: Sendable, Hashable {
        var labels: [String: String]
        var value: Double
    }

    private var samples: [String: [Sample]] = [:]

    init(exposition: [UInt8], names: Set<String>) {
        for line in exposition.split(separator: UInt8(ascii: "\n")) where line.first != UInt8(ascii: "#") {
            guard let sample = Self.parse(line), names.contains(sample.name) else { continue }
            samples[sample.name, default: []].append(Sample(labels: sample.labels, value: sample.value))
        }
    }

    /// The sum of `name`'s samples matching `filter`, by the value of `label`.
    func sum(_ name: String, by label: String, where filter: [String: String] = [:]) -> [String: UInt64] {
        var sums: [String: UInt64] = [:]
        for sample in samples[name] ?? [] where filter.allSatisfy({ sample.labels[$0.key] == $0.value }) {
            guard let key = sample.labels[label], sample.value.isFinite, sample.value >= 0 else { continue }
            sums[key, default: 0] += UInt64(sample.value)
        }
        return sums
    }

    /// One sample line: the name, its labels (values unescaped) and its value.
    static func parse(_ line: ArraySlice<UInt8>) -> (name: String, labels: [String: String], value: Double)? {
        var index = line.startIndex
        while index < line.endIndex, line[index] != UInt8(ascii: "{"), line[index] != UInt8(ascii: " ") { index += 1 }
        let name = String(decoding: line[line.startIndex..<index], as: UTF8.self)
        var labels: [String: String] = [:]
        if index < line.endIndex, line[index] == UInt8(ascii: "{") {
            index += 1
            while index < line.endIndex, line[index] != UInt8(ascii: "}") {
                let keyStart = index
                while index < line.endIndex, line[index] != UInt8(ascii: "=") { index += 1 }
                let key = String(decoding: line[keyStart..<index], as: UTF8.self)
                // `="`, then the value up to the closing quote; `\\`, `\"` and `\n` are escapes.
                index += 2
                var value: [UInt8] = []
                while index < line.endIndex, line[index] != UInt8(ascii: "\"") {
                    if line[index] == UInt8(ascii: "\\"), index + 1 < line.endIndex {
                        index += 1
                        value.append(line[index] == UInt8(ascii: "n") ? UInt8(ascii: "\n") : line[index])
                    } else {
                        value.append(line[index])
                    }
                    index += 1
                }
                guard index < line.endIndex else { return nil }
                labels[key] = String(decoding: value, as: UTF8.self)
                index += 1  // the closing quote
                if index < line.endIndex, line[index] == UInt8(ascii: ",") { index += 1 }
            }
            guard index < line.endIndex else { return nil }
            index += 1  // `}`
        }
        let rest = line[index...].split(separator: UInt8(ascii: " "))
        guard let first = rest.first, let value = Double(String(decoding: first, as: UTF8.self)) else { return nil }
        return (name, labels, value)
    }
}
