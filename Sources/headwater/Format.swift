import ArgumentParser
import Foundation
import HeadwaterHLS

/// `headwater fmt FILE`: prints the canonical serialization. Idempotent: `fmt` of `fmt` is identical.
struct Format: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fmt",
        abstract: "Print a playlist in Headwater's canonical form.",
        discussion: "Exit status 1 with FILE:LINE: code: message on standard error when the playlist does not parse."
    )

    @Argument(help: "Playlist file, or - for standard input.") var file: String

    func run() throws {
        let input = InputFile(path: file)
        let bytes: [UInt8]
        do {
            bytes = try input.read()
        } catch let error as CLIError {
            fail(error)
        }
        do {
            let playlist = try PlaylistParser().parse(bytes)
            FileHandle.standardOutput.write(Data(PlaylistSerializer.serialize(playlist)))
        } catch {
            fail(CLIError("\(input.displayName):\(error.line): \(error.code): \(error.message)"))
        }
    }
}
