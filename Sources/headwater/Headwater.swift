import ArgumentParser

/// `headwater`: the HLS live origin and its tools.
@main
struct Headwater: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "headwater",
        abstract: "HLS live origin with per-session ad stitching, and its playlist and SCTE-35 tools.",
        subcommands: [Lint.self, Format.self, SCTE35Command.self]
    )
}
