import ArgumentParser
import Foundation
import HeadwaterHLS

/// `headwater lint FILE…`: checks playlists against ../shared/HLS-RULES.md and prints one line per
/// problem, `FILE:LINE: RULE: message`, in the format editors and CI annotate.
struct Lint: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check playlists against the HLS rules.",
        discussion: """
            Prints FILE:LINE: RULE: message for each problem (RULE is an id from HLS-RULES.md, or the \
            parse error code). Exit status 0 when there are no errors, 1 when there are errors \
            (warnings alone do not fail unless --strict).
            With --previous, also checks that FILE is a legal next version of the live playlist \
            PREVIOUS (RFC 8216bis §6.2.1-6.2.2).
            """
    )

    @Argument(help: "Playlist files, or - for standard input.") var files: [String]
    @Option(help: "An earlier version of the same live media playlist, to check the update rules.")
    var previous: String?
    @Flag(help: "Treat warnings as errors.") var strict = false
    @Flag(name: .shortAndLong, help: "Print nothing; only the exit status tells.") var quiet = false

    func run() throws {
        var failed = false
        for path in files {
            failed = lint(InputFile(path: path)) || failed
        }
        if failed { throw ExitCode(1) }
    }

    /// Lints one file; returns whether it failed.
    private func lint(_ input: InputFile) -> Bool {
        let bytes: [UInt8]
        do {
            bytes = try input.read()
        } catch {
            report("\(error)")
            return true
        }
        let parsed: (playlist: Playlist, sourceMap: SourceMap)
        do {
            parsed = try PlaylistParser().parseWithSourceMap(bytes)
        } catch {
            report("\(input.displayName):\(error.line): \(error.code): \(error.message)")
            return true
        }
        var issues = PlaylistValidator.validate(parsed.playlist)
        if let previous {
            let previousInput = InputFile(path: previous)
            do {
                let old = try PlaylistParser().parseMedia(try previousInput.read())
                guard case .media(let next) = parsed.playlist else {
                    report("\(input.displayName):1: mixed-playlist-kinds: --previous needs a media playlist")
                    return true
                }
                issues += LiveUpdateChecker.check(previous: old, next: next)
            } catch let error as PlaylistParseError {
                report("\(previousInput.displayName):\(error.line): \(error.code): \(error.message)")
                return true
            } catch {
                report("\(error)")
                return true
            }
        }
        var failed = false
        for issue in issues {
            let line = parsed.sourceMap.line(for: issue.location)
            let severity = issue.severity == .warning ? "warning: " : ""
            report("\(input.displayName):\(line): \(issue.rule): \(severity)\(issue.message)")
            if issue.severity == .error || strict { failed = true }
        }
        return failed
    }

    private func report(_ line: String) {
        if !quiet { print(line) }
    }
}
