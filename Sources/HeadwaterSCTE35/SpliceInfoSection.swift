/// `splice_info_section()`: one SCTE-35 cue, the unit HLS carries in `EXT-X-DATERANGE`
/// `SCTE35-CMD/OUT/IN` (as `0x` + upper-case hex, HLS-RULES I4) and vendor tags such as
/// `EXT-OATCLS-SCTE35` (as base64).
///
/// ```
/// splice_info_section() {                            bits  mnemonic   encrypted
///   table_id                                           8    uimsbf     (0xFC)
///   section_syntax_indicator                           1    bslbf
///   private_indicator                                  1    bslbf
///   sap_type                                           2    bslbf      (reserved '11' before 2020)
///   section_length                                    12    uimsbf
///   protocol_version                                   8    uimsbf
///   encrypted_packet                                   1    bslbf
///   encryption_algorithm                               6    bslbf
///   pts_adjustment                                    33    uimsbf
///   cw_index                                           8    bslbf
///   tier                                              12    bslbf
///   splice_command_length                             12    uimsbf
///   splice_command_type                                8    uimsbf     E
///   splice_command()                                                   E
///   descriptor_loop_length                            16    uimsbf     E
///   for (i = 0; i < N1; i++)
///     splice_descriptor()                                              E
///   for (i = 0; i < N2; i++)
///     alignment_stuffing                               8    bslbf      E
///   if (encrypted_packet)
///     E_CRC_32                                        32    rpchof     E
///   CRC_32                                            32    rpchof
/// }
/// ```
/// The model is lossless: decoding then ``encoded()`` reproduces the input bytes, reserved bits
/// included, for every well-formed section. `table_id`, `section_length`, `descriptor_loop_length`,
/// `encrypted_packet` and `CRC_32` are not stored; the encoder derives them from the model, so an
/// edited value can never carry stale lengths or a stale CRC. Of a clear section's
/// `splice_command_length` only whether it was the legacy "unknown" `0xFFF` is kept
/// (``legacyUnknownCommandLength``), and of the bytes after `CRC_32` only how many `0xFF`s of
/// MPEG-TS stuffing there were (``trailingStuffingCount``): the two forms cues taken from the field
/// arrive in.
public struct SpliceInfoSection: Sendable, Hashable {
    /// `section_syntax_indicator` (0 in every valid section).
    public var sectionSyntaxIndicator: Bool
    /// `private_indicator` (0 in every valid section).
    public var privateIndicator: Bool
    /// `sap_type`.
    public var sapType: SAPType
    /// `protocol_version` (0).
    public var protocolVersion: UInt8
    /// `encryption_algorithm` (6 bits; 0 = none).
    public var encryptionAlgorithm: UInt8
    /// `pts_adjustment` (33 bits, 90 kHz): added modulo 2^33 to every `pts_time` in the section.
    public var ptsAdjustment: UInt64
    /// `cw_index`: the control word for decryption; meaningless in clear sections, but kept because
    /// encoders differ (`0xFF` in the SCTE 35 §14 examples, `0x00` from AWS MediaConvert).
    public var cwIndex: UInt8
    /// `tier` (12 bits; `0xFFF` = all tiers).
    public var tier: UInt16
    /// The command and descriptors, or the opaque encrypted part.
    public var payload: Payload
    /// `splice_command_length` of a clear section is `0xFFF`, the value that meant "unknown" before
    /// SCTE 35 required the real length (it still allows it, for backward compatibility), instead
    /// of the command's length. The decoder then finds the command's end by parsing it, which only
    /// `splice_null`, `splice_insert`, `time_signal` and `bandwidth_reservation` allow; the encoder
    /// writes `0xFFF` again, so such a cue passes through byte for byte. Ignored for an encrypted
    /// section, whose ``EncryptedPayload/spliceCommandLength`` is kept as written.
    public var legacyUnknownCommandLength: Bool
    /// How many MPEG-TS stuffing bytes (`0xFF`) followed `CRC_32`: in a transport packet, the
    /// bytes after a section's end up to the packet's end are `0xFF` (ISO/IEC 13818-1), so a cue
    /// copied out of a packet's payload arrives with them. They are not part of the section; the
    /// encoder appends them again so that the bytes round-trip. At most
    /// ``maximumTrailingStuffingCount``.
    public var trailingStuffingCount: Int

