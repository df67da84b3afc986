
/// An entity tag (RFC 9110 §8.8.3) as it appears in `ETag`: `"opaque"` or `W/"opaque"`.
///
/// Headwater's tags are strong: a segment's bytes never change under its URI, and a playlist
/// version is rendered once, so byte-for-byte equality holds. The gzip representation of a
/// playlist version is a different representation and gets its own strong tag (``gzipped``);
/// that is what lets a CDN revalidate either one with `If-None-Match` and never confuse them.
///
/// ```
/// entity-tag = [ weak ] opaque-tag        weak = %s"W/"
/// opaque-tag = DQUOTE *etagc DQUOTE       etagc = %x21 / %x23-7E / obs-text
/// ```
public struct EntityTag: Sendable, Hashable, CustomStringConvertible {
    /// The field value, quotes included.
    public let value: String

    public var description: String { value }

    /// `true` for `W/"…"`.
    public var isWeak: Bool { value.utf8.first == UInt8(ascii: "W") }

    /// Validates a complete field value such as `"abc"` or `W/"abc"` (no surrounding whitespace).
    public init?(_ fieldValue: String) {
        var copy = fieldValue
        guard copy.withUTF8({ Self.parse($0, at: 0)?.next == $0.count }) else { return nil }
        self.value = fieldValue
    }

    private init(unchecked value: String) {
        self.value = value
    }

    /// A strong tag for an immutable segment named by a stable, unique id (for example
    /// `"<run id>-<media sequence>"`). Bytes that an opaque-tag cannot hold (controls, space, `"`,
    /// DEL, non-ASCII) and the escape characters `%` and `\` are written as `%XX`, so any id gives
    /// a valid tag and distinct ids give distinct tags.
    public static func segment(id: String) -> EntityTag {
        var value = "\""
        appendEscaped(id, to: &value)
        value.append("\"")
        return EntityTag(unchecked: value)
    }

    /// A strong tag for an immutable segment from a hash of its bytes (see ``FNV1a64``):
    /// `"<16 lower-case hex digits>"`.
    public static func segment(contentHash: UInt64) -> EntityTag {
        EntityTag(
            unchecked: String(unsafeUninitializedCapacity: 18) { buffer in
                buffer[0] = UInt8(ascii: "\"")
                for i in 0..<16 {
                    let nibble = UInt8(truncatingIfNeeded: contentHash >> UInt64(60 - 4 * i)) & 0x0F
                    buffer[1 + i] = hexDigit(nibble)
                }
                buffer[17] = UInt8(ascii: "\"")
                return 18
            }
        )
    }

    /// A strong tag for one rendered version of a playlist: `"<channel>-<rendition>-v<version>"`
    /// (escaped as in ``segment(id:)``). Tags are only ever compared for the same URI, so the
    /// ambiguity of `-` inside names cannot make two representations of one URI collide.
    public static func playlist(channel: String, rendition: String, version: UInt64) -> EntityTag {
        var value = "\""
        appendEscaped(channel, to: &value)
        value.append("-")
        appendEscaped(rendition, to: &value)
        value.append("-v")
        value.append(String(version))
        value.append("\"")
        return EntityTag(unchecked: value)
    }

    /// The tag of the gzip-encoded representation of the same content: `-gz` is appended inside
    /// the quotes (`"live-720p-v42"` → `"live-720p-v42-gz"`). Weakness is kept.
    public var gzipped: EntityTag {
        var value = self.value
        value.removeLast()  // the closing DQUOTE
        value.append("-gz\"")
        return EntityTag(unchecked: value)
    }

    // MARK: - Escaping

    private static func appendEscaped(_ text: String, to value: inout String) {
        if text.utf8.allSatisfy({ !needsEscape($0) }) {
            value.append(text)
            return
        }
        for byte in text.utf8 {
            if needsEscape(byte) {
                value.unicodeScalars.append("%")
                value.unicodeScalars.append(Unicode.Scalar(hexDigit(byte >> 4, uppercase: true)))
                value.unicodeScalars.append(Unicode.Scalar(hexDigit(byte & 0x0F, uppercase: true)))
            } else {
                value.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x21 || byte > 0x7E || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "%")
            || byte == UInt8(ascii: "\\")
    }

    /// Lower-case for hashes; upper-case for `%XX`, as RFC 3986 §2.1 recommends.
    private static func hexDigit(_ nibble: UInt8, uppercase: Bool = false) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : (uppercase ? UInt8(ascii: "A") : UInt8(ascii: "a")) + nibble - 10
    }

    // MARK: - Comparison (RFC 9110 §8.8.3.2), used by ConditionalRequest and ByteRangeRequest

    /// A parsed tag: whether it is weak, and the byte range of its opaque-tag, quotes included.
    struct Parsed {
        var isWeak: Bool
        var opaque: Range<Int>
    }

