/// `avail_descriptor()` (tag `0x00`): a provider's identifier for the avail, e.g. for ad-decision
/// systems, usually attached to a `splice_insert()`.
///
/// ```
/// avail_descriptor() {                 bits  mnemonic
///   splice_descriptor_tag                8    uimsbf   (0x00)
///   descriptor_length                    8    uimsbf   (8)
///   identifier                          32    uimsbf   ('CUEI')
///   provider_avail_id                   32    uimsbf
/// }
/// ```
public struct AvailDescriptor: Sendable, Hashable {
    /// `provider_avail_id`.
    public var providerAvailID: UInt32

    public init(providerAvailID: UInt32) {
        self.providerAvailID = providerAvailID
    }

    init(reading reader: inout BitReader) throws(SCTE35Error) {
        providerAvailID = try reader.uint32(32, "provider_avail_id")
    }

    func write(to writer: inout BitWriter) throws(SCTE35Error) {
        try writer.field("provider_avail_id", providerAvailID, bits: 32)
    }
}

extension AvailDescriptor: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        providerAvailID = try c.decode(UInt32.self, forKey: "provider_avail_id")
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(providerAvailID, forKey: "provider_avail_id")
    }
}
