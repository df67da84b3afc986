/// What an ad stitcher needs from a cue, in the units HLS uses (HLS-RULES I4, D13).
extension SpliceInfoSection {
    /// `(pts + pts_adjustment) mod 2^33`: a `pts_time` of this section on the program's PTS timeline.
    public func adjustedPTS(_ pts: UInt64) -> UInt64 {
        Ticks90kHz.adjusted(pts, by: ptsAdjustment)
    }

    /// The program splice time with `pts_adjustment` applied (90 kHz), for a timed program-mode
    /// `splice_insert()` or a `time_signal()` with a time; `nil` otherwise (immediate, component
    /// mode, cancelled, other commands, encrypted). Map it to `START-DATE` through a segment's PDT↔PTS.
    public var splicePTS: UInt64? {
        let time: SpliceTime?
        switch command {
        case .spliceInsert(let insert): time = insert.programSpliceTime
        case .timeSignal(let signal): time = signal.spliceTime
        default: time = nil
        }
        return time?.ptsTime.map(adjustedPTS)
    }

    /// ``splicePTS`` in seconds, rounded to the microsecond.
    public var splicePTSSeconds: Double? { splicePTS.map(Ticks90kHz.seconds) }

    /// ``splicePTS`` in microseconds.
    public var splicePTSMicroseconds: Int64? { splicePTS.map(Ticks90kHz.microseconds) }

    /// The planned break length in 90 kHz ticks — `PLANNED-DURATION` × 90 000 (D13): the
    /// `break_duration` of a `splice_insert()`, else the `segmentation_duration` of the first
    /// non-cancelled segmentation descriptor that has one.
    public var plannedDurationTicks: UInt64? {
        if let duration = command?.spliceInsert?.breakDuration?.duration { return duration }
        return segmentationDescriptors.lazy.compactMap(\.durationTicks).first
    }

    /// ``plannedDurationTicks`` in microseconds.
    public var plannedDurationMicroseconds: Int64? { plannedDurationTicks.map(Ticks90kHz.microseconds) }

    /// ``plannedDurationTicks`` in seconds, rounded to the microsecond.
    public var plannedDurationSeconds: Double? { plannedDurationTicks.map(Ticks90kHz.seconds) }

    /// The segmentation descriptors, in order.
    public var segmentationDescriptors: [SegmentationDescriptor] {
        descriptors.compactMap(\.segmentation)
    }

    /// Which `EXT-X-DATERANGE` attribute this cue belongs in as a break boundary:
    /// a non-cancelled `splice_insert()` by its `out_of_network_indicator` (D10); a `time_signal()`
    /// by the first segmentation descriptor whose type is a break/ad/placement-opportunity boundary
    /// (D11). `nil` means `SCTE35-CMD` (or, for a cancelled event, nothing: D14).
    public var cueDirection: CueDirection? {
        switch command {
        case .spliceInsert(let insert): return insert.cueDirection
        case .timeSignal: return segmentationDescriptors.lazy.compactMap(\.cueDirection).first
        default: return nil
        }
    }
}
