/// `DTMF_descriptor()` (tag `0x01`): the DTMF tone sequence a legacy analogue splicer expects,
/// sent `preroll` tenths of a second before the splice.
///
/// ```
/// DTMF_descriptor() {                  bits  mnemonic
///   splice_descriptor_tag                8    uimsbf   (0x01)
///   descriptor_length                    8    uimsbf
///   identifier                          32    uimsbf   ('CUEI')
///   preroll                              8    uimsbf
///   dtmf_count                           3    uimsbf
///   reserved                             5    bslbf
///   for (i = 0; i < dtmf_count; i++)
///     DTMF_char                          8    uimsbf
/// }
/// ```
public struct DTMFDescriptor: Sendable, Hashable {
    /// `preroll`, in tenths of a second.
    public var preroll: UInt8
    /// The `DTMF_char`s (ASCII `0`–`9`, `*`, `#`); `dtmf_count` is their number (at most 7).
    public var characters: [UInt8]
    /// The 5 reserved bits, as received (default all ones).
    public var reserved: UInt8

    public init(preroll: UInt8, characters: [UInt8], reserved: UInt8 = 0x1F) {
        self.preroll = preroll
        self.characters = characters
        self.reserved = reserved
    }

    /// The characters as text, e.g. `"121#"`.
    public var text: String { String(decoding: characters, as: UTF8.self) }

    init(reading reader: inout BitReader) throws(SCTE35Error) {
        preroll = try reader.uint8(8, "preroll")
        let count = Int(try reader.uint8(3, "dtmf_count"))
        reserved = try reader.uint8(5, "DTMF_descriptor reserved")
        characters = try reader.bytes(count, "DTMF_char")
    }

    func write(to writer: inout BitWriter) throws(SCTE35Error) {
        try writer.field("preroll", preroll, bits: 8)
        try writer.field("dtmf_count", characters.count, bits: 3)
        writer.reserved(reserved, bits: 5)
        writer.append(characters)
    }
}

extension DTMFDescriptor: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        preroll = try c.decode(UInt8.self, forKey: "preroll")
        reserved = try c.decode("reserved", default: 0x1F)
        let text = try c.decode(String.self, forKey: "dtmf_chars")
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            characters = try c.decodeHex(forKey: "dtmf_chars")
        } else {
            characters = Array(text.utf8)
        }
    }

    /// `dtmf_chars` is the text when every byte is a DTMF symbol, otherwise `0x` + hex.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(preroll, forKey: "preroll")
        try c.encode(characters.count, forKey: "dtmf_count")
        try c.encodeReserved(reserved, default: 0x1F, forKey: "reserved")
        let symbols = Set("0123456789*#ABCD".utf8)
        if characters.allSatisfy(symbols.contains) {
            try c.encode(text, forKey: "dtmf_chars")
        } else {
            try c.encodeHex(characters, forKey: "dtmf_chars")
        }
    }
}
