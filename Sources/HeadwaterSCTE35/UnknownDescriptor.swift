/// A descriptor this library does not decode: a reserved tag, or a private descriptor whose
/// `identifier` is not `'CUEI'`. Its bytes are kept so that the section re-encodes unchanged.
///
/// ```
/// splice_descriptor() {                bits  mnemonic
///   splice_descriptor_tag                8    uimsbf
///   descriptor_length                    8    uimsbf
///   identifier                          32    uimsbf
///   for (i = 0; i < N; i++)
///     private_byte                       8    uimsbf
/// }
/// ```
public struct UnknownDescriptor: Sendable, Hashable, Codable {
    /// `splice_descriptor_tag`.
    public var tag: UInt8
    /// `identifier` (the owner; `'CUEI'` for SCTE).
    public var identifier: UInt32
    /// The bytes after `identifier`.
    public var privateBytes: [UInt8]

    public init(tag: UInt8, identifier: UInt32, privateBytes: [UInt8]) {
        self.tag = tag
        self.identifier = identifier
        self.privateBytes = privateBytes
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        tag = try c.decode(UInt8.self, forKey: "splice_descriptor_tag")
        identifier = try c.decodeIdentifier(forKey: "identifier")
        privateBytes = try c.decodeHexIfPresent(forKey: "private_bytes") ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(tag, forKey: "splice_descriptor_tag")
        try c.encodeIdentifier(identifier, forKey: "identifier")
        try c.encodeHex(privateBytes, forKey: "private_bytes")
    }
}
