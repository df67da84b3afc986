import ArgumentParser

/// `headwater-bench`: performance measurements, printed as figures (and, for server workloads,
/// ratios against a reference measured in the same run). Benchmarks are not tests: run them in
/// release builds on a quiet machine, `swift run -c release headwater-bench parse` (or `stitch`, `ssai`,
/// `all`).
@main
struct HeadwaterBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "headwater-bench",
        abstract: "Headwater benchmarks.",
        subcommands: [ParseBenchmark.self, StitchBenchmark.self, SSAIBenchmark.self, AllBenchmark.self, EncryptBenchmark.self]
    )
}
