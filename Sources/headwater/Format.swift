import ArgumentParser
import Foundation
import HeadwaterHLS

/// `headwater fmt FILE`: prints the canonical serialization. Idempotent: `fmt` of `fmt` is identical.
struct Format: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fmt",
        abstract: "Print a playlist in Headwater's canonical form.",
        discussion: """
            Exit status 1 with FILE:LINE: code: message on standard error when the playlist does not parse, \
            or when a variable is used before its EXT-X-DEFINE (writing the definition in the header would \
            change the playlist's meaning). PROGRAM-DATE-TIME keeps the precision it was written with.
            """
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
        let playlist: Playlist
        do {
            playlist = try PlaylistParser().parse(bytes)
        } catch {
            fail(CLIError("\(input.displayName):\(error.line): \(error.code): \(error.message)"))
        }
        // The canonical form writes EXT-X-DEFINE in the header: above a use that preceded it, which
        // would turn a playlist clients refuse into a different one they accept.
        if let early = PlaylistValidator.undefinedVariables(in: bytes).first(where: { $0.definedAt != nil }) {
            fail(
                CLIError(
                    "\(input.displayName):\(early.line): A13: {$\(early.name)} is used before its EXT-X-DEFINE on line \(early.definedAt ?? 0); fmt would move the definition above the use and change the playlist's meaning"
                ))
        }
        FileHandle.standardOutput.write(Data(PlaylistSerializer.serialize(playlist)))
    }
}
