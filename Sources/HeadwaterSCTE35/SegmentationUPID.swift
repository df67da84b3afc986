/// `segmentation_upid()`: the unique program identifier of a segmentation descriptor, kept as its
/// type and raw bytes (`segmentation_upid_length` is `bytes.count`, at most 255).
///
/// ```
///   segmentation_upid_type               8    uimsbf
///   segmentation_upid_length             8    uimsbf
///   segmentation_upid()             N × 8                (N = segmentation_upid_length)
/// ```
/// The bytes are not interpreted (a MID, type `0x0D`, nests further UPIDs); ``text`` offers the
/// ASCII reading that most types (Ad-ID, TID, ADI, URI, …) use.
public struct SegmentationUPID: Sendable, Hashable {
    /// `segmentation_upid_type`.
    public var type: UPIDType
    /// `segmentation_upid()` bytes.
    public var bytes: [UInt8]

    public init(type: UPIDType, bytes: [UInt8]) {
        self.type = type
        self.bytes = bytes
    }

    /// No UPID: type `0x00`, length 0.
    public static let none = SegmentationUPID(type: .notUsed, bytes: [])

    /// The bytes as ASCII, when non-empty and all printable.
    public var text: String? {
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `segmentation_upid_type` values (SCTE 35 Table 21; names beyond `0x08`/`0x09` not verified here).
    public struct UPIDType: RawRepresentable, Sendable, Hashable, Codable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public init(_ rawValue: UInt8) { self.rawValue = rawValue }

        public static let notUsed = Self(0x00)
        public static let userDefined = Self(0x01)
        public static let isci = Self(0x02)
        public static let adID = Self(0x03)
        public static let umid = Self(0x04)
        public static let isanDeprecated = Self(0x05)
        public static let isan = Self(0x06)
        public static let tid = Self(0x07)
        public static let ti = Self(0x08)
        public static let adi = Self(0x09)
        public static let eidr = Self(0x0A)
        public static let atscContentIdentifier = Self(0x0B)
        public static let mpu = Self(0x0C)
        public static let mid = Self(0x0D)
        public static let adsInformation = Self(0x0E)
        public static let uri = Self(0x0F)
        public static let uuid = Self(0x10)
        public static let scr = Self(0x11)

        /// A short name for display, or `nil` for a reserved value.
        public var name: String? {
            switch rawValue {
            case 0x00: return "Not Used"
            case 0x01: return "User Defined (deprecated)"
            case 0x02: return "ISCI (deprecated)"
            case 0x03: return "Ad-ID"
            case 0x04: return "UMID"
            case 0x05: return "ISAN (deprecated)"
            case 0x06: return "ISAN"
            case 0x07: return "TID"
            case 0x08: return "TI"
            case 0x09: return "ADI"
            case 0x0A: return "EIDR"
            case 0x0B: return "ATSC Content Identifier"
            case 0x0C: return "MPU"
            case 0x0D: return "MID"
            case 0x0E: return "ADS Information"
            case 0x0F: return "URI"
            case 0x10: return "UUID"
            case 0x11: return "SCR"
            default: return nil
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

extension SegmentationUPID: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        type = try c.decode(UPIDType.self, forKey: "segmentation_upid_type")
        bytes = try c.decodeHexIfPresent(forKey: "segmentation_upid") ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(type, forKey: "segmentation_upid_type")
        if let name = type.name { try c.encode(name, forKey: "segmentation_upid_type_name") }
        try c.encode(bytes.count, forKey: "segmentation_upid_length")
        try c.encodeHex(bytes, forKey: "segmentation_upid")
        if let text { try c.encode(text, forKey: "segmentation_upid_text") }
    }
}
