import ArgumentParser
import Foundation
import HeadwaterHLS

/// `headwater lint FILE…`: checks playlists against ../shared/HLS-RULES.md and prints one line per
/// problem, `FILE:LINE: RULE: message`, in the format editors and CI annotate.
///
/// It reads a playlist as ingest does (``PlaylistParser/parseTolerating(_:)``): a form players accept
/// and Headwater tolerates is a warning with its `tolerate.…` rule id, not a failure; what the
/// tolerant parse refuses is an error, as is every broken MUST.
struct Lint: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check playlists against the HLS rules.",
        discussion: """
            Prints FILE:LINE: RULE: message for each problem, in line order (RULE is an id from \
            HLS-RULES.md, a tolerate.… id for a deviation that players accept and ingest tolerates, \
            or the parse error code). Exit status 0 when there are no errors, 1 when there are errors \
            (warnings, tolerated deviations included, do not fail unless --strict).
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
        let parsed: (playlist: Playlist, sourceMap: SourceMap, deviations: [IngestDeviation])
        do {
            parsed = try PlaylistParser().parseToleratingWithSourceMap(bytes)
        } catch {
            report("\(input.displayName):\(error.line): \(error.code): \(error.message)")
            return true
        }
        var issues = PlaylistValidator.checkVariableReferences(bytes) + PlaylistValidator.validate(parsed.playlist)
        if let previous {
            let previousInput = InputFile(path: previous)
            do {
                guard case .media(let old) = try PlaylistParser().parseTolerating(try previousInput.read()).playlist else {
                    report("\(previousInput.displayName):1: mixed-playlist-kinds: --previous needs a media playlist")
                    return true
                }
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
        // One list in line order: what the parse tolerated (warnings with the deviation's rule id),
        // then the rules broken at each line.
        var problems: [(line: Int, text: String, isError: Bool)] = parsed.deviations.map {
            ($0.line, "\($0.rule.rawValue): warning: \($0.message)", false)
        }
        for issue in issues {
            let severity = issue.severity == .warning ? "warning: " : ""
            problems.append((parsed.sourceMap.line(for: issue.location), "\(issue.rule): \(severity)\(issue.message)", issue.severity == .error))
        }
        var failed = false
        for problem in problems.enumerated().sorted(by: { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }) {
            report("\(input.displayName):\(problem.element.line): \(problem.element.text)")
            if problem.element.isError || strict { failed = true }
        }
        return failed
    }

    private func report(_ line: String) {
        if !quiet { print(line) }
    }
}
