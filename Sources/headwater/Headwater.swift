import ArgumentParser
import HeadwaterRuntime

/// `headwater`: the HLS live origin and its tools.
@main
struct Headwater: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "headwater",
        abstract: "HLS live origin with per-session ad stitching, and its playlist and SCTE-35 tools.",
        // `headwater --version` prints this and exits 0 (ArgumentParser's own flag).
        version: HeadwaterVersion.current,
        subcommands: [Serve.self, CheckConfig.self, Lint.self, Format.self, SCTE35Command.self, KeyTokenCommand.self]
    )
}
