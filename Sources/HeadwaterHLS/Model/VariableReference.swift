/// Variable references, `{$name}` (RFC 8216bis §4.3): substituted by the client in URI lines,
/// quoted-string values and hexadecimal-sequence values, with the names `EXT-X-DEFINE` gives
/// (`[a-zA-Z0-9-_]`, §4.4.2.3).
public enum VariableReference {
    /// Whether `text` holds at least one well-formed reference.
    public static func contains(_ text: some StringProtocol) -> Bool {
        // Called for every enumerated-string a strict parse reads: no allocation unless there is a `{`.
        guard text.utf8.contains(UInt8(ascii: "{")) else { return false }
        return !names(in: text).isEmpty
    }

    /// The names referenced in `text`, in order (repeats kept).
    public static func names(in text: some StringProtocol) -> [String] {
        var names: [String] = []
        forEachReference(in: Array(text.utf8)) { names.append($0) }
        return names
    }

    /// `text` with every reference replaced by its value, or `nil` when a name has no value.
    public static func substitute(_ text: some StringProtocol, _ values: [String: String]) -> String? {
        let utf8 = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var i = 0
        while i < utf8.count {
            if let (name, end) = reference(in: utf8, at: i) {
                guard let value = values[name] else { return nil }
                out.append(contentsOf: value.utf8)
                i = end
            } else {
                out.append(utf8[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `token` is a hexadecimal-sequence once its references are substituted, as far as can
    /// be told before substitution: references, and between them only what a hexadecimal-sequence
    /// holds (`0x`, hex digits).
    static func isHexTemplate(_ token: some StringProtocol) -> Bool {
        let utf8 = Array(token.utf8)
        var sawReference = false
        var i = 0
        while i < utf8.count {
            if let (_, end) = reference(in: utf8, at: i) {
                sawReference = true
                i = end
            } else {
                let c = utf8[i]
                guard HexSequence.hexValue(c) != nil || c == UInt8(ascii: "x") || c == UInt8(ascii: "X") else { return false }
                i += 1
            }
        }
        return sawReference
    }

    private static func forEachReference(in utf8: [UInt8], _ body: (String) -> Void) {
        var i = 0
        while i < utf8.count {
            if let (name, end) = reference(in: utf8, at: i) {
                body(name)
                i = end
            } else {
                i += 1
            }
        }
    }

    /// The reference starting at `start`, its name and the index after its `}`.
    private static func reference(in utf8: [UInt8], at start: Int) -> (name: String, end: Int)? {
        guard start + 3 < utf8.count, utf8[start] == UInt8(ascii: "{"), utf8[start + 1] == UInt8(ascii: "$") else { return nil }
        var i = start + 2
        while i < utf8.count, isNameByte(utf8[i]) { i += 1 }
        guard i > start + 2, i < utf8.count, utf8[i] == UInt8(ascii: "}") else { return nil }
        return (String(decoding: utf8[(start + 2)..<i], as: UTF8.self), i + 1)
    }

    static func isNameByte(_ c: UInt8) -> Bool {
        (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == UInt8(ascii: "-") || c == UInt8(ascii: "_")
    }
}
