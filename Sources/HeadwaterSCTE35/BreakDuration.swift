/// `break_duration()`: the planned length of a `splice_insert()` break — HLS `PLANNED-DURATION`
/// on the `SCTE35-OUT` tag (HLS-RULES D13) is ``duration`` / 90 000.
///
/// ```
/// break_duration() {                   bits  mnemonic
///   auto_return                          1    bslbf
///   reserved                             6    bslbf
///   duration                            33    uimsbf
/// }
/// ```
public struct BreakDuration: Sendable, Hashable, Codable {
    /// `auto_return`: the splicer returns to the network by itself when ``duration`` has elapsed.
    public var autoReturn: Bool
    /// `duration` in 90 kHz ticks (33 bits).
    public var duration: UInt64
    /// Reserved bits as received (default all ones).
    public var reserved: UInt8

    public init(autoReturn: Bool, duration: UInt64, reserved: UInt8 = 0x3F) {
        self.autoReturn = autoReturn
        self.duration = duration
        self.reserved = reserved
    }

    /// ``duration`` in microseconds.
    public var durationMicroseconds: Int64 { Ticks90kHz.microseconds(duration) }

    init(reading reader: inout BitReader) throws(SCTE35Error) {
        autoReturn = try reader.flag("auto_return")
        reserved = try reader.uint8(6, "break_duration reserved")
        duration = try reader.bits(33, "duration")
    }

    func write(to writer: inout BitWriter) throws(SCTE35Error) {
        writer.flag(autoReturn)
        writer.reserved(reserved, bits: 6)
        try writer.field("duration", duration, bits: 33)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        self.init(
            autoReturn: try c.decode("auto_return", default: true),
            duration: try c.decode(UInt64.self, forKey: "duration"),
            reserved: try c.decode("reserved", default: 0x3F)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(autoReturn, forKey: "auto_return")
        try c.encodeReserved(reserved, default: 0x3F, forKey: "reserved")
        try c.encode(duration, forKey: "duration")
        try c.encodeSeconds(ticks: duration, forKey: "duration_seconds")
    }
}
