import HeadwaterConfiguration

/// `headwater.yaml`'s loader (`serve`, `check-config`, reload): every input either loads or is
/// refused with problems an operator can act on, each one line of `file:line: key.path: message`.
enum ConfigurationFuzzing {
    static let file = "fuzz.yaml"
    /// Relative paths resolve against a directory that does not exist, so no input names a file the
    /// loader could read by accident except through an absolute path.
    static let baseDirectory = "/nonexistent/headwater-fuzz"

    static func run(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let problems: [ConfigurationError.Problem]
        do throws(ConfigurationError) {
            _ = try HeadwaterConfiguration.parse(text, file: file, baseDirectory: baseDirectory)
            return
        } catch {
            problems = error.problems
        }
        precondition(!problems.isEmpty, "a refused configuration without a problem")
        // Lines as an editor numbers them: a final line feed ends the last line, it starts none.
        let lines = max(1, text.utf8.count { $0 == UInt8(ascii: "\n") } + (text.utf8.last == UInt8(ascii: "\n") ? 0 : 1))
        for problem in problems {
            precondition(problem.file == file, "a problem in another file: \(problem)")
            precondition(!problem.message.isEmpty, "a problem without a message: \(problem)")
            if let line = problem.line {
                precondition((1...lines).contains(line), "line \(line) of a \(lines)-line file: \(problem)")
            } else {
                precondition(problem.keyPath.isEmpty, "a key's problem without a line: \(problem)")
            }
            precondition(
                !problem.description.contains(where: \.isNewline), "a problem that is not one line: \(problem.description)")
        }
    }
}
