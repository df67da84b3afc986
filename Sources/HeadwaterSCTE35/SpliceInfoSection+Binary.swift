extension SpliceInfoSection {
    /// Decodes a complete section: `table_id` through `CRC_32`, then nothing, or up to
    /// ``maximumTrailingStuffingCount`` bytes of MPEG-TS stuffing (`0xFF`), as when the section was
    /// copied out of a transport packet (counted in ``trailingStuffingCount``). Anything else after
    /// the section is ``SCTE35Error/invalidSectionLength(declared:actual:)``.
    ///
    /// - Parameter verifyCRC: check `CRC_32` before anything else is parsed, so a corrupted byte is
    ///   reported as ``SCTE35Error/crcMismatch(expected:computed:)`` rather than as whatever
    ///   structural error it happens to cause. Pass `false` only for illustrative samples such as the
    ///   RFC 8216 §8.10 example (HLS-RULES D17), whose `CRC_32` is zero.
    public init(bytes: some Collection<UInt8>, verifyCRC: Bool = true) throws(SCTE35Error) {
        let data = Array(bytes)
        var reader = BitReader(data)
        let tableID = try reader.uint8(8, "table_id")
        guard tableID == Self.tableID else { throw .invalidTableID(tableID) }
        let sectionSyntaxIndicator = try reader.flag("section_syntax_indicator")
        let privateIndicator = try reader.flag("private_indicator")
        let sapType = SAPType(rawValue: try reader.uint8(2, "sap_type"))
        let sectionLength = Int(try reader.uint16(12, "section_length"))
        let sectionEnd = 3 + sectionLength
        let stuffing = data.count - sectionEnd
        guard stuffing >= 0, stuffing <= Self.maximumTrailingStuffingCount,
            data[sectionEnd...].allSatisfy({ $0 == 0xFF })
        else {
            throw .invalidSectionLength(declared: sectionLength, actual: data.count - 3)
        }
        guard sectionLength >= 4 else {
            throw .unexpectedEndOfData(field: "CRC_32", bitOffset: 24)
        }
        let section = data[..<sectionEnd]
        let storedCRC = section.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        if verifyCRC {
            let computed = CRC32MPEG2.checksum(section.dropLast(4))
            guard computed == storedCRC else { throw .crcMismatch(expected: storedCRC, computed: computed) }
        }

        var body = try reader.subReader(byteCount: sectionLength - 4, "splice_info_section")
        let protocolVersion = try body.uint8(8, "protocol_version")
        let encrypted = try body.flag("encrypted_packet")
        let encryptionAlgorithm = try body.uint8(6, "encryption_algorithm")
        let ptsAdjustment = try body.bits(33, "pts_adjustment")
        let cwIndex = try body.uint8(8, "cw_index")
        let tier = try body.uint16(12, "tier")
        let commandLength = Int(try body.uint16(12, "splice_command_length"))

        let payload: Payload
        if encrypted {
            payload = .encrypted(EncryptedPayload(
                spliceCommandLength: UInt16(commandLength),
                bytes: try body.remainingByteArray("encrypted data")
            ))
        } else {
            let commandType = try body.uint8(8, "splice_command_type")
            let command: SpliceCommand
            if commandLength == 0xFFF {
                // Legacy "length unknown": parse to find the end.
                guard SpliceCommand.isSelfDelimiting(type: commandType) else {
                    throw .unknownSpliceCommandLength(commandType: commandType)
                }
                command = try SpliceCommand(type: commandType, reading: &body)
            } else {
                guard commandLength <= body.remainingBytes else {
                    throw .spliceCommandLengthOverrun(declared: commandLength, available: body.remainingBytes)
                }
                var commandReader = try body.subReader(byteCount: commandLength, "splice_command")
                let start = commandReader.bitOffset
                command = try SpliceCommand(type: commandType, reading: &commandReader)
                guard commandReader.isAtEnd else {
                    throw .spliceCommandLengthMismatch(
                        commandType: commandType, declared: commandLength, parsed: (commandReader.bitOffset - start + 7) / 8)
                }
            }
            let loopLength = Int(try body.uint16(16, "descriptor_loop_length"))
            guard loopLength <= body.remainingBytes else {
                throw .descriptorLoopLengthOverrun(declared: loopLength, available: body.remainingBytes)
            }
            var loop = try body.subReader(byteCount: loopLength, "splice_descriptor")
            var descriptors: [SpliceDescriptor] = []
            while !loop.isAtEnd {
                guard loop.remainingBytes >= 2 else {
                    throw .descriptorLoopTrailingBytes(
                        byteOffset: loop.bitOffset / 8, bytes: try loop.remainingByteArray("splice_descriptor"))
                }
                descriptors.append(try SpliceDescriptor(reading: &loop))
            }
            let alignmentStuffing = try body.remainingByteArray("alignment_stuffing")
            payload = .clear(command: command, descriptors: descriptors, alignmentStuffing: alignmentStuffing)
        }

        self.init(
            payload: payload,
            ptsAdjustment: ptsAdjustment,
            tier: tier,
            cwIndex: cwIndex,
            sapType: sapType,
            protocolVersion: protocolVersion,
            encryptionAlgorithm: encryptionAlgorithm,
            sectionSyntaxIndicator: sectionSyntaxIndicator,
            privateIndicator: privateIndicator,
            legacyUnknownCommandLength: !encrypted && commandLength == 0xFFF,
            trailingStuffingCount: stuffing
        )
    }

    /// The section's bytes, `table_id` through `CRC_32`, with `section_length`,
    /// `splice_command_length` (or the legacy `0xFFF`), `descriptor_loop_length`, every
    /// `descriptor_length` and `CRC_32` computed from the model; then ``trailingStuffingCount``
    /// bytes of `0xFF` (none unless the section was decoded with them, or set so).
    ///
    /// Throws ``SCTE35Error/valueOutOfRange(field:value:bitWidth:)`` or
    /// ``SCTE35Error/lengthOutOfRange(field:length:maximum:)`` when a model value does not fit its
    /// field, rather than truncating it, and ``SCTE35Error/unknownSpliceCommandLength(commandType:)``
    /// for a legacy `0xFFF` length on a command whose end a decoder could not find. A decoded
    /// section always encodes.
    public func encoded() throws(SCTE35Error) -> [UInt8] {
        try encodedLayout().bytes
    }

    /// The encoded bytes and the length fields as written (for JSON output).
    struct Layout {
        var bytes: [UInt8]
        var sectionLength: Int
        var spliceCommandLength: Int
        var descriptorLoopLength: Int?
        var crc: UInt32
    }

    func encodedLayout() throws(SCTE35Error) -> Layout {
        var body = BitWriter()
        try body.field("protocol_version", protocolVersion, bits: 8)
        body.flag(isEncrypted)
        try body.field("encryption_algorithm", encryptionAlgorithm, bits: 6)
        try body.field("pts_adjustment", ptsAdjustment, bits: 33)
        try body.field("cw_index", cwIndex, bits: 8)
        try body.field("tier", tier, bits: 12)

        let commandLength: Int
        var loopLength: Int?
        switch payload {
        case .encrypted(let encrypted):
            commandLength = Int(encrypted.spliceCommandLength)
            try body.field("splice_command_length", encrypted.spliceCommandLength, bits: 12)
            body.append(encrypted.bytes)
        case .clear(let command, let descriptors, let alignmentStuffing):
            let commandBytes = try command.encodedBody()
            // 0xFFF itself means "unknown length" (legacy), so the largest real length is 0xFFE.
            guard commandBytes.count < 0xFFF else {
                throw .lengthOutOfRange(field: "splice_command_length", length: commandBytes.count, maximum: 0xFFE)
            }
            if legacyUnknownCommandLength {
                guard SpliceCommand.isSelfDelimiting(type: command.type) else {
                    throw .unknownSpliceCommandLength(commandType: command.type)
                }
                commandLength = 0xFFF
            } else {
                commandLength = commandBytes.count
            }
            body.write(UInt64(commandLength), bits: 12)
            try body.field("splice_command_type", command.type, bits: 8)
            body.append(commandBytes)

            var loopWriter = BitWriter()
            for descriptor in descriptors {
                try descriptor.write(to: &loopWriter)
            }
            loopLength = loopWriter.bytes.count
            try body.field("descriptor_loop_length", loopWriter.bytes.count, bits: 16)
            body.append(loopWriter.bytes)
            body.append(alignmentStuffing)
        }
        guard (0...Self.maximumTrailingStuffingCount).contains(trailingStuffingCount) else {
            throw .lengthOutOfRange(
                field: "trailing stuffing", length: trailingStuffingCount, maximum: Self.maximumTrailingStuffingCount)
        }

        let sectionLength = body.bytes.count + 4
        guard sectionLength <= 0xFFF else {
            throw .lengthOutOfRange(field: "section_length", length: sectionLength, maximum: 0xFFF)
        }
        var writer = BitWriter()
        writer.write(UInt64(Self.tableID), bits: 8)
        writer.flag(sectionSyntaxIndicator)
        writer.flag(privateIndicator)
        try writer.field("sap_type", sapType.rawValue, bits: 2)
        writer.write(UInt64(sectionLength), bits: 12)
        writer.append(body.bytes)
        let crc = CRC32MPEG2.checksum(writer.bytes)
        writer.write(UInt64(crc), bits: 32)
        writer.append(Array(repeating: 0xFF, count: trailingStuffingCount))
        return Layout(
            bytes: writer.bytes,
            sectionLength: sectionLength,
            spliceCommandLength: commandLength,
            descriptorLoopLength: loopLength,
            crc: crc
        )
    }
}
