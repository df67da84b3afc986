import ArgumentParser

/// `headwater`: the HLS live origin and its tools.
@main
struct Headwater: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "headwater",
        abstract: "HLS live origin with per-session ad stitching, and its playlist and SCTE-35 tools.",
        subcommands: [Serve.self, CheckConfig.self, Lint.self, Format.self, SCTE35Command.self]
    )
}
