import ArgumentParser
import HeadwaterHLS

struct Lint: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check a playlist against the HLS rules.")
    @Argument(help: "Playlist file, or - for standard input.") var file: String
    func run() throws {}
}
