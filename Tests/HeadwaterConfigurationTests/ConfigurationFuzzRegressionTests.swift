import HeadwaterConfiguration
import Testing

/// Inputs the `config` fuzz target (Sources/headwater-fuzz) found, each kept as the smallest text
/// that showed the bug.
@Suite("Configuration fuzz regressions")
struct ConfigurationFuzzRegressionTests {
    /// libyaml reports a syntax error found at the end of the stream on the line after the last
    /// one (it ends the last line itself); `check-config` printed `h.yaml:4:` for a 3-line file,
    /// a line no editor can go to. Found by the fuzzer from the shipped Config/headwater.yaml.
    @Test("a YAML error at the end of the file names its last line, with or without a final newline", arguments: [
        "server:\n  cors: true\nchannels", "server:\n  cors: true\nchannels\n",
    ])
    func syntaxErrorAtEndOfFile(text: String) throws {
        let error = try #require(throws: ConfigurationError.self) {
            try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/c")
        }
        #expect(error.problems.map(\.description) == ["h.yaml:3: not valid YAML: could not find expected ':'"])
    }

    /// libyaml ends a line at a CR without an LF, and at NEL, LS and PS; editors do not, so every
    /// later line number was one too many (`fuzz.yaml:12:` in an 11-line file, found by the config
    /// fuzz target). Such a file is refused on the line that has the break.
    @Test("a line break other than LF or CRLF is refused on its line", arguments: ["\r", "\u{85}", "\u{2028}", "\u{2029}"])
    func foreignLineBreak(separator: String) throws {
        let text = "channels:\n  up:\(separator)    source:\n      type: pull\n      url: ftp://x/live.m3u8\n      mode: mirror\n"
        let error = try #require(throws: ConfigurationError.self) {
            try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/c")
        }
        #expect(
            error.problems.map(\.description) == [
                "h.yaml:2: a line break other than LF or CRLF (a lone CR, NEL, U+2028 or U+2029); save the file with LF line endings"
            ])
    }

    @Test("CRLF line endings are read as LF ones, with the same line numbers")
    func crlfLineEndings() throws {
        let text = "channels:\r\n  up:\r\n    source:\r\n      type: pull\r\n      url: ftp://x/live.m3u8\r\n      mode: mirror\r\n"
        let error = try #require(throws: ConfigurationError.self) {
            try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/c")
        }
        #expect(error.problems.contains { $0.line == 6 && $0.keyPath == "channels.up.source.mode" }, "\(error.problems)")
    }

    /// A key with no value at the very end of the file: libyaml marks the missing value where the
    /// stream ends, one line past the last (`fuzz.yaml:5:` of a 4-line file; found by the config
    /// fuzz target). The problem names the last line.
    @Test("a problem with a value missing at the end of the file names the file's last line", arguments: [
        "s:\n? u:aJ:\n? u:aJp:\n? server\n", "channels:\n  demo:\n    window: 30\n? server",
    ])
    func missingValueAtEndOfFile(text: String) throws {
        let error = try #require(throws: ConfigurationError.self) {
            try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/c")
        }
        #expect(error.problems.contains { $0.line == 4 && $0.keyPath == "server" }, "\(error.problems)")
        #expect(error.problems.allSatisfy { ($0.line ?? 1) <= 4 }, "\(error.problems)")
    }

    /// A plain scalar continued on the next line (`type: push` then a more-indented `type`) is one
    /// value with a line break in it; quoted in the problem, it split the problem over two lines
    /// (found by the config fuzz target). Each problem stays one line, the break written `\n`.
    @Test("a value with a line break in it is quoted on one line")
    func multiLineValueInAProblem() throws {
        let text = "server:\n  state: ../state\nchannels:\n  live:\n    source:\n      type: push\n    \n          type\n"
        let error = try #require(throws: ConfigurationError.self) {
            try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/c")
        }
        #expect(!error.problems.isEmpty)
        #expect(error.problems.allSatisfy { !$0.description.contains(where: \.isNewline) }, "\(error.problems)")
        #expect(error.description.split(separator: "\n").count == error.problems.count)
        #expect(error.problems.contains { $0.description.contains(#"unknown source type "push\ntype""#) }, "\(error.problems)")
    }
}
