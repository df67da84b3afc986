/// `private_command()` (command type `0xFF`): an owner-defined command. HLS carries it in
/// `SCTE35-CMD` (HLS-RULES D9).
///
/// ```
/// private_command() {                  bits  mnemonic
///   identifier                          32    uimsbf
///   for (i = 0; i < N; i++)
///     private_byte                       8    uimsbf
/// }
/// ```
/// N is `splice_command_length − 4`. (threefive reads a 24-bit identifier; the standard says 32.)
public struct PrivateCommand: Sendable, Hashable {
    /// `identifier`: the owner's registered format identifier (ATSC A/52-style four-character code).
    public var identifier: UInt32
    /// `private_byte`s.
    public var privateBytes: [UInt8]

    public init(identifier: UInt32, privateBytes: [UInt8]) {
        self.identifier = identifier
        self.privateBytes = privateBytes
    }

    init(reading reader: inout BitReader) throws(SCTE35Error) {
        identifier = try reader.uint32(32, "private_command identifier")
        privateBytes = try reader.remainingByteArray("private_byte")
    }

    func write(to writer: inout BitWriter) throws(SCTE35Error) {
        try writer.field("identifier", identifier, bits: 32)
        writer.append(privateBytes)
    }
}

extension PrivateCommand: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        identifier = try c.decodeIdentifier(forKey: "identifier")
        privateBytes = try c.decodeHexIfPresent(forKey: "private_bytes") ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encodeIdentifier(identifier, forKey: "identifier")
        try c.encodeHex(privateBytes, forKey: "private_bytes")
    }
}
