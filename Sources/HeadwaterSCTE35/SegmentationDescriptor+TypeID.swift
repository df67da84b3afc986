extension SegmentationDescriptor {
    /// `segmentation_type_id` (SCTE 35 Table 22/23). An open set: values this library does not name
    /// still round-trip.
    ///
    /// Names for `0x1A`, `0x3C`–`0x3F` and `0x42`–`0x47` come from later editions of the standard and
    /// were not verified against its text (HLS-RULES I3 and "Gaps" 4).
    public struct TypeID: RawRepresentable, Sendable, Hashable, Codable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public init(_ rawValue: UInt8) { self.rawValue = rawValue }

        public static let notIndicated = Self(0x00)
        public static let contentIdentification = Self(0x01)
        public static let programStart = Self(0x10)
        public static let programEnd = Self(0x11)
        public static let programEarlyTermination = Self(0x12)
        public static let programBreakaway = Self(0x13)
        public static let programResumption = Self(0x14)
        public static let programRunoverPlanned = Self(0x15)
        public static let programRunoverUnplanned = Self(0x16)
        public static let programOverlapStart = Self(0x17)
        public static let programBlackoutOverride = Self(0x18)
        public static let programStartInProgress = Self(0x19)
        public static let programJoin = Self(0x1A)
        public static let chapterStart = Self(0x20)
        public static let chapterEnd = Self(0x21)
        public static let breakStart = Self(0x22)
        public static let breakEnd = Self(0x23)
        public static let openingCreditStart = Self(0x24)
        public static let openingCreditEnd = Self(0x25)
        public static let closingCreditStart = Self(0x26)
        public static let closingCreditEnd = Self(0x27)
        public static let providerAdvertisementStart = Self(0x30)
        public static let providerAdvertisementEnd = Self(0x31)
        public static let distributorAdvertisementStart = Self(0x32)
        public static let distributorAdvertisementEnd = Self(0x33)
        public static let providerPlacementOpportunityStart = Self(0x34)
        public static let providerPlacementOpportunityEnd = Self(0x35)
        public static let distributorPlacementOpportunityStart = Self(0x36)
        public static let distributorPlacementOpportunityEnd = Self(0x37)
        public static let providerOverlayPlacementOpportunityStart = Self(0x38)
        public static let providerOverlayPlacementOpportunityEnd = Self(0x39)
        public static let distributorOverlayPlacementOpportunityStart = Self(0x3A)
        public static let distributorOverlayPlacementOpportunityEnd = Self(0x3B)
        public static let providerPromoStart = Self(0x3C)
        public static let providerPromoEnd = Self(0x3D)
        public static let distributorPromoStart = Self(0x3E)
        public static let distributorPromoEnd = Self(0x3F)
        public static let unscheduledEventStart = Self(0x40)
        public static let unscheduledEventEnd = Self(0x41)
        public static let alternateContentOpportunityStart = Self(0x42)
        public static let alternateContentOpportunityEnd = Self(0x43)
        public static let providerAdBlockStart = Self(0x44)
        public static let providerAdBlockEnd = Self(0x45)
        public static let distributorAdBlockStart = Self(0x46)
        public static let distributorAdBlockEnd = Self(0x47)
        public static let networkStart = Self(0x50)
        public static let networkEnd = Self(0x51)

        /// The Table 22 name, e.g. `"Provider Placement Opportunity Start"`; `nil` if reserved.
        public var name: String? {
            switch rawValue {
            case 0x00: return "Not Indicated"
            case 0x01: return "Content Identification"
            case 0x10: return "Program Start"
            case 0x11: return "Program End"
            case 0x12: return "Program Early Termination"
            case 0x13: return "Program Breakaway"
            case 0x14: return "Program Resumption"
            case 0x15: return "Program Runover Planned"
            case 0x16: return "Program Runover Unplanned"
            case 0x17: return "Program Overlap Start"
            case 0x18: return "Program Blackout Override"
            case 0x19: return "Program Start - In Progress"
            case 0x1A: return "Program Join"
            case 0x20: return "Chapter Start"
            case 0x21: return "Chapter End"
            case 0x22: return "Break Start"
            case 0x23: return "Break End"
            case 0x24: return "Opening Credit Start"
            case 0x25: return "Opening Credit End"
            case 0x26: return "Closing Credit Start"
            case 0x27: return "Closing Credit End"
            case 0x30: return "Provider Advertisement Start"
            case 0x31: return "Provider Advertisement End"
            case 0x32: return "Distributor Advertisement Start"
            case 0x33: return "Distributor Advertisement End"
            case 0x34: return "Provider Placement Opportunity Start"
            case 0x35: return "Provider Placement Opportunity End"
            case 0x36: return "Distributor Placement Opportunity Start"
            case 0x37: return "Distributor Placement Opportunity End"
            case 0x38: return "Provider Overlay Placement Opportunity Start"
            case 0x39: return "Provider Overlay Placement Opportunity End"
            case 0x3A: return "Distributor Overlay Placement Opportunity Start"
            case 0x3B: return "Distributor Overlay Placement Opportunity End"
            case 0x3C: return "Provider Promo Start"
            case 0x3D: return "Provider Promo End"
            case 0x3E: return "Distributor Promo Start"
            case 0x3F: return "Distributor Promo End"
            case 0x40: return "Unscheduled Event Start"
            case 0x41: return "Unscheduled Event End"
            case 0x42: return "Alternate Content Opportunity Start"
            case 0x43: return "Alternate Content Opportunity End"
            case 0x44: return "Provider Ad Block Start"
            case 0x45: return "Provider Ad Block End"
            case 0x46: return "Distributor Ad Block Start"
            case 0x47: return "Distributor Ad Block End"
            case 0x50: return "Network Start"
            case 0x51: return "Network End"
            default: return nil
            }
        }

        /// Types that carry `sub_segment_num` and `sub_segments_expected`
        /// (`0x30, 0x32, 0x34, 0x36, 0x38, 0x3A, 0x44, 0x46`).
        public var hasSubSegments: Bool {
            switch rawValue {
            case 0x30, 0x32, 0x34, 0x36, 0x38, 0x3A, 0x44, 0x46: return true
            default: return false
            }
        }

        /// Whether the name ends in "Start" (`true`) or "End" (`false`); `nil` for types that are not
        /// one side of a pair (e.g. Content Identification, Breakaway, Blackout Override).
        public var isStart: Bool? {
            switch rawValue {
            case 0x10, 0x17, 0x19, 0x1A, 0x20, 0x22, 0x24, 0x26, 0x30, 0x32, 0x34, 0x36, 0x38, 0x3A, 0x3C, 0x3E,
                0x40, 0x42, 0x44, 0x46, 0x50:
                return true
            case 0x11, 0x12, 0x21, 0x23, 0x25, 0x27, 0x31, 0x33, 0x35, 0x37, 0x39, 0x3B, 0x3D, 0x3F, 0x41, 0x43,
                0x45, 0x47, 0x51:
                return false
            default:
                return nil
            }
        }

        /// For the break/advertisement/placement-opportunity/ad-block types an ad stitcher acts on,
        /// the `EXT-X-DATERANGE` side (HLS-RULES D11: e.g. `0x34` → `SCTE35-OUT`, `0x35` → `SCTE35-IN`).
        /// `nil` for other types, which HLS carries in `SCTE35-CMD`.
        public var cueDirection: CueDirection? {
            switch rawValue {
            case 0x22, 0x23, 0x30...0x3B, 0x44...0x47:
                return isStart.map { $0 ? .out : .in }
            default:
                return nil
            }
        }

        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(UInt8.self)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(rawValue)
        }
    }
}
