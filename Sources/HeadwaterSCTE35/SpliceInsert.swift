/// `splice_insert()` (command type `0x05`): a splice out of the network (start of a break) or
/// back in (end of a break). HLS carries the "out" section in `SCTE35-OUT` and the "in" section in
/// `SCTE35-IN` of one `EXT-X-DATERANGE` ID (HLS-RULES D10).
///
/// ```
/// splice_insert() {                                  bits  mnemonic
///   splice_event_id                                   32    uimsbf
///   splice_event_cancel_indicator                      1    bslbf
///   reserved                                           7    bslbf
///   if (splice_event_cancel_indicator == '0') {
///     out_of_network_indicator                         1    bslbf
///     program_splice_flag                              1    bslbf
///     duration_flag                                    1    bslbf
///     splice_immediate_flag                            1    bslbf
///     event_id_compliance_flag                         1    bslbf   (reserved before 2022)
///     reserved                                         3    bslbf
///     if ((program_splice_flag == '1') && (splice_immediate_flag == '0'))
///       splice_time()
///     if (program_splice_flag == '0') {
///       component_count                                8    uimsbf
///       for (i = 0; i < component_count; i++) {
///         component_tag                                8    uimsbf
///         if (splice_immediate_flag == '0')
///           splice_time()
///       }
///     }
///     if (duration_flag == '1')
///       break_duration()
///     unique_program_id                               16    uimsbf
///     avail_num                                        8    uimsbf
///     avails_expected                                  8    uimsbf
///   }
/// }
/// ```
/// Flags become Swift shapes: `splice_event_cancel_indicator` is ``scheduledEvent`` being `nil`,
/// `program_splice_flag`/`splice_immediate_flag` are the ``Mode`` case, `duration_flag` is
/// ``ScheduledEvent/breakDuration`` being non-nil. So no contradictory combination can be built.
public struct SpliceInsert: Sendable, Hashable {
    /// `splice_event_id`.
    public var eventID: UInt32
    /// The 7 reserved bits after `splice_event_cancel_indicator`, as received (default all ones).
    public var reserved: UInt8
    /// The scheduled splice. `nil` means `splice_event_cancel_indicator == 1`: the event
    /// ``eventID`` announced earlier is cancelled (such a splice should not appear in HLS, D14).
    public var scheduledEvent: ScheduledEvent?

    public init(eventID: UInt32, scheduledEvent: ScheduledEvent?, reserved: UInt8 = 0x7F) {
        self.eventID = eventID
        self.scheduledEvent = scheduledEvent
        self.reserved = reserved
    }

    /// Where and when the splice happens (`program_splice_flag` × `splice_immediate_flag`).
    public enum Mode: Sendable, Hashable {
        /// Program splice at a time: `program_splice_flag = 1`, `splice_immediate_flag = 0`.
        case program(SpliceTime)
        /// Program splice as soon as possible: `program_splice_flag = 1`, `splice_immediate_flag = 1`.
        case programImmediate
        /// Component splice, each elementary stream at its own time (`program_splice_flag = 0`,
        /// `splice_immediate_flag = 0`).
        case components([ComponentSplice])
        /// Component splice, immediate (`program_splice_flag = 0`, `splice_immediate_flag = 1`):
        /// only the `component_tag`s.
        case componentsImmediate(tags: [UInt8])

        /// `program_splice_flag`.
        public var programSpliceFlag: Bool {
            switch self {
            case .program, .programImmediate: return true
            case .components, .componentsImmediate: return false
            }
        }

        /// `splice_immediate_flag`.
        public var spliceImmediateFlag: Bool {
            switch self {
            case .programImmediate, .componentsImmediate: return true
            case .program, .components: return false
            }
        }
    }

    /// One entry of the component loop: `component_tag` and its `splice_time()`.
    public struct ComponentSplice: Sendable, Hashable, Codable {
        public var componentTag: UInt8
        public var spliceTime: SpliceTime

        public init(componentTag: UInt8, spliceTime: SpliceTime) {
            self.componentTag = componentTag
            self.spliceTime = spliceTime
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: FieldKey.self)
            componentTag = try c.decode(UInt8.self, forKey: "component_tag")
            spliceTime = try c.decode(SpliceTime.self, forKey: "splice_time")
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: FieldKey.self)
            try c.encode(componentTag, forKey: "component_tag")
            try c.encode(spliceTime, forKey: "splice_time")
        }
    }

    /// The body of a splice that is not cancelled.
    public struct ScheduledEvent: Sendable, Hashable {
        /// `out_of_network_indicator`: `true` leaves the network feed (break starts, `SCTE35-OUT`),
        /// `false` returns to it (break ends, `SCTE35-IN`).
        public var outOfNetwork: Bool
        public var mode: Mode
        /// `break_duration()`, present iff `duration_flag == 1`.
        public var breakDuration: BreakDuration?
        /// `unique_program_id`.
        public var uniqueProgramID: UInt16
        /// `avail_num`.
        public var availNum: UInt8
        /// `avails_expected`.
        public var availsExpected: UInt8
        /// `event_id_compliance_flag` (SCTE 35 2022; a reserved bit, normally 1, in older editions).
        public var eventIDComplianceFlag: Bool
        /// The 3 reserved bits after `event_id_compliance_flag`, as received (default all ones).
        public var reserved: UInt8

        public init(
            outOfNetwork: Bool,
            mode: Mode,
            breakDuration: BreakDuration? = nil,
            uniqueProgramID: UInt16 = 0,
            availNum: UInt8 = 0,
            availsExpected: UInt8 = 0,
            eventIDComplianceFlag: Bool = true,
            reserved: UInt8 = 0x07
        ) {
            self.outOfNetwork = outOfNetwork
            self.mode = mode
            self.breakDuration = breakDuration
            self.uniqueProgramID = uniqueProgramID
            self.availNum = availNum
            self.availsExpected = availsExpected
            self.eventIDComplianceFlag = eventIDComplianceFlag
            self.reserved = reserved
        }
    }
}

