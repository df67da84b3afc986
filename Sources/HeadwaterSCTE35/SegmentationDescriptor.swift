/// `segmentation_descriptor()` (tag `0x02`): marks the start or end of a program, chapter, break,
/// advertisement or placement opportunity, usually with a `time_signal()`. Each
/// `segmentation_type_id` becomes its own `EXT-X-DATERANGE` (HLS-RULES D11); `PLANNED-DURATION`
/// is `segmentation_duration / 90 000` (D13).
///
/// ```
/// segmentation_descriptor() {                          bits  mnemonic
///   splice_descriptor_tag                                8    uimsbf   (0x02)
///   descriptor_length                                    8    uimsbf
///   identifier                                          32    uimsbf   ('CUEI')
///   segmentation_event_id                               32    uimsbf
///   segmentation_event_cancel_indicator                  1    bslbf
///   segmentation_event_id_compliance_indicator           1    bslbf    (reserved before 2022)
///   reserved                                             6    bslbf
///   if (segmentation_event_cancel_indicator == '0') {
///     program_segmentation_flag                          1    bslbf
///     segmentation_duration_flag                         1    bslbf
///     delivery_not_restricted_flag                       1    bslbf
///     if (delivery_not_restricted_flag == '0') {
///       web_delivery_allowed_flag                        1    bslbf
///       no_regional_blackout_flag                        1    bslbf
///       archive_allowed_flag                             1    bslbf
///       device_restrictions                              2    bslbf
///     } else
///       reserved                                         5    bslbf
///     if (program_segmentation_flag == '0') {
///       component_count                                  8    uimsbf
///       for (i = 0; i < component_count; i++) {
///         component_tag                                  8    uimsbf
///         reserved                                       7    bslbf
///         pts_offset                                    33    uimsbf
///       }
///     }
///     if (segmentation_duration_flag == '1')
///       segmentation_duration                           40    uimsbf
///     segmentation_upid_type                             8    uimsbf
///     segmentation_upid_length                           8    uimsbf
///     segmentation_upid()
///     segmentation_type_id                               8    uimsbf
///     segment_num                                        8    uimsbf
///     segments_expected                                  8    uimsbf
///     if (segmentation_type_id == 0x30, 0x32, 0x34, 0x36, 0x38, 0x3A, 0x44 or 0x46) {
///       sub_segment_num                                  8    uimsbf
///       sub_segments_expected                            8    uimsbf
///     }
///   }
/// }
/// ```
/// Older encoders (before SCTE 35 2016) end the descriptor after `segments_expected` even for those
/// types; the decoder then sets ``ScheduledEvent/subSegment`` to `nil` and the encoder omits the two
/// bytes again, so such sections (§14.1, HLS-RULES Ex 2) round-trip byte for byte.
public struct SegmentationDescriptor: Sendable, Hashable {
    /// `segmentation_event_id`.
    public var eventID: UInt32
    /// `segmentation_event_id_compliance_indicator` (a reserved bit, normally 1, before 2022).
    public var eventIDComplianceIndicator: Bool
    /// The 6 reserved bits after the compliance indicator, as received (default all ones).
    public var reserved: UInt8
    /// The segmentation event; `nil` means `segmentation_event_cancel_indicator == 1`.
    public var scheduledEvent: ScheduledEvent?

    public init(
        eventID: UInt32,
        scheduledEvent: ScheduledEvent?,
        eventIDComplianceIndicator: Bool = true,
        reserved: UInt8 = 0x3F
    ) {
        self.eventID = eventID
        self.scheduledEvent = scheduledEvent
        self.eventIDComplianceIndicator = eventIDComplianceIndicator
        self.reserved = reserved
    }

    /// The body of a segmentation event that is not cancelled.
    public struct ScheduledEvent: Sendable, Hashable {
        /// Delivery restrictions; `nil` means `delivery_not_restricted_flag == 1`.
        public var deliveryRestrictions: DeliveryRestrictions?
        /// The 5 reserved bits written when ``deliveryRestrictions`` is `nil`, as received (default all ones).
        public var deliveryReserved: UInt8
        /// The component loop; `nil` means `program_segmentation_flag == 1` (the whole program).
        public var components: [Component]?
        /// `segmentation_duration` in 90 kHz ticks (40 bits); `nil` means `segmentation_duration_flag == 0`.
        public var duration: UInt64?
        /// `segmentation_upid_type`, `segmentation_upid_length`, `segmentation_upid()`.
        public var upid: SegmentationUPID
        /// `segmentation_type_id`.
        public var typeID: TypeID
        /// `segment_num`.
        public var segmentNum: UInt8
        /// `segments_expected`.
        public var segmentsExpected: UInt8
        /// `sub_segment_num` and `sub_segments_expected`: only for types where
        /// ``TypeID/hasSubSegments``, and `nil` when an older encoder omitted them.
        /// Ignored by the encoder for other types.
        public var subSegment: SubSegment?

