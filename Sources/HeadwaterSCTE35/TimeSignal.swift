/// `time_signal()` (command type `0x06`): a time stamp whose meaning comes from the descriptors
/// (usually `segmentation_descriptor()`s) that accompany it.
///
/// ```
/// time_signal() {                      bits  mnemonic
///   splice_time()
/// }
/// ```
public struct TimeSignal: Sendable, Hashable {
    public var spliceTime: SpliceTime

    public init(spliceTime: SpliceTime) {
        self.spliceTime = spliceTime
    }

    /// A time signal at `ptsTime` (90 kHz, before `pts_adjustment`); `nil` means time not specified.
    public init(ptsTime: UInt64?) {
        spliceTime = SpliceTime(ptsTime: ptsTime)
    }

    /// `pts_time`, if `time_specified_flag == 1`.
    public var ptsTime: UInt64? { spliceTime.ptsTime }

    init(reading reader: inout BitReader) throws(SCTE35Error) {
        spliceTime = try SpliceTime(reading: &reader)
    }

    func write(to writer: inout BitWriter) throws(SCTE35Error) {
        try spliceTime.write(to: &writer)
    }
}

extension TimeSignal: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        spliceTime = try c.decode(SpliceTime.self, forKey: "splice_time")
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(spliceTime, forKey: "splice_time")
    }
}
