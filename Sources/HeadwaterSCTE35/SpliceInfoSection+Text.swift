extension SpliceInfoSection {
    /// Decodes hex text: `0x`/`0X`-prefixed or bare, any case (the `SCTE35-OUT=0xFC30…` form).
    public init(hex: String, verifyCRC: Bool = true) throws(SCTE35Error) {
        try self.init(bytes: Hex.decode(hex), verifyCRC: verifyCRC)
    }

    /// Decodes standard base64, padded or not (the `EXT-OATCLS-SCTE35:/DAl…` form).
    public init(base64: String, verifyCRC: Bool = true) throws(SCTE35Error) {
        try self.init(bytes: Base64.decode(base64), verifyCRC: verifyCRC)
    }

    /// Decodes hex or base64, whichever `text` is, ignoring surrounding whitespace.
    ///
    /// Detection relies on `table_id` being `0xFC`: hex starts with `0x` or `FC`, base64 with `/`.
    /// So text with a `0x` prefix, or made only of hex digits and not starting with `/`, is hex;
    /// anything else is base64.
    public init(text: String, verifyCRC: Bool = true) throws(SCTE35Error) {
        let trimmed = Self.trimmingASCIIWhitespace(text)
        let utf8 = Array(trimmed.utf8)
        let isHex = utf8.count >= 2 && utf8[0] == UInt8(ascii: "0") && (utf8[1] == UInt8(ascii: "x") || utf8[1] == UInt8(ascii: "X"))
            || (utf8.first != UInt8(ascii: "/") && utf8.allSatisfy(Hex.isHexDigit))
        if isHex {
            try self.init(hex: trimmed, verifyCRC: verifyCRC)
        } else {
            try self.init(base64: trimmed, verifyCRC: verifyCRC)
        }
    }

    /// `0x` + upper-case hex of the whole section, `CRC_32` included: the value of
    /// `EXT-X-DATERANGE` `SCTE35-CMD`, `SCTE35-OUT` and `SCTE35-IN` (HLS-RULES D9, I4).
    public func hexString() throws(SCTE35Error) -> String {
        Hex.encode(try encoded())
    }

    /// Standard padded base64 of the whole section, as in `EXT-OATCLS-SCTE35`.
    public func base64String() throws(SCTE35Error) -> String {
        Base64.encode(try encoded())
    }

    private static func trimmingASCIIWhitespace(_ text: String) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(text[first...last])
    }
}
