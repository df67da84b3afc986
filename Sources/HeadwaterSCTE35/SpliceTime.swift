/// `splice_time()`: when a splice happens, in 90 kHz PTS ticks before `pts_adjustment`.
///
/// ```
/// splice_time() {                      bits  mnemonic
///   time_specified_flag                  1    bslbf
///   if (time_specified_flag == 1) {
///     reserved                           6    bslbf
///     pts_time                          33    uimsbf
///   } else
///     reserved                           7    bslbf
/// }
/// ```
/// `time_specified_flag` is modelled by ``ptsTime`` being non-nil: a `nil` time means "immediate" /
/// "time not specified" (a time_signal without a time, or a component in an immediate splice).
public struct SpliceTime: Sendable, Hashable, Codable {
    /// `pts_time` (33 bits), or `nil` when `time_specified_flag == 0`.
    public var ptsTime: UInt64?
    /// The reserved bits as received: the low 6 bits are written when ``ptsTime`` is set, 7 otherwise.
    /// Kept so that sections from encoders that write zeros round-trip byte for byte.
    public var reserved: UInt8

    /// - Parameter reserved: `nil` means all ones, as the spec asks encoders to write.
    public init(ptsTime: UInt64?, reserved: UInt8? = nil) {
        self.ptsTime = ptsTime
        self.reserved = reserved ?? (ptsTime == nil ? 0x7F : 0x3F)
    }

    /// `time_specified_flag`.
    public var timeSpecified: Bool { ptsTime != nil }

    init(reading reader: inout BitReader) throws(SCTE35Error) {
        if try reader.flag("time_specified_flag") {
            let reserved = try reader.uint8(6, "splice_time reserved")
            self.init(ptsTime: try reader.bits(33, "pts_time"), reserved: reserved)
        } else {
            self.init(ptsTime: nil, reserved: try reader.uint8(7, "splice_time reserved"))
        }
    }

    func write(to writer: inout BitWriter) throws(SCTE35Error) {
        writer.flag(ptsTime != nil)
        if let ptsTime {
            writer.reserved(reserved, bits: 6)
            try writer.field("pts_time", ptsTime, bits: 33)
        } else {
            writer.reserved(reserved, bits: 7)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        let specified = try c.decode("time_specified_flag", default: true)
        let pts: UInt64? = specified ? try c.decode(UInt64.self, forKey: "pts_time") : nil
        self.init(ptsTime: pts, reserved: try c.decodeIfPresent(UInt8.self, forKey: "reserved"))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(ptsTime != nil, forKey: "time_specified_flag")
        try c.encodeReserved(reserved, default: ptsTime == nil ? 0x7F : 0x3F, forKey: "reserved")
        if let ptsTime {
            try c.encode(ptsTime, forKey: "pts_time")
            try c.encodeSeconds(ticks: ptsTime, forKey: "pts_time_seconds")
        }
    }
}
