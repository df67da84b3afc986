/// `Accept-Encoding` (RFC 9110 §12.5.3), reduced to the one question an origin that compresses
/// playlists once per version asks: may this response be gzip?
public enum AcceptEncoding {
    /// Whether `header` accepts the `gzip` content coding.
    ///
    /// - `gzip` or `x-gzip` (§8.4.1.3: a recipient "SHOULD consider x-gzip to be equivalent to
    ///   gzip"), case-insensitive, with q > 0 → `true`; with q = 0 → `false`, whatever `*` says.
    /// - Not named, but `*` with q > 0 → `true` (`*` stands for codings not listed).
    /// - Otherwise `false`, including `identity` alone, an empty field ("no coding wanted") and
    ///   no field at all. §12.5.3 reads an absent field as "anything goes", but G3's check expects
    ///   identity when the client did not ask, and every player that can gunzip says so.
    /// - qvalue is strict (§12.4.2): `0`, `0.` up to three digits, `1`, `1.` up to three zeros;
    ///   the `q` name is case-insensitive. A gzip member whose weight is malformed (`q=2`,
    ///   `q=0.0001`, `q=abc`, a parameter other than `q`) counts as q = 0, so does a malformed `*`:
    ///   identity is always a safe answer. If gzip is named more than once, the lowest q wins.
    /// - Members that are not `token [weight]` are skipped.
    ///
    /// Scans the UTF-8 bytes once and allocates nothing.
    public static func acceptsGzip(_ header: String?) -> Bool {
        guard var header else { return false }
        return header.withUTF8 { acceptsGzip(bytes: $0) }
    }

    private enum Coding {
        case gzip, any, other
    }

    static func acceptsGzip(bytes b: UnsafeBufferPointer<UInt8>) -> Bool {
        var gzipQuality: Int? = nil  // thousandths
        var anyQuality: Int? = nil
        var i = 0
        while i < b.count {
            i = HTTPSyntax.skipOWS(b, from: i)
            if i < b.count, b[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            guard i < b.count else { break }

            // token
            let tokenStart = i
            while i < b.count, HTTPSyntax.isTokenCharacter(b[i]) { i += 1 }
            let token = tokenStart..<i
            let coding: Coding =
                if HTTPSyntax.equalsLowercase(b, token, "gzip") || HTTPSyntax.equalsLowercase(b, token, "x-gzip") {
                    .gzip
                } else if HTTPSyntax.equalsLowercase(b, token, "*") {
                    .any
                } else {
                    .other
                }

            // [ weight ] up to the next comma; nil quality = malformed member.
            var quality: Int? = token.isEmpty ? nil : 1000
            i = HTTPSyntax.skipOWS(b, from: i)
            if i < b.count, b[i] == UInt8(ascii: ";"), quality != nil {
                i = HTTPSyntax.skipOWS(b, from: i + 1)
                if let (q, next) = parseWeight(b, at: i) {
                    quality = q
                    i = HTTPSyntax.skipOWS(b, from: next)
                } else {
                    quality = nil
                }
            }
            if i < b.count, b[i] != UInt8(ascii: ",") { quality = nil }
            while i < b.count, b[i] != UInt8(ascii: ",") { i += 1 }  // skip the rest of a bad member

            switch coding {
            case .gzip: gzipQuality = min(gzipQuality ?? 1000, quality ?? 0)
            case .any: anyQuality = min(anyQuality ?? 1000, quality ?? 0)
            case .other: break
            }
        }
        if let gzipQuality { return gzipQuality > 0 }
        if let anyQuality { return anyQuality > 0 }
        return false
    }

    /// `"q=" qvalue` at `index` (name case-insensitive); the quality in thousandths.
    private static func parseWeight(_ b: UnsafeBufferPointer<UInt8>, at index: Int) -> (Int, next: Int)? {
        var i = index
        guard i + 2 < b.count, HTTPSyntax.lower(b[i]) == UInt8(ascii: "q"), b[i + 1] == UInt8(ascii: "=") else {
            return nil
        }
        i += 2
        let whole = b[i]
        guard whole == UInt8(ascii: "0") || whole == UInt8(ascii: "1") else { return nil }
        i += 1
        var thousandths = whole == UInt8(ascii: "1") ? 1000 : 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 100
            var count = 0
            while i < b.count, b[i] &- UInt8(ascii: "0") <= 9 {
                count += 1
                let digit = Int(b[i] &- UInt8(ascii: "0"))
                guard count <= 3, whole == UInt8(ascii: "0") || digit == 0 else { return nil }
                thousandths += digit * scale
                scale /= 10
                i += 1
            }
        }
        return (thousandths, i)
    }
}
