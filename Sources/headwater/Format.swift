import ArgumentParser
import HeadwaterHLS

struct Format: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fmt", abstract: "Print a playlist in canonical form.")
    @Argument(help: "Playlist file, or - for standard input.") var file: String
    func run() throws {}
}
