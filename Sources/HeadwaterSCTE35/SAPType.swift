/// `sap_type` (SCTE 35 2020+, Table 9): the Stream Access Point type at the splice point.
/// Editions before 2020 reserved these 2 bits and required `11`, which reads as ``unspecified``.
public struct SAPType: RawRepresentable, Sendable, Hashable, Codable {
    /// The 2-bit value.
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let type1 = SAPType(rawValue: 0)
    public static let type2 = SAPType(rawValue: 1)
    public static let type3 = SAPType(rawValue: 2)
    /// "Not specified" (and the pre-2020 reserved value).
    public static let unspecified = SAPType(rawValue: 3)

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt8.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}
