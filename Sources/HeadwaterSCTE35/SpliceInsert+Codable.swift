extension SpliceInsert: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        eventID = try c.decode(UInt32.self, forKey: "splice_event_id")
        reserved = try c.decode("reserved", default: 0x7F)
        let cancelled = try c.decode("splice_event_cancel_indicator", default: false)
        scheduledEvent = cancelled ? nil : try ScheduledEvent(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(eventID, forKey: "splice_event_id")
        try c.encode(scheduledEvent == nil, forKey: "splice_event_cancel_indicator")
        try c.encodeReserved(reserved, default: 0x7F, forKey: "reserved")
        try scheduledEvent?.encode(to: encoder)
    }
}

/// Encodes into the enclosing `splice_insert()` object (the syntax is flat).
extension SpliceInsert.ScheduledEvent: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        let hasDuration = try c.decodeIfPresent(Bool.self, forKey: "duration_flag") ?? c.contains("break_duration")
        self.init(
            outOfNetwork: try c.decode(Bool.self, forKey: "out_of_network_indicator"),
            mode: try SpliceInsert.Mode(from: decoder),
            breakDuration: hasDuration ? try c.decode(BreakDuration.self, forKey: "break_duration") : nil,
            uniqueProgramID: try c.decode("unique_program_id", default: 0),
            availNum: try c.decode("avail_num", default: 0),
            availsExpected: try c.decode("avails_expected", default: 0),
            eventIDComplianceFlag: try c.decode("event_id_compliance_flag", default: true),
            reserved: try c.decode("reserved_2", default: 0x07)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(outOfNetwork, forKey: "out_of_network_indicator")
        try c.encode(mode.programSpliceFlag, forKey: "program_splice_flag")
        try c.encode(breakDuration != nil, forKey: "duration_flag")
        try c.encode(mode.spliceImmediateFlag, forKey: "splice_immediate_flag")
        try c.encode(eventIDComplianceFlag, forKey: "event_id_compliance_flag")
        try c.encodeReserved(reserved, default: 0x07, forKey: "reserved_2")
        try mode.encode(to: encoder)
        if let breakDuration {
            try c.encode(breakDuration, forKey: "break_duration")
        }
        try c.encode(uniqueProgramID, forKey: "unique_program_id")
        try c.encode(availNum, forKey: "avail_num")
        try c.encode(availsExpected, forKey: "avails_expected")
    }
}

/// `program_splice_flag`, `splice_immediate_flag` and the `splice_time` or `components` they select.
extension SpliceInsert.Mode: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        let programSplice = try c.decode("program_splice_flag", default: true)
        let immediate = try c.decode("splice_immediate_flag", default: false)
        switch (programSplice, immediate) {
        case (true, false): self = .program(try c.decode(SpliceTime.self, forKey: "splice_time"))
        case (true, true): self = .programImmediate
        case (false, false): self = .components(try c.decode([SpliceInsert.ComponentSplice].self, forKey: "components"))
        case (false, true):
            let components = try c.decode([ComponentTagOnly].self, forKey: "components")
            self = .componentsImmediate(tags: components.map(\.componentTag))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(programSpliceFlag, forKey: "program_splice_flag")
        try c.encode(spliceImmediateFlag, forKey: "splice_immediate_flag")
        switch self {
        case .program(let time):
            try c.encode(time, forKey: "splice_time")
        case .programImmediate:
            break
        case .components(let components):
            try c.encode(components.count, forKey: "component_count")
            try c.encode(components, forKey: "components")
        case .componentsImmediate(let tags):
            try c.encode(tags.count, forKey: "component_count")
            try c.encode(tags.map(ComponentTagOnly.init), forKey: "components")
        }
    }

    /// A component of an immediate component splice: `{"component_tag": n}`.
    private struct ComponentTagOnly: Codable {
        var componentTag: UInt8

        init(_ tag: UInt8) { componentTag = tag }

        init(from decoder: any Decoder) throws {
            componentTag = try decoder.container(keyedBy: FieldKey.self).decode(UInt8.self, forKey: "component_tag")
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: FieldKey.self)
            try c.encode(componentTag, forKey: "component_tag")
        }
    }
}
