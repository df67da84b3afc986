/// JSON with the standard's field names, e.g. (abridged) for SCTE 35 §14.2:
///
/// ```json
/// { "table_id": 252, "section_syntax_indicator": false, "private_indicator": false, "sap_type": 3,
///   "section_length": 47, "protocol_version": 0, "encrypted_packet": false, "encryption_algorithm": 0,
///   "pts_adjustment": 0, "cw_index": 255, "tier": 4095, "splice_command_length": 20,
///   "splice_command": { "splice_command_type": 5, "splice_command_name": "splice_insert",
///                       "splice_event_id": 1207959695, …, "splice_time": { "time_specified_flag": true,
///                       "pts_time": 1936310318, … }, "break_duration": { "auto_return": true, "duration": 5426421, … }, … },
///   "descriptor_loop_length": 10,
///   "splice_descriptors": [ { "splice_descriptor_tag": 0, "descriptor_length": 8, "identifier": "CUEI",
///                             "provider_avail_id": 309 } ],
///   "crc_32": "0x62DBA30A", "pts_seconds": 21514.559089 }
/// ```
/// Derived values (`table_id`, `section_length`, `splice_command_length` of a clear section,
/// `descriptor_loop_length`, `descriptor_length`, `*_count`, `segmentation_upid_length`, `crc_32`)
/// and informative ones (`*_name`, `*_seconds`, `segmentation_upid_text`) are ignored when decoding:
/// the encoder recomputes them. Two exceptions keep cues from the field as they came: a clear
/// section's `"splice_command_length": 4095` is the legacy "unknown" `0xFFF` as written (a computed
/// length is at most 4094), kept by the encoder (``legacyUnknownCommandLength``); and
/// `"trailing_stuffing_byte_count": n`, present only when the section was followed by `n` bytes of
/// MPEG-TS stuffing, makes the encoder append them (``trailingStuffingCount``). Reserved bits appear
/// (as `reserved…`) only when they are not all ones.
/// Header fields may be omitted when decoding; they default as in ``init(command:descriptors:ptsAdjustment:tier:cwIndex:sapType:)``.
extension SpliceInfoSection: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        if let tableID = try c.decodeIfPresent(UInt8.self, forKey: "table_id"), tableID != Self.tableID {
            throw DecodingError.dataCorruptedError(forKey: "table_id", in: c, debugDescription: "table_id must be 252 (0xFC)")
        }
        let payload = try Payload(from: decoder)
        // Any other splice_command_length of a clear section is derived, so ignored (even when not a number).
        var legacyLength = false
        if case .clear = payload, case 0xFFF? = try? c.decodeIfPresent(Int.self, forKey: "splice_command_length") {
            legacyLength = true
        }
        self.init(
            payload: payload,
            ptsAdjustment: try c.decode("pts_adjustment", default: 0),
            tier: try c.decode("tier", default: 0xFFF),
            cwIndex: try c.decode("cw_index", default: 0xFF),
            sapType: try c.decode("sap_type", default: .unspecified),
            protocolVersion: try c.decode("protocol_version", default: 0),
            encryptionAlgorithm: try c.decode("encryption_algorithm", default: 0),
            sectionSyntaxIndicator: try c.decode("section_syntax_indicator", default: false),
            privateIndicator: try c.decode("private_indicator", default: false),
            legacyUnknownCommandLength: legacyLength,
            trailingStuffingCount: try c.decode("trailing_stuffing_byte_count", default: 0)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        let layout = try? encodedLayout()
        try c.encode(Self.tableID, forKey: "table_id")
        try c.encode(sectionSyntaxIndicator, forKey: "section_syntax_indicator")
        try c.encode(privateIndicator, forKey: "private_indicator")
        try c.encode(sapType, forKey: "sap_type")
        if let layout { try c.encode(layout.sectionLength, forKey: "section_length") }
        try c.encode(protocolVersion, forKey: "protocol_version")
        try c.encode(isEncrypted, forKey: "encrypted_packet")
        try c.encode(encryptionAlgorithm, forKey: "encryption_algorithm")
        try c.encode(ptsAdjustment, forKey: "pts_adjustment")
        try c.encode(cwIndex, forKey: "cw_index")
        try c.encode(tier, forKey: "tier")
        try payload.encode(to: encoder, legacyUnknownCommandLength: legacyUnknownCommandLength)
        if let layout { try c.encode(hex(UInt64(layout.crc), digits: 8), forKey: "crc_32") }
        if trailingStuffingCount != 0 { try c.encode(trailingStuffingCount, forKey: "trailing_stuffing_byte_count") }
        if let seconds = splicePTSSeconds { try c.encode(seconds, forKey: "pts_seconds") }
    }
}

/// Encodes into the enclosing section object: `encrypted_packet`, then either
/// `splice_command_length`, `splice_command`, `descriptor_loop_length`, `splice_descriptors`
/// (and `alignment_stuffing` when present), or `splice_command_length` and `encrypted_data`.
extension SpliceInfoSection.Payload: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        if try c.decode("encrypted_packet", default: false) {
            self = .encrypted(try SpliceInfoSection.EncryptedPayload(from: decoder))
        } else {
            self = .clear(
                command: try c.decode(SpliceCommand.self, forKey: "splice_command"),
                descriptors: try c.decode("splice_descriptors", default: []),
                alignmentStuffing: try c.decodeHexIfPresent(forKey: "alignment_stuffing") ?? []
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try encode(to: encoder, legacyUnknownCommandLength: false)
    }

    /// With `legacyUnknownCommandLength`, a clear payload's `splice_command_length` is written as
    /// `0xFFF` (what the section's bytes say) rather than the command's length.
    func encode(to encoder: any Encoder, legacyUnknownCommandLength: Bool) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        switch self {
        case .encrypted(let encrypted):
            try c.encode(true, forKey: "encrypted_packet")
            try encrypted.encode(to: encoder)
        case .clear(let command, let descriptors, let stuffing):
            try c.encode(false, forKey: "encrypted_packet")
            if legacyUnknownCommandLength {
                try c.encode(0xFFF, forKey: "splice_command_length")
            } else if let length = try? command.encodedBody().count {
                try c.encode(length, forKey: "splice_command_length")
            }
            try c.encode(command, forKey: "splice_command")
            if let loop = try? descriptors.reduce(0, { $0 + 2 + (try $1.encodedBody().count) }) {
                try c.encode(loop, forKey: "descriptor_loop_length")
            }
            try c.encode(descriptors, forKey: "splice_descriptors")
            if !stuffing.isEmpty { try c.encodeHex(stuffing, forKey: "alignment_stuffing") }
        }
    }
}

/// `{"splice_command_length": n, "encrypted_data": "0x…"}`.
extension SpliceInfoSection.EncryptedPayload: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        self.init(
            spliceCommandLength: try c.decode(UInt16.self, forKey: "splice_command_length"),
            bytes: try c.decodeHex(forKey: "encrypted_data")
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(spliceCommandLength, forKey: "splice_command_length")
        try c.encodeHex(bytes, forKey: "encrypted_data")
    }
}
