/// A13 (RFC 8216bis §4.3, §4.4.2.3): a variable reference names a variable that an `EXT-X-DEFINE`
/// *above it* defines; anything else makes the client fail to parse. Checked on the text, since the
/// model keeps definitions in the header and no longer knows what came first.
extension PlaylistValidator {
    /// One reference that breaks A13.
    public struct UndefinedVariable: Sendable, Hashable {
        /// The variable's name (without `{$` `}`).
        public var name: String
        /// 1-based line of the reference.
        public var line: Int
        /// Line of the `EXT-X-DEFINE` that defines it further down, or `nil` when none does.
        public var definedAt: Int?

        public init(name: String, line: Int, definedAt: Int?) {
            self.name = name
            self.line = line
            self.definedAt = definedAt
        }
    }

    /// The references in `bytes` that no earlier `EXT-X-DEFINE` (by `NAME`, `IMPORT` or `QUERYPARAM`)
    /// defines, in line order, each name once per line.
    public static func undefinedVariables(in bytes: [UInt8]) -> [UndefinedVariable] {
        guard bytes.contains(UInt8(ascii: "{")) else { return [] }
        let lines = bytes.split(separator: 10, omittingEmptySubsequences: false)
        var definedAt: [String: Int] = [:]
        var uses: [(name: String, line: Int)] = []
        for (index, raw) in lines.enumerated() {
            let line = index + 1
            var text = String(decoding: raw, as: UTF8.self)
            if text.hasSuffix("\r") { text.removeLast() }
            if text.hasPrefix("#EXT-X-DEFINE:") {
                if let list = try? AttributeListParser.parse(text.dropFirst("#EXT-X-DEFINE:".count), strictNames: false),
                    let name = list.string("NAME") ?? list.string("IMPORT") ?? list.string("QUERYPARAM"),
                    definedAt[name] == nil
                {
                    definedAt[name] = line
                }
                continue
            }
            if text.hasPrefix("#"), !text.hasPrefix("#EXT") { continue }  // a comment
            var seen: Set<String> = []
            for name in VariableReference.names(in: text) where seen.insert(name).inserted {
                uses.append((name, line))
            }
        }
        return uses.compactMap { use in
            if let line = definedAt[use.name], line < use.line { return nil }
            return UndefinedVariable(name: use.name, line: use.line, definedAt: definedAt[use.name])
        }
    }

    /// ``undefinedVariables(in:)`` as A13 errors located by line.
    public static func checkVariableReferences(_ bytes: [UInt8]) -> [ValidationIssue] {
        undefinedVariables(in: bytes).map { use in
            let message =
                if let definedAt = use.definedAt {
                    "{$\(use.name)} is used before its EXT-X-DEFINE on line \(definedAt); a variable must be defined above its first use"
                } else {
                    "{$\(use.name)} is never defined; every variable reference needs an EXT-X-DEFINE above it"
                }
            return ValidationIssue(rule: "A13", severity: .error, message, at: .line(use.line))
        }
    }
}
