extension SegmentationDescriptor: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        eventID = try c.decode(UInt32.self, forKey: "segmentation_event_id")
        eventIDComplianceIndicator = try c.decode("segmentation_event_id_compliance_indicator", default: true)
        reserved = try c.decode("reserved", default: 0x3F)
        let cancelled = try c.decode("segmentation_event_cancel_indicator", default: false)
        scheduledEvent = cancelled ? nil : try ScheduledEvent(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(eventID, forKey: "segmentation_event_id")
        try c.encode(scheduledEvent == nil, forKey: "segmentation_event_cancel_indicator")
        try c.encode(eventIDComplianceIndicator, forKey: "segmentation_event_id_compliance_indicator")
        try c.encodeReserved(reserved, default: 0x3F, forKey: "reserved")
        try scheduledEvent?.encode(to: encoder)
    }
}

/// Encodes into the enclosing `segmentation_descriptor()` object (the syntax is flat).
extension SegmentationDescriptor.ScheduledEvent: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        let restricted = !(try c.decode("delivery_not_restricted_flag", default: true))
        let programSegmentation = try c.decode("program_segmentation_flag", default: true)
        let hasDuration = try c.decodeIfPresent(Bool.self, forKey: "segmentation_duration_flag")
            ?? c.contains("segmentation_duration")
        let hasSubSegment = c.contains("sub_segment_num") || c.contains("sub_segments_expected")
        self.init(
            deliveryRestrictions: restricted ? try SegmentationDescriptor.DeliveryRestrictions(from: decoder) : nil,
            components: programSegmentation ? nil : try c.decode([SegmentationDescriptor.Component].self, forKey: "components"),
            duration: hasDuration ? try c.decode(UInt64.self, forKey: "segmentation_duration") : nil,
            upid: try SegmentationUPID(from: decoder),
            typeID: try c.decode(SegmentationDescriptor.TypeID.self, forKey: "segmentation_type_id"),
            segmentNum: try c.decode("segment_num", default: 0),
            segmentsExpected: try c.decode("segments_expected", default: 0),
            subSegment: hasSubSegment ? try SegmentationDescriptor.SubSegment(from: decoder) : nil,
            deliveryReserved: try c.decode("delivery_reserved", default: 0x1F)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(components == nil, forKey: "program_segmentation_flag")
        try c.encode(duration != nil, forKey: "segmentation_duration_flag")
        try c.encode(deliveryRestrictions == nil, forKey: "delivery_not_restricted_flag")
        if let deliveryRestrictions {
            try deliveryRestrictions.encode(to: encoder)
        } else {
            try c.encodeReserved(deliveryReserved, default: 0x1F, forKey: "delivery_reserved")
        }
        if let components {
            try c.encode(components.count, forKey: "component_count")
            try c.encode(components, forKey: "components")
        }
        if let duration {
            try c.encode(duration, forKey: "segmentation_duration")
            try c.encodeSeconds(ticks: duration, forKey: "segmentation_duration_seconds")
        }
        try upid.encode(to: encoder)
        try c.encode(typeID, forKey: "segmentation_type_id")
        if let name = typeID.name { try c.encode(name, forKey: "segmentation_type_name") }
        try c.encode(segmentNum, forKey: "segment_num")
        try c.encode(segmentsExpected, forKey: "segments_expected")
        if typeID.hasSubSegments, let subSegment {
            try subSegment.encode(to: encoder)
        }
    }
}

extension SegmentationDescriptor.DeliveryRestrictions: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        self.init(
            webDeliveryAllowed: try c.decode(Bool.self, forKey: "web_delivery_allowed_flag"),
            noRegionalBlackout: try c.decode(Bool.self, forKey: "no_regional_blackout_flag"),
            archiveAllowed: try c.decode(Bool.self, forKey: "archive_allowed_flag"),
            deviceRestrictions: try c.decode(SegmentationDescriptor.DeviceRestrictions.self, forKey: "device_restrictions")
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(webDeliveryAllowed, forKey: "web_delivery_allowed_flag")
        try c.encode(noRegionalBlackout, forKey: "no_regional_blackout_flag")
        try c.encode(archiveAllowed, forKey: "archive_allowed_flag")
        try c.encode(deviceRestrictions, forKey: "device_restrictions")
    }
}

extension SegmentationDescriptor.Component: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        self.init(
            componentTag: try c.decode(UInt8.self, forKey: "component_tag"),
            ptsOffset: try c.decode(UInt64.self, forKey: "pts_offset"),
            reserved: try c.decode("reserved", default: 0x7F)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(componentTag, forKey: "component_tag")
        try c.encodeReserved(reserved, default: 0x7F, forKey: "reserved")
        try c.encode(ptsOffset, forKey: "pts_offset")
    }
}

extension SegmentationDescriptor.SubSegment: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        self.init(
            num: try c.decode(UInt8.self, forKey: "sub_segment_num"),
            expected: try c.decode(UInt8.self, forKey: "sub_segments_expected")
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(num, forKey: "sub_segment_num")
        try c.encode(expected, forKey: "sub_segments_expected")
    }
}
