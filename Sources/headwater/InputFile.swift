import ArgumentParser
import Foundation

/// Reads a command's input: a path, or `-` for standard input. The display name is what diagnostics
/// print before `:LINE:` (`<stdin>` for `-`).
struct InputFile {
    var path: String
    var displayName: String { path == "-" ? "<stdin>" : path }

    func read() throws -> [UInt8] {
        if path == "-" {
            return Array(FileHandle.standardInput.readDataToEndOfFile())
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError("\(path): cannot read file")
        }
        return Array(data)
    }
}

/// A one-line failure: printed to standard error as `headwater: <message>`, exit status 1.
struct CLIError: Error, CustomStringConvertible {
    var message: String
    var exitCode: Int32 = 1
    init(_ message: String, exitCode: Int32 = 1) {
        self.message = message
        self.exitCode = exitCode
    }
    var description: String { message }
}

/// Prints `headwater: message` to standard error and exits with the error's status.
func fail(_ error: CLIError) -> Never {
    FileHandle.standardError.write(Data("headwater: \(error.message)\n".utf8))
    exit(error.exitCode)
}

func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
