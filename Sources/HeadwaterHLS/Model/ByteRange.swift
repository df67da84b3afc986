/// A sub-range of a resource: `EXT-X-BYTERANGE:<n>[@<o>]` (RFC 8216bis §4.4.4.2) and the quoted
/// `"n[@o]"` of `EXT-X-MAP`/`EXT-X-PART`.
///
/// When `offset` is `nil` the range starts at the byte after the previous sub-range of the same
/// resource *in the same playlist*; ``MediaPlaylist/resolvedByteRanges()`` turns that into absolute
/// offsets, and the origin uses it to keep `@o` on the head segment after the window slides (B8).
public struct ByteRange: Sendable, Hashable, CustomStringConvertible {
    public var length: UInt64
    public var offset: UInt64?

    public init(length: UInt64, offset: UInt64? = nil) {
        self.length = length
        self.offset = offset
    }

    /// Parses `n` or `n@o`.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let length = parts.first.flatMap({ UInt64.strictDecimal($0) }) else { return nil }
        self.length = length
        if parts.count == 2 {
            guard let offset = UInt64.strictDecimal(parts[1]) else { return nil }
            self.offset = offset
        } else {
            self.offset = nil
        }
    }

    /// Parses `n` or `n@o` from bytes (the parser's path; no `String` is created).
    init?(parsing b: UnsafeBufferPointer<UInt8>) {
        var length: UInt64 = 0
        var offset: UInt64 = 0
        var digits = 0
        var inOffset = false
        for c in b {
            if c == UInt8(ascii: "@") && !inOffset && digits > 0 {
                inOffset = true
                digits = 0
                continue
            }
            guard c >= 48 && c <= 57, digits < 20 else { return nil }
            let (m, o1) = (inOffset ? offset : length).multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(c - 48))
            guard !o1 && !o2 else { return nil }
            if inOffset { offset = a } else { length = a }
            digits += 1
        }
        guard digits > 0 else { return nil }
        self.length = length
        self.offset = inOffset ? offset : nil
    }

    public var description: String {
        var bytes: [UInt8] = []
        write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    public func write(into bytes: inout [UInt8]) {
        var writer = ByteWriter(capacity: 48)
        write(to: &writer)
        writer.finish(appendingTo: &bytes)
    }

    func write(to writer: inout ByteWriter) {
        writer.appendDecimal(length)
        if let offset {
            writer.append(UInt8(ascii: "@"))
            writer.appendDecimal(offset)
        }
    }
}

extension UInt64 {
    /// A decimal-integer per RFC 8216bis §4.2: 1–20 ASCII digits, no sign, no spaces, ≤ 2^64−1.
    static func strictDecimal(_ text: some StringProtocol) -> UInt64? {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= 20 else { return nil }
        var value: UInt64 = 0
        for byte in utf8 {
            guard byte >= 48 && byte <= 57 else { return nil }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(byte - 48))
            guard !o1 && !o2 else { return nil }
            value = a
        }
        return value
    }
}