    /// Parses one entity-tag starting at `index`; returns it and the index after it.
    static func parse(_ b: UnsafeBufferPointer<UInt8>, at index: Int) -> (Parsed, next: Int)? {
        var i = index
        var isWeak = false
        if i + 1 < b.count, b[i] == UInt8(ascii: "W"), b[i + 1] == UInt8(ascii: "/") {
            isWeak = true
            i += 2
        }
        guard i < b.count, b[i] == UInt8(ascii: "\"") else { return nil }
        let start = i
        i += 1
        while i < b.count, b[i] != UInt8(ascii: "\"") {
            let c = b[i]
            guard c == 0x21 || (c >= 0x23 && c != 0x7F) else { return nil }
            i += 1
        }
        guard i < b.count else { return nil }  // no closing DQUOTE
        i += 1
        return (Parsed(isWeak: isWeak, opaque: start..<i), i)
    }

    /// Parses a field value holding exactly one entity-tag (surrounding OWS allowed).
    static func parseSingle(_ b: UnsafeBufferPointer<UInt8>) -> Parsed? {
        let start = HTTPSyntax.skipOWS(b, from: 0)
        guard let (tag, next) = parse(b, at: start), HTTPSyntax.skipOWS(b, from: next) == b.count else { return nil }
        return tag
    }

    /// Whether a list field (`If-Match`, `If-None-Match`) matches `current`.
    ///
    /// `*` matches any current representation. Otherwise the field is `1#entity-tag` (empty list
    /// elements and OWS around commas allowed, RFC 9110 §5.6.1.2). A field that does not parse
    /// matches nothing: an unreadable `If-Match` fails (412) and an unreadable `If-None-Match`
    /// lets the request proceed, the safe direction for both.
    ///
    /// - Parameter weak: weak comparison (`If-None-Match`) ignores `W/`; strong comparison
    ///   (`If-Match`, `If-Range`) requires both tags to be strong.
    static func listMatches(
        _ field: UnsafeBufferPointer<UInt8>,
        current: UnsafeBufferPointer<UInt8>,
        weak: Bool
    ) -> Bool {
        var i = HTTPSyntax.skipOWS(field, from: 0)
        var end = field.count
        while end > i, HTTPSyntax.isOWS(field[end - 1]) { end -= 1 }
        let b = UnsafeBufferPointer(rebasing: field[0..<end])
        if end - i == 1, b[i] == UInt8(ascii: "*") { return true }
        let ours = parseSingle(current)
        var matched = false
        var members = 0
        while i < b.count {
            if b[i] == UInt8(ascii: ",") {  // empty element
                i = HTTPSyntax.skipOWS(b, from: i + 1)
                continue
            }
            guard let (tag, next) = parse(b, at: i) else { return false }
            members += 1
            if let ours, !matched {
                matched = equal(tag, in: b, ours, in: current, weak: weak)
            }
            i = HTTPSyntax.skipOWS(b, from: next)
            guard i == b.count || b[i] == UInt8(ascii: ",") else { return false }
        }
        return members > 0 && matched
    }

    static func equal(
        _ a: Parsed,
        in aBytes: UnsafeBufferPointer<UInt8>,
        _ b: Parsed,
        in bBytes: UnsafeBufferPointer<UInt8>,
        weak: Bool
    ) -> Bool {
        if !weak && (a.isWeak || b.isWeak) { return false }
        guard a.opaque.count == b.opaque.count else { return false }
        var j = b.opaque.lowerBound
        for i in a.opaque {
            guard aBytes[i] == bBytes[j] else { return false }
            j += 1
        }
        return true
    }
}

/// Byte-level helpers shared by the header parsers in this module.
enum HTTPSyntax {
    @inline(__always)
    static func isOWS(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    static func skipOWS(_ b: UnsafeBufferPointer<UInt8>, from index: Int) -> Int {
        var i = index
        while i < b.count, isOWS(b[i]) { i += 1 }
        return i
    }

    /// `tchar` (RFC 9110 §5.6.2): `!#$%&'*+-.^_`|~`, digits and letters, as two 64-bit masks.
    @inline(__always)
    static func isTokenCharacter(_ c: UInt8) -> Bool {
        let below64: UInt64 = 0x03FF_6CFA_0000_0000
        let from64: UInt64 = 0x57FF_FFFF_C7FF_FFFE
        return c < 64 ? (below64 >> c) & 1 == 1 : c < 128 && (from64 >> (c &- 64)) & 1 == 1
    }

    /// ASCII case-insensitive comparison of `b[range]` with a lower-case literal.
    static func equalsLowercase(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ literal: StaticString) -> Bool {
        guard range.count == literal.utf8CodeUnitCount else { return false }
        let l = literal.utf8Start
        var j = 0
        for i in range {
            guard lower(b[i]) == l[j] else { return false }
            j += 1
        }
        return true
    }

    @inline(__always)
    static func lower(_ c: UInt8) -> UInt8 {
        c &- UInt8(ascii: "A") < 26 ? c | 0x20 : c
    }
}
