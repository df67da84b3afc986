/// `time_descriptor()` (tag `0x03`): the wall-clock (TAI) time of the splice, for systems that
/// need it without a PTS↔PDT mapping.
///
/// ```
/// time_descriptor() {                  bits  mnemonic
///   splice_descriptor_tag                8    uimsbf   (0x03)
///   descriptor_length                    8    uimsbf   (16)
///   identifier                          32    uimsbf   ('CUEI')
///   TAI_seconds                         48    uimsbf
///   TAI_ns                              32    uimsbf
///   UTC_offset                          16    uimsbf
/// }
/// ```
public struct TimeDescriptor: Sendable, Hashable {
    /// `TAI_seconds` (48 bits).
    public var taiSeconds: UInt64
    /// `TAI_ns`.
    public var taiNanoseconds: UInt32
    /// `UTC_offset`: TAI − UTC in seconds (37 since 2017).
    public var utcOffset: UInt16

    public init(taiSeconds: UInt64, taiNanoseconds: UInt32, utcOffset: UInt16) {
        self.taiSeconds = taiSeconds
        self.taiNanoseconds = taiNanoseconds
        self.utcOffset = utcOffset
    }

    init(reading reader: inout BitReader) throws(SCTE35Error) {
        taiSeconds = try reader.bits(48, "TAI_seconds")
        taiNanoseconds = try reader.uint32(32, "TAI_ns")
        utcOffset = try reader.uint16(16, "UTC_offset")
    }

    func write(to writer: inout BitWriter) throws(SCTE35Error) {
        try writer.field("TAI_seconds", taiSeconds, bits: 48)
        try writer.field("TAI_ns", taiNanoseconds, bits: 32)
        try writer.field("UTC_offset", utcOffset, bits: 16)
    }
}

extension TimeDescriptor: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        taiSeconds = try c.decode(UInt64.self, forKey: "tai_seconds")
        taiNanoseconds = try c.decode(UInt32.self, forKey: "tai_ns")
        utcOffset = try c.decode(UInt16.self, forKey: "utc_offset")
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(taiSeconds, forKey: "tai_seconds")
        try c.encode(taiNanoseconds, forKey: "tai_ns")
        try c.encode(utcOffset, forKey: "utc_offset")
    }
}
