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
}