        public init(
            deliveryRestrictions: DeliveryRestrictions? = nil,
            components: [Component]? = nil,
            duration: UInt64? = nil,
            upid: SegmentationUPID = .none,
            typeID: TypeID,
            segmentNum: UInt8 = 0,
            segmentsExpected: UInt8 = 0,
            subSegment: SubSegment? = nil,
            deliveryReserved: UInt8 = 0x1F
        ) {
            self.deliveryRestrictions = deliveryRestrictions
            self.components = components
            self.duration = duration
            self.upid = upid
            self.typeID = typeID
            self.segmentNum = segmentNum
            self.segmentsExpected = segmentsExpected
            self.subSegment = subSegment
            self.deliveryReserved = deliveryReserved
        }
    }

    /// The flags present when `delivery_not_restricted_flag == 0`.
    public struct DeliveryRestrictions: Sendable, Hashable {
        /// `web_delivery_allowed_flag`.
        public var webDeliveryAllowed: Bool
        /// `no_regional_blackout_flag`.
        public var noRegionalBlackout: Bool
        /// `archive_allowed_flag`.
        public var archiveAllowed: Bool
        /// `device_restrictions` (2 bits).
        public var deviceRestrictions: DeviceRestrictions

        public init(webDeliveryAllowed: Bool, noRegionalBlackout: Bool, archiveAllowed: Bool, deviceRestrictions: DeviceRestrictions) {
            self.webDeliveryAllowed = webDeliveryAllowed
            self.noRegionalBlackout = noRegionalBlackout
            self.archiveAllowed = archiveAllowed
            self.deviceRestrictions = deviceRestrictions
        }
    }

    /// `device_restrictions` (SCTE 35 Table 20).
    public enum DeviceRestrictions: UInt8, Sendable, Hashable, Codable {
        case restrictGroup0 = 0
        case restrictGroup1 = 1
        case restrictGroup2 = 2
        case unrestricted = 3
    }

    /// One entry of the component loop.
    public struct Component: Sendable, Hashable {
        /// `component_tag`.
        public var componentTag: UInt8
        /// `pts_offset` (33 bits, 90 kHz): this component's offset from the splice time.
        public var ptsOffset: UInt64
        /// The 7 reserved bits, as received (default all ones).
        public var reserved: UInt8

        public init(componentTag: UInt8, ptsOffset: UInt64, reserved: UInt8 = 0x7F) {
            self.componentTag = componentTag
            self.ptsOffset = ptsOffset
            self.reserved = reserved
        }
    }

    /// `sub_segment_num` and `sub_segments_expected`.
    public struct SubSegment: Sendable, Hashable {
        public var num: UInt8
        public var expected: UInt8

        public init(num: UInt8, expected: UInt8) {
            self.num = num
            self.expected = expected
        }
    }
}

// MARK: - Conveniences

extension SegmentationDescriptor {
    /// `segmentation_event_cancel_indicator`.
    public var isCancelled: Bool { scheduledEvent == nil }

    /// `segmentation_type_id`, or `nil` when cancelled.
    public var typeID: TypeID? { scheduledEvent?.typeID }

    /// `segmentation_duration` in ticks, if present.
    public var durationTicks: UInt64? { scheduledEvent?.duration }

    /// `segmentation_duration` in microseconds, if present.
    public var durationMicroseconds: Int64? { durationTicks.map(Ticks90kHz.microseconds) }

    /// The `EXT-X-DATERANGE` side for break/ad/placement-opportunity types (``TypeID/cueDirection``).
    public var cueDirection: CueDirection? { scheduledEvent?.typeID.cueDirection }
}

// MARK: - Binary