    /// What follows `splice_command_length`.
    public enum Payload: Sendable, Hashable {
        /// A clear section (`encrypted_packet == 0`). `alignmentStuffing` holds any bytes between the
        /// descriptor loop and `CRC_32` (normally none).
        case clear(command: SpliceCommand, descriptors: [SpliceDescriptor] = [], alignmentStuffing: [UInt8] = [])
        /// An encrypted section (`encrypted_packet == 1`): kept opaque so that it passes through.
        case encrypted(EncryptedPayload)
    }

    /// The encrypted part of a section: everything from `splice_command_type` through `E_CRC_32`,
    /// which cannot be parsed without the key.
    public struct EncryptedPayload: Sendable, Hashable {
        /// `splice_command_length` (12 bits), which stays in the clear.
        public var spliceCommandLength: UInt16
        /// The encrypted bytes.
        public var bytes: [UInt8]

        public init(spliceCommandLength: UInt16, bytes: [UInt8]) {
            self.spliceCommandLength = spliceCommandLength
            self.bytes = bytes
        }
    }

    /// A section with every header field explicit.
    public init(
        payload: Payload,
        ptsAdjustment: UInt64 = 0,
        tier: UInt16 = 0xFFF,
        cwIndex: UInt8 = 0xFF,
        sapType: SAPType = .unspecified,
        protocolVersion: UInt8 = 0,
        encryptionAlgorithm: UInt8 = 0,
        sectionSyntaxIndicator: Bool = false,
        privateIndicator: Bool = false,
        legacyUnknownCommandLength: Bool = false,
        trailingStuffingCount: Int = 0
    ) {
        self.payload = payload
        self.legacyUnknownCommandLength = legacyUnknownCommandLength
        self.trailingStuffingCount = trailingStuffingCount
        self.ptsAdjustment = ptsAdjustment
        self.tier = tier
        self.cwIndex = cwIndex
        self.sapType = sapType
        self.protocolVersion = protocolVersion
        self.encryptionAlgorithm = encryptionAlgorithm
        self.sectionSyntaxIndicator = sectionSyntaxIndicator
        self.privateIndicator = privateIndicator
    }

    /// A clear section carrying `command` and `descriptors`, with the usual header defaults.
    public init(
        command: SpliceCommand,
        descriptors: [SpliceDescriptor] = [],
        ptsAdjustment: UInt64 = 0,
        tier: UInt16 = 0xFFF,
        cwIndex: UInt8 = 0xFF,
        sapType: SAPType = .unspecified
    ) {
        self.init(
            payload: .clear(command: command, descriptors: descriptors),
            ptsAdjustment: ptsAdjustment,
            tier: tier,
            cwIndex: cwIndex,
            sapType: sapType
        )
    }

    /// `table_id` of every `splice_info_section()`.
    public static let tableID: UInt8 = 0xFC

    /// The most stuffing accepted after `CRC_32`: a transport packet's payload (188 bytes less the
    /// 4-byte header), the most that can follow a section in the packet it ends in. More `0xFF`s
    /// than that did not come from one packet.
    public static let maximumTrailingStuffingCount = 184

    /// `encrypted_packet`.
    public var isEncrypted: Bool {
        if case .encrypted = payload { return true }
        return false
    }

    /// The command; `nil` for an encrypted section.
    public var command: SpliceCommand? {
        if case .clear(let command, _, _) = payload { return command }
        return nil
    }

    /// The descriptors; empty for an encrypted section.
    public var descriptors: [SpliceDescriptor] {
        if case .clear(_, let descriptors, _) = payload { return descriptors }
        return []
    }
}
