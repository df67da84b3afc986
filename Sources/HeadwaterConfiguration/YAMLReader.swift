import Yams

/// Reads typed values out of a composed YAML document and records every problem with its line and
/// key path, so one run reports all mistakes in a config file, not just the first.
struct YAMLReader {
    let file: String
    private(set) var problems: [ConfigurationError.Problem] = []

    /// The file's last line: a problem on a node libyaml places past it (a value missing at the end
    /// of the file, which libyaml marks where the stream ends) names this line instead.
    let lastLine: Int

    init(file: String, text: String) {
        self.file = file
        self.lastLine = Self.lastLine(of: text)
    }

    /// Lines as an editor numbers them: a final line feed ends the last line, it starts none.
    static func lastLine(of text: String) -> Int {
        max(1, text.utf8.count { $0 == UInt8(ascii: "\n") } + (text.utf8.last == UInt8(ascii: "\n") ? 0 : 1))
    }

    /// The document in `text`, or the one problem that keeps it from being read: not YAML (with
    /// the line the parser stopped at), or empty.
    static func compose(_ text: String, file: String) throws(ConfigurationError) -> Node {
        if let line = lineWithForeignBreak(text) {
            throw ConfigurationError(problems: [
                .init(
                    file: file, line: line, keyPath: "",
                    message: "a line break other than LF or CRLF (a lone CR, NEL, U+2028 or U+2029); save the file with LF line endings")
            ])
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            // libyaml ends an unterminated last line itself, so an error at the end of the stream
            // can be one line past the file's last: name the last line instead.
            let line = line(of: error).map { min($0, lastLine(of: text)) }
            throw ConfigurationError(problems: [.init(file: file, line: line, keyPath: "", message: "not valid YAML: \(summary(of: error))")])
        } catch {
            throw ConfigurationError(problems: [.init(file: file, line: nil, keyPath: "", message: "not valid YAML: \(error)")])
        }
        guard let root else {
            throw ConfigurationError(problems: [.init(file: file, line: nil, keyPath: "", message: "the file is empty")])
        }
        return root
    }

    /// The line (as editors count them: after each LF) of the first line break YAML knows and an
    /// editor does not show as one: a CR without an LF after it, NEL, LS or PS. libyaml ends a line
    /// at each, so every line number after it would be off by one — `check-config` named line 12
    /// of an 11-line file (found by the config fuzz target).
    static func lineWithForeignBreak(_ text: String) -> Int? {
        var line = 1
        var previous: Unicode.Scalar?
        for scalar in text.unicodeScalars {
            if previous == "\r", scalar != "\n" { return line }
            switch scalar {
            case "\n": line += 1
            case "\u{85}", "\u{2028}", "\u{2029}": return line
            default: break
            }
            previous = scalar
        }
        return previous == "\r" ? line : nil
    }

    private static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _): return mark.line
        default: return nil
        }
    }

    private static func summary(of error: YamlError) -> String {
        switch error {
        case .scanner(_, let problem, _, _), .parser(_, let problem, _, _): return problem
        default: return "\(error)".split(separator: "\n").first.map(String.init) ?? "syntax error"
        }
    }

    mutating func fail(_ node: Node?, _ path: String, _ message: String) {
        problems.append(.init(file: file, line: node?.mark.map { min($0.line, lastLine) }, keyPath: path, message: message))
    }

    /// The entries of a mapping, rejecting keys not in `allowed` (each unknown key is an error).
    mutating func mapping(_ node: Node?, _ path: String, allowed: Set<String>? = nil) -> [(key: String, value: Node, keyNode: Node)] {
        guard let node else { return [] }
        guard case .mapping(let mapping) = node else {
            fail(node, path, "must be a mapping (key: value lines)")
            return []
        }
        var entries: [(key: String, value: Node, keyNode: Node)] = []
        var seen = Set<String>()
        for (keyNode, value) in mapping {
            guard let key = keyNode.string else {
                fail(keyNode, path, "keys must be strings")
                continue
            }
            let childPath = path.isEmpty ? key : "\(path).\(key)"
            if let allowed, !allowed.contains(key) {
                fail(keyNode, childPath, "unknown key (expected one of: \(allowed.sorted().joined(separator: ", ")))")
                continue
            }
            if !seen.insert(key).inserted {
                fail(keyNode, childPath, "duplicate key")
                continue
            }
            entries.append((key, value, keyNode))
        }
        return entries
    }

    mutating func string(_ node: Node, _ path: String) -> String? {
        guard case .scalar(let scalar) = node, !scalar.string.isEmpty else {
            fail(node, path, "must be a non-empty string")
            return nil
        }
        return scalar.string
    }

    mutating func integer(_ node: Node, _ path: String, in range: ClosedRange<Int>) -> Int? {
        guard case .scalar(let scalar) = node, let value = Int(scalar.string) else {
            fail(node, path, "must be an integer")
            return nil
        }
        guard range.contains(value) else {
            fail(node, path, "must be between \(range.lowerBound) and \(range.upperBound), got \(value)")
            return nil
        }
        return value
    }

    /// A low-latency part target (`source.part_target`, ads.yaml's `part_target`): seconds from 0.1
    /// to 2, as µs, or `off`. `.none` when the value is refused (the problem is recorded).
    mutating func partTarget(_ node: Node, _ path: String) -> PartTargetSetting? {
        guard let text = string(node, path) else { return nil }
        if text == "off" { return .off }
        guard let seconds = Double(text), seconds >= 0.1, seconds <= 2 else {
            fail(node, path, "expected seconds from 0.1 to 2 (e.g. 0.4), or off")
            return nil
        }
        return .microseconds(Int64((seconds * 1_000_000).rounded()))
    }

    enum PartTargetSetting {
        case off
        case microseconds(Int64)

        var value: Int64? {
            if case .microseconds(let value) = self { return value }
            return nil
        }
    }

    mutating func bool(_ node: Node, _ path: String) -> Bool? {
        guard case .scalar(let scalar) = node else {
            fail(node, path, "must be true or false")
            return nil
        }
        switch scalar.string.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default:
            fail(node, path, "must be true or false, got \"\(scalar.string)\"")
            return nil
        }
    }
}