// MARK: - Conveniences

extension SpliceInsert {
    /// `splice_event_cancel_indicator`.
    public var isCancelled: Bool { scheduledEvent == nil }

    /// `out_of_network_indicator`; `false` for a cancelled event.
    public var isOutOfNetwork: Bool { scheduledEvent?.outOfNetwork ?? false }

    /// `.out` for a splice out of the network, `.in` for a return; `nil` when cancelled.
    public var cueDirection: CueDirection? {
        scheduledEvent.map { $0.outOfNetwork ? .out : .in }
    }

    /// The program splice time, if this is a timed program splice.
    public var programSpliceTime: SpliceTime? {
        if case .program(let time) = scheduledEvent?.mode { return time }
        return nil
    }

    /// `break_duration()`, if present.
    public var breakDuration: BreakDuration? { scheduledEvent?.breakDuration }
}

// MARK: - Binary

extension SpliceInsert {
    init(reading reader: inout BitReader) throws(SCTE35Error) {
        eventID = try reader.uint32(32, "splice_event_id")
        let cancelled = try reader.flag("splice_event_cancel_indicator")
        reserved = try reader.uint8(7, "splice_insert reserved")
        guard !cancelled else {
            scheduledEvent = nil
            return
        }
        let outOfNetwork = try reader.flag("out_of_network_indicator")
        let programSplice = try reader.flag("program_splice_flag")
        let hasDuration = try reader.flag("duration_flag")
        let immediate = try reader.flag("splice_immediate_flag")
        let compliance = try reader.flag("event_id_compliance_flag")
        let flagsReserved = try reader.uint8(3, "splice_insert reserved")

        let mode: Mode
        if programSplice {
            mode = immediate ? .programImmediate : .program(try SpliceTime(reading: &reader))
        } else {
            let count = Int(try reader.uint8(8, "component_count"))
            if immediate {
                var tags: [UInt8] = []
                for _ in 0..<count { tags.append(try reader.uint8(8, "component_tag")) }
                mode = .componentsImmediate(tags: tags)
            } else {
                var components: [ComponentSplice] = []
                for _ in 0..<count {
                    let tag = try reader.uint8(8, "component_tag")
                    components.append(ComponentSplice(componentTag: tag, spliceTime: try SpliceTime(reading: &reader)))
                }
                mode = .components(components)
            }
        }
        let breakDuration = hasDuration ? try BreakDuration(reading: &reader) : nil
        scheduledEvent = ScheduledEvent(
            outOfNetwork: outOfNetwork,
            mode: mode,
            breakDuration: breakDuration,
            uniqueProgramID: try reader.uint16(16, "unique_program_id"),
            availNum: try reader.uint8(8, "avail_num"),
            availsExpected: try reader.uint8(8, "avails_expected"),
            eventIDComplianceFlag: compliance,
            reserved: flagsReserved
        )
    }

    func write(to writer: inout BitWriter) throws(SCTE35Error) {
        try writer.field("splice_event_id", eventID, bits: 32)
        writer.flag(scheduledEvent == nil)
        writer.reserved(reserved, bits: 7)
        guard let event = scheduledEvent else { return }
        writer.flag(event.outOfNetwork)
        writer.flag(event.mode.programSpliceFlag)
        writer.flag(event.breakDuration != nil)
        writer.flag(event.mode.spliceImmediateFlag)
        writer.flag(event.eventIDComplianceFlag)
        writer.reserved(event.reserved, bits: 3)
        switch event.mode {
        case .program(let time):
            try time.write(to: &writer)
        case .programImmediate:
            break
        case .components(let components):
            try writer.field("component_count", components.count, bits: 8)
            for component in components {
                try writer.field("component_tag", component.componentTag, bits: 8)
                try component.spliceTime.write(to: &writer)
            }
        case .componentsImmediate(let tags):
            try writer.field("component_count", tags.count, bits: 8)
            for tag in tags { try writer.field("component_tag", tag, bits: 8) }
        }
        try event.breakDuration?.write(to: &writer)
        try writer.field("unique_program_id", event.uniqueProgramID, bits: 16)
        try writer.field("avail_num", event.availNum, bits: 8)
        try writer.field("avails_expected", event.availsExpected, bits: 8)
    }
}
