/// Builders for the cues an origin emits itself, e.g. for an operator-scheduled break.
extension SpliceInfoSection {
    /// A `splice_insert()` cue for a program splice.
    ///
    /// - Parameters:
    ///   - ptsTime: the splice time in 90 kHz ticks (reduced modulo 2^33, as PTS wraps); `nil` for
    ///     an immediate splice.
    ///   - duration: the planned break length in ticks, written as `break_duration()`; `nil` for none.
    ///   - autoReturn: `auto_return` of the break duration.
    public static func spliceInsert(
        eventID: UInt32,
        outOfNetwork: Bool,
        ptsTime: UInt64?,
        duration: UInt64? = nil,
        autoReturn: Bool = true,
        uniqueProgramID: UInt16 = 0,
        availNum: UInt8 = 0,
        availsExpected: UInt8 = 0,
        descriptors: [SpliceDescriptor] = [],
        ptsAdjustment: UInt64 = 0,
        tier: UInt16 = 0xFFF
    ) -> SpliceInfoSection {
        let mode: SpliceInsert.Mode = ptsTime.map { .program(SpliceTime(ptsTime: $0 % Ticks90kHz.ptsModulus)) } ?? .programImmediate
        let event = SpliceInsert.ScheduledEvent(
            outOfNetwork: outOfNetwork,
            mode: mode,
            breakDuration: duration.map { BreakDuration(autoReturn: autoReturn, duration: $0) },
            uniqueProgramID: uniqueProgramID,
            availNum: availNum,
            availsExpected: availsExpected
        )
        return SpliceInfoSection(
            command: .spliceInsert(SpliceInsert(eventID: eventID, scheduledEvent: event)),
            descriptors: descriptors,
            ptsAdjustment: ptsAdjustment,
            tier: tier
        )
    }

    /// A `splice_insert()` that cancels event `eventID`.
    public static func spliceInsertCancel(eventID: UInt32) -> SpliceInfoSection {
        SpliceInfoSection(command: .spliceInsert(SpliceInsert(eventID: eventID, scheduledEvent: nil)))
    }

    /// A `time_signal()` cue at `ptsTime` (ticks, reduced modulo 2^33; `nil` = not specified),
    /// typically with segmentation descriptors.
    public static func timeSignal(
        ptsTime: UInt64?,
        descriptors: [SpliceDescriptor] = [],
        ptsAdjustment: UInt64 = 0,
        tier: UInt16 = 0xFFF
    ) -> SpliceInfoSection {
        SpliceInfoSection(
            command: .timeSignal(TimeSignal(ptsTime: ptsTime.map { $0 % Ticks90kHz.ptsModulus })),
            descriptors: descriptors,
            ptsAdjustment: ptsAdjustment,
            tier: tier
        )
    }

    /// A `splice_null()` cue (heartbeat).
    public static func spliceNull(descriptors: [SpliceDescriptor] = []) -> SpliceInfoSection {
        SpliceInfoSection(command: .spliceNull, descriptors: descriptors)
    }
}
