import ArgumentParser
import HeadwaterConfiguration
import HeadwaterSources

/// `headwater check-config [FILE]`: validates a configuration (and loads every channel's source)
/// without serving. Exit 0 when valid, 78 (EX_CONFIG) with `file:line: key.path: message` lines.
struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a configuration file without serving (exit 0, or 78 with every problem)."
    )

    @Argument(help: "Configuration file (default: Config/headwater.yaml, else the embedded demo configuration).")
    var file: String?

    func run() throws {
        do {
            let loaded = try ConfigurationLoading.load(path: file)
            let configuration = loaded.configuration
            print("\(loaded.file): ok, \(configuration.channels.count) channel(s): \(configuration.channels.map(\.name).joined(separator: ", "))")
        } catch {
            ConfigurationLoading.exit(with: error)
        }
    }
}