extension SegmentationDescriptor {
    /// Reads the fields after `identifier`; `reader` is limited to the descriptor.
    init(reading reader: inout BitReader) throws(SCTE35Error) {
        eventID = try reader.uint32(32, "segmentation_event_id")
        let cancelled = try reader.flag("segmentation_event_cancel_indicator")
        eventIDComplianceIndicator = try reader.flag("segmentation_event_id_compliance_indicator")
        reserved = try reader.uint8(6, "segmentation_descriptor reserved")
        guard !cancelled else {
            scheduledEvent = nil
            return
        }
        let programSegmentation = try reader.flag("program_segmentation_flag")
        let hasDuration = try reader.flag("segmentation_duration_flag")
        let notRestricted = try reader.flag("delivery_not_restricted_flag")
        var restrictions: DeliveryRestrictions?
        var deliveryReserved: UInt8 = 0x1F
        if notRestricted {
            deliveryReserved = try reader.uint8(5, "segmentation_descriptor reserved")
        } else {
            restrictions = DeliveryRestrictions(
                webDeliveryAllowed: try reader.flag("web_delivery_allowed_flag"),
                noRegionalBlackout: try reader.flag("no_regional_blackout_flag"),
                archiveAllowed: try reader.flag("archive_allowed_flag"),
                deviceRestrictions: DeviceRestrictions(rawValue: try reader.uint8(2, "device_restrictions")) ?? .unrestricted
            )
        }
        var components: [Component]?
        if !programSegmentation {
            let count = Int(try reader.uint8(8, "component_count"))
            var list: [Component] = []
            for _ in 0..<count {
                let tag = try reader.uint8(8, "component_tag")
                let reserved = try reader.uint8(7, "component reserved")
                list.append(Component(componentTag: tag, ptsOffset: try reader.bits(33, "pts_offset"), reserved: reserved))
            }
            components = list
        }
        let duration = hasDuration ? try reader.bits(40, "segmentation_duration") : nil
        let upidType = try reader.uint8(8, "segmentation_upid_type")
        let upidLength = Int(try reader.uint8(8, "segmentation_upid_length"))
        let upid = SegmentationUPID(type: .init(upidType), bytes: try reader.bytes(upidLength, "segmentation_upid"))
        let typeID = TypeID(try reader.uint8(8, "segmentation_type_id"))
        let segmentNum = try reader.uint8(8, "segment_num")
        let segmentsExpected = try reader.uint8(8, "segments_expected")
        var subSegment: SubSegment?
        if typeID.hasSubSegments, !reader.isAtEnd {
            subSegment = SubSegment(
                num: try reader.uint8(8, "sub_segment_num"),
                expected: try reader.uint8(8, "sub_segments_expected")
            )
        }
        scheduledEvent = ScheduledEvent(
            deliveryRestrictions: restrictions,
            components: components,
            duration: duration,
            upid: upid,
            typeID: typeID,
            segmentNum: segmentNum,
            segmentsExpected: segmentsExpected,
            subSegment: subSegment,
            deliveryReserved: deliveryReserved
        )
    }

    func write(to writer: inout BitWriter) throws(SCTE35Error) {
        try writer.field("segmentation_event_id", eventID, bits: 32)
        writer.flag(scheduledEvent == nil)
        writer.flag(eventIDComplianceIndicator)
        writer.reserved(reserved, bits: 6)
        guard let event = scheduledEvent else { return }
        writer.flag(event.components == nil)
        writer.flag(event.duration != nil)
        writer.flag(event.deliveryRestrictions == nil)
        if let restrictions = event.deliveryRestrictions {
            writer.flag(restrictions.webDeliveryAllowed)
            writer.flag(restrictions.noRegionalBlackout)
            writer.flag(restrictions.archiveAllowed)
            writer.write(UInt64(restrictions.deviceRestrictions.rawValue), bits: 2)
        } else {
            writer.reserved(event.deliveryReserved, bits: 5)
        }
        if let components = event.components {
            try writer.field("component_count", components.count, bits: 8)
            for component in components {
                try writer.field("component_tag", component.componentTag, bits: 8)
                writer.reserved(component.reserved, bits: 7)
                try writer.field("pts_offset", component.ptsOffset, bits: 33)
            }
        }
        if let duration = event.duration {
            try writer.field("segmentation_duration", duration, bits: 40)
        }
        try writer.field("segmentation_upid_type", event.upid.type.rawValue, bits: 8)
        try writer.field("segmentation_upid_length", event.upid.bytes.count, bits: 8)
        writer.append(event.upid.bytes)
        try writer.field("segmentation_type_id", event.typeID.rawValue, bits: 8)
        try writer.field("segment_num", event.segmentNum, bits: 8)
        try writer.field("segments_expected", event.segmentsExpected, bits: 8)
        if event.typeID.hasSubSegments, let sub = event.subSegment {
            try writer.field("sub_segment_num", sub.num, bits: 8)
            try writer.field("sub_segments_expected", sub.expected, bits: 8)
        }
    }
}
