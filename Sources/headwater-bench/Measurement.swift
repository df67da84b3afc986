import CHeadwaterAllocationCounter

/// Runs `body` repeatedly for at least `minimumDuration` (after a warm-up) and reports the median
/// time per iteration of several rounds and the allocations per iteration.
struct Measurement {
    var nanosecondsPerIteration: Double
    var allocationsPerIteration: Double
    var iterations: Int

    static func run(minimumDuration: Duration = .milliseconds(400), rounds: Int = 5, _ body: () -> Void) -> Measurement {
        let clock = ContinuousClock()
        // Warm-up and calibration: find an iteration count that takes ~minimumDuration / rounds.
        var iterations = 1
        while true {
            let elapsed = clock.measure { for _ in 0..<iterations { body() } }
            if elapsed >= minimumDuration / rounds || iterations >= 1 << 24 { break }
            iterations *= 2
        }
        var samples: [Double] = []
        var allocations: UInt64 = 0
        for _ in 0..<rounds {
            let before = headwater_allocation_count()
            let elapsed = clock.measure { for _ in 0..<iterations { body() } }
            allocations += headwater_allocation_count() - before
            samples.append(Double(elapsed.components.attoseconds) / 1e9 + Double(elapsed.components.seconds) * 1e9)
        }
        samples.sort()
        let median = samples[samples.count / 2] / Double(iterations)
        return Measurement(
            nanosecondsPerIteration: median,
            allocationsPerIteration: Double(allocations) / Double(iterations * rounds),
            iterations: iterations
        )
    }
}

/// Keeps the optimizer from deleting work whose result is unused.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

func leftPad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}

func format(_ value: Double, decimals: Int = 1) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    if decimals == 0, rounded.magnitude < 1e15 { return String(Int(rounded)) }
    var text = String(rounded)
    if let dot = text.firstIndex(of: ".") {
        let fraction = text[text.index(after: dot)...]
        if fraction.count < decimals { text += String(repeating: "0", count: decimals - fraction.count) }
    } else if decimals > 0 {
        text += "." + String(repeating: "0", count: decimals)
    }
    return text
}
