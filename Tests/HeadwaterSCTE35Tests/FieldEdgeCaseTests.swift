import Foundation
import HeadwaterSCTE35
import HeadwaterTesting
import Testing

/// Cues as they arrive from the field (issue 13 §4): the legacy `splice_command_length = 0xFFF`,
/// MPEG-TS stuffing after the section, and descriptor loops with stray bytes at the end.
///
/// The vectors are HLS-RULES I6 Ex 1 and Ex 2 with fields edited and `section_length`/`CRC_32`
/// recomputed by a separate Python CRC-32/MPEG-2; threefive 3.1.5 (Python) computes the same CRCs
/// and reads the same commands from them (`splice_command_length` 4095, pts 21514.559089 s, break
/// 60.293567 s), and decodes the stuffed Ex 1 to Ex 1. The tests do not run Python.
@Suite("Field edge cases")
struct FieldEdgeCaseTests {
    /// Ex 1 (splice_insert) with `splice_command_length` 0xFFF.
    static let legacyInsertHex =
        "0xFC302F000000000000FFFFFFFF054800008F7FEFFE7369C02EFE0052CCF500000000000A0008435545490000013599D44C33"
    /// Ex 2 (time_signal + segmentation descriptor) with `splice_command_length` 0xFFF.
    static let legacyTimeSignalHex =
        "0xFC3034000000000000FFFFFFFF06FE72BD0050001E021C435545494800008E7FCF0001A599B00808000000002CA0A18A340200F2271483"
    /// Ex 1 with one byte (0x00) more in its descriptor loop: descriptor_loop_length 11.
    static let strayByteHex =
        "0xFC3030000000000000FFFFF014054800008F7FEFFE7369C02EFE0052CCF500000000000B000843554549000001350047D6BDDA"
    /// Ex 1 with its avail descriptor's descriptor_length 8 → 9.
    static let overrunHex =
        "0xFC302F000000000000FFFFF014054800008F7FEFFE7369C02EFE0052CCF500000000000A0009435545490000013590DB096C"
    /// Ex 1 with three bytes more in its loop (00 05 43: a header declaring 5 bytes, then 1): loop 13.
    static let partialSecondDescriptorHex =
        "0xFC3032000000000000FFFFF014054800008F7FEFFE7369C02EFE0052CCF500000000000D00084355454900000135000543D06270A6"

    static var ex1: [UInt8] { Vectors.bytes(hex: Vectors.ex1Hex) }
    static var ex2: [UInt8] { Vectors.bytes(hex: Vectors.ex2Hex) }
    /// Ex 1 as it ends a transport packet: after the pointer_field and the 50-byte section, 133
    /// bytes of stuffing fill the 184-byte payload.
    static var ex1InPacket: [UInt8] { ex1 + Array(repeating: 0xFF, count: 133) }

    static func json(_ section: SpliceInfoSection) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(section)) as? [String: Any])
    }

    static func viaJSON(_ section: SpliceInfoSection) throws -> SpliceInfoSection {
        try JSONDecoder().decode(SpliceInfoSection.self, from: JSONEncoder().encode(section))
    }

    // MARK: splice_command_length = 0xFFF

    @Test("a legacy 0xFFF splice_command_length decodes, shows as 4095 and re-encodes byte for byte",
          arguments: [(legacyInsertHex, Vectors.ex1Hex, 20), (legacyTimeSignalHex, Vectors.ex2Hex, 5)])
    func legacyCommandLength(legacyHex: String, originalHex: String, commandLength: Int) throws {
        let bytes = Vectors.bytes(hex: legacyHex)
        let section = try SpliceInfoSection(bytes: bytes)
        #expect(section.legacyUnknownCommandLength)
        // The same cue as the spec sample in every field but the length as written.
        var computed = section
        computed.legacyUnknownCommandLength = false
        #expect(try computed.hexString() == originalHex)
        #expect(try SpliceInfoSection(hex: originalHex) == computed)

        #expect(try section.encoded() == bytes)
        #expect(try section.hexString() == legacyHex)
        #expect(try Self.json(section)["splice_command_length"] as? Int == 0xFFF)
        #expect(try Self.json(computed)["splice_command_length"] as? Int == commandLength)
        let again = try Self.viaJSON(section)
        #expect(again == section)
        #expect(try again.encoded() == bytes)
    }

    @Test("splice_command_length 4095 in JSON asks for the legacy value; any other value is recomputed")
    func legacyLengthFromJSON() throws {
        var object = try Self.json(try SpliceInfoSection(bytes: Self.ex1))
        #expect(object["splice_command_length"] as? Int == 20)
        for (written, expected) in [(4095, Self.legacyInsertHex), (7, Vectors.ex1Hex), (20, Vectors.ex1Hex)] {
            object["splice_command_length"] = written
            let data = try JSONSerialization.data(withJSONObject: object)
            let section = try JSONDecoder().decode(SpliceInfoSection.self, from: data)
            #expect(try section.hexString() == expected, "splice_command_length \(written)")
        }
        object["splice_command_length"] = "twenty"  // derived: ignored, as before
        let section = try JSONDecoder().decode(SpliceInfoSection.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(try section.hexString() == Vectors.ex1Hex)
    }

    @Test("0xFFF is only written for commands a decoder can find the end of")
    func legacyLengthNeedsASelfDelimitingCommand() throws {
        for command in [SpliceCommand.privateCommand(PrivateCommand(identifier: 1, privateBytes: [2])),
                        .spliceSchedule(bytes: [1]), .unknown(type: 0x10, bytes: [])]
        {
            var section = SpliceInfoSection(command: command)
            section.legacyUnknownCommandLength = true
            #expect(throws: SCTE35Error.unknownSpliceCommandLength(commandType: command.type)) { try section.encoded() }
        }
        for command in [SpliceCommand.spliceNull, .bandwidthReservation, .timeSignal(TimeSignal(ptsTime: nil))] {
            var section = SpliceInfoSection(command: command)
            section.legacyUnknownCommandLength = true
            let bytes = try section.encoded()
            #expect(bytes[11] & 0x0F == 0x0F && bytes[12] == 0xFF)
            #expect(try SpliceInfoSection(bytes: bytes) == section)
        }
        // An encrypted section keeps its own splice_command_length; the flag says nothing there.
        let encrypted = try SpliceInfoSection(hex: Vectors.encryptedHex)
        #expect(!encrypted.legacyUnknownCommandLength)
    }

    // MARK: MPEG-TS stuffing after the section

    @Test("a section followed by MPEG-TS stuffing decodes; the stuffing is counted and re-encoded")
    func trailingStuffing() throws {
        let bytes = Self.ex1InPacket
        let section = try SpliceInfoSection(bytes: bytes)
        #expect(section.trailingStuffingCount == 133)
        var bare = section
        bare.trailingStuffingCount = 0
        #expect(try bare.encoded() == Self.ex1)
        #expect(try SpliceInfoSection(bytes: Self.ex1) == bare)
        #expect(try section.encoded() == bytes)

        let object = try Self.json(section)
        #expect(object["trailing_stuffing_byte_count"] as? Int == 133)
        #expect(object["section_length"] as? Int == 47)
        #expect(object["crc_32"] as? String == "0x62DBA30A")
        #expect(try Self.json(bare)["trailing_stuffing_byte_count"] == nil)
        #expect(try Self.viaJSON(section).encoded() == bytes)

        // Text forms carry it too (hex as in SCTE35-OUT, base64 as in EXT-OATCLS-SCTE35).
        let base64 = Data(bytes).base64EncodedString()
        #expect(try SpliceInfoSection(base64: base64) == section)
        #expect(try SpliceInfoSection(text: section.hexString()) == section)
        #expect(try section.base64String() == base64)
    }

    @Test("stuffing and a legacy length together round-trip")
    func stuffingAndLegacyLength() throws {
        let bytes = Vectors.bytes(hex: Self.legacyTimeSignalHex) + [0xFF, 0xFF, 0xFF, 0xFF]
        let section = try SpliceInfoSection(bytes: bytes)
        #expect(section.legacyUnknownCommandLength && section.trailingStuffingCount == 4)
        #expect(section.segmentationDescriptors.first?.scheduledEvent?.typeID.rawValue == 0x34)
        #expect(try section.encoded() == bytes)
        #expect(try Self.viaJSON(section).encoded() == bytes)
    }

    @Test("bytes after the section that are not stuffing, or too much of it, are refused")
    func trailingBytesThatAreNotStuffing() throws {
        #expect(try SpliceInfoSection(bytes: Self.ex1 + Array(repeating: 0xFF, count: 184)).trailingStuffingCount == 184)
        let tooMuch = SCTE35Error.invalidSectionLength(declared: 47, actual: 47 + 185)
        #expect(throws: tooMuch) { try SpliceInfoSection(bytes: Self.ex1 + Array(repeating: 0xFF, count: 185)) }
        let notStuffing = SCTE35Error.invalidSectionLength(declared: 47, actual: 50)
        #expect(throws: notStuffing) { try SpliceInfoSection(bytes: Self.ex1 + [0xFF, 0x47, 0xFF]) }
        #expect(notStuffing.description
            == "invalid section_length 47: 50 bytes follow the section_length field, and the 3 bytes after the section "
            + "are not MPEG-TS stuffing (up to 184 bytes of 0xFF)")
        // A section cut short still says so plainly.
        #expect(SCTE35Error.invalidSectionLength(declared: 47, actual: 46).description
            == "invalid section_length 47: 46 bytes follow the section_length field")
        // CRC_32 covers the section, not the stuffing, and is checked where section_length puts it.
        var corrupted = Self.ex1InPacket
        corrupted[49] ^= 0x01
        #expect(throws: SCTE35Error.crcMismatch(expected: 0x62DB_A30B, computed: 0x62DB_A30A)) {
            try SpliceInfoSection(bytes: corrupted)
        }
    }

    @Test("the encoder refuses a stuffing count no packet can hold")
    func stuffingCountOutOfRange() {
        for count in [-1, 185] {
            var section = SpliceInfoSection.spliceNull()
            section.trailingStuffingCount = count
            #expect(throws: SCTE35Error.lengthOutOfRange(field: "trailing stuffing", length: count, maximum: 184)) {
                try section.encoded()
            }
        }
        #expect(SCTE35Error.lengthOutOfRange(field: "trailing stuffing", length: -1, maximum: 184).description
            == "trailing stuffing length -1 is negative")
    }

    // MARK: Stray bytes at the end of the descriptor loop

    @Test("fewer bytes than a descriptor header at the end of the loop: which bytes, where")
    func strayByteAfterTheLastDescriptor() {
        let expected = SCTE35Error.descriptorLoopTrailingBytes(byteOffset: 46, bytes: [0x00])
        #expect(throws: expected) { try SpliceInfoSection(hex: Self.strayByteHex) }
        #expect(expected.description
            == "descriptor loop ends with 1 stray byte at byte 46 (0x00): fewer than a descriptor header "
            + "(splice_descriptor_tag, descriptor_length)")
        #expect(expected.reasonLabel == "descriptor_loop_stray_bytes")
    }

    @Test("a descriptor whose length overruns the loop: which bytes, where")
    func descriptorOverrunningTheLoop() {
        let whole = SCTE35Error.descriptorLengthOverrun(
            byteOffset: 36, tag: 0x00, declared: 9, available: 8,
            bytes: [0x00, 0x09, 0x43, 0x55, 0x45, 0x49, 0x00, 0x00, 0x01, 0x35])
        #expect(throws: whole) { try SpliceInfoSection(hex: Self.overrunHex) }
        #expect(whole.description
            == "descriptor loop ends with 10 stray bytes at bytes 36–45 (0x00094355454900000135): descriptor tag 0x00 "
            + "declares descriptor_length 9 but 8 bytes follow its header")

        let second = SCTE35Error.descriptorLengthOverrun(byteOffset: 46, tag: 0x00, declared: 5, available: 1, bytes: [0x00, 0x05, 0x43])
        #expect(throws: second) { try SpliceInfoSection(hex: Self.partialSecondDescriptorHex) }
        #expect(second.description
            == "descriptor loop ends with 3 stray bytes at bytes 46–48 (0x000543): descriptor tag 0x00 declares "
            + "descriptor_length 5 but 1 byte follows its header")
        #expect(second.reasonLabel == "descriptor_loop_stray_bytes")
    }

    @Test("long stray runs are cut in the message, not in the error value")
    func longStrayRunsAreShortened() {
        let stray = Array(repeating: UInt8(0xAB), count: 40)
        let error = SCTE35Error.descriptorLengthOverrun(byteOffset: 36, tag: 0xAB, declared: 0xAB, available: 38, bytes: stray)
        #expect(error.description.contains("40 stray bytes at bytes 36–75 (0x" + String(repeating: "AB", count: 16) + "…)"))
        #expect(!error.description.contains("\n"))
    }

    // MARK: Reasons for counting

    @Test("every error has a fixed, metric-safe reason label")
    func reasonLabels() {
        let cases: [(SCTE35Error, String)] = [
            (.unexpectedEndOfData(field: "pts_time", bitOffset: 83), "truncated"),
            (.invalidTableID(0xFD), "invalid_table_id"),
            (.invalidSectionLength(declared: 47, actual: 48), "invalid_section_length"),
            (.crcMismatch(expected: 0, computed: 1), "crc_mismatch"),
            (.spliceCommandLengthOverrun(declared: 300, available: 20), "invalid_splice_command_length"),
            (.spliceCommandLengthMismatch(commandType: 5, declared: 21, parsed: 20), "invalid_splice_command_length"),
            (.unknownSpliceCommandLength(commandType: 0xFF), "unknown_splice_command_length"),
            (.descriptorLoopLengthOverrun(declared: 11, available: 10), "invalid_descriptor_loop_length"),
            (.descriptorLoopTrailingBytes(byteOffset: 46, bytes: [0]), "descriptor_loop_stray_bytes"),
            (.descriptorLengthOverrun(byteOffset: 36, tag: 0, declared: 9, available: 8, bytes: [0, 9]), "descriptor_loop_stray_bytes"),
            (.descriptorLengthMismatch(tag: 0, declared: 9, parsed: 8), "invalid_descriptor_length"),
            (.invalidHex(offset: 3), "invalid_hex"),
            (.invalidBase64(offset: 4), "invalid_base64"),
            (.valueOutOfRange(field: "tier", value: 4096, bitWidth: 12), "unencodable"),
            (.lengthOutOfRange(field: "section_length", length: 5000, maximum: 4095), "unencodable"),
        ]
        #expect(Set(cases.map(\.1)) == Set(SCTE35Error.reasonLabels))
        #expect(SCTE35Error.reasonLabels.count == Set(SCTE35Error.reasonLabels).count)
        for (error, label) in cases {
            #expect(error.reasonLabel == label, "\(error)")
            let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789_".utf8)
            #expect(error.reasonLabel.utf8.allSatisfy(allowed.contains), "\(error.reasonLabel)")
        }
    }

    // MARK: Property

    static let seed: UInt64 = 0x0FFF_5C7E_35FF_FFFF
    static let iterations = 3_000

    /// Sections built from every vector and every built value, with random header fields, a random
    /// legacy length (where the command allows one) and random stuffing (none half the time):
    /// encode → decode → encode is the identity on values and bytes, through binary, text and JSON.
    @Test func generatedSectionsWithLegacyLengthsAndStuffingRoundTrip() throws {
        var random = SeededRandom(seed: Self.seed)
        let templates = try (Vectors.all + Vectors.badCRC).map { try SpliceInfoSection(bytes: $0.bytes, verifyCRC: false) }
            + RoundTripTests.builtSections
        var legacy = 0
        var stuffed = 0
        for iteration in 0..<Self.iterations {
            var section = random.pick(templates)
            section.ptsAdjustment = random.chance(0.5) ? 0 : random.next() & ((1 << 33) - 1)
            section.tier = UInt16(random.below(0x1000))
            section.legacyUnknownCommandLength = random.chance(0.5)
            section.trailingStuffingCount = random.chance(0.5) ? 0 : random.int(1...SpliceInfoSection.maximumTrailingStuffingCount)
            let bytes: [UInt8]
            do {
                bytes = try section.encoded()
            } catch {
                // Only a legacy length on a command without a self-delimiting syntax may refuse.
                let type = section.command?.type ?? 0
                #expect(section.legacyUnknownCommandLength && ![0x00, 0x05, 0x06, 0x07].contains(type), "iteration \(iteration)")
                #expect(error == .unknownSpliceCommandLength(commandType: type), "iteration \(iteration)")
                continue
            }
            let sectionEnd = bytes.count - section.trailingStuffingCount
            #expect(bytes[sectionEnd...].allSatisfy { $0 == 0xFF }, "iteration \(iteration)")
            #expect(CRC32MPEG2.checksum(bytes[..<sectionEnd]) == 0, "iteration \(iteration)")
            #expect(Int(bytes[1] & 0x0F) << 8 | Int(bytes[2]) == sectionEnd - 3, "iteration \(iteration)")
            let lengthField = Int(bytes[11] & 0x0F) << 8 | Int(bytes[12])
            if !section.isEncrypted {
                #expect((lengthField == 0xFFF) == section.legacyUnknownCommandLength, "iteration \(iteration)")
                if section.legacyUnknownCommandLength { legacy += 1 }
            }
            if section.trailingStuffingCount > 0 { stuffed += 1 }

            let decoded = try SpliceInfoSection(bytes: bytes)
            // An encrypted section has no clear command length to flag.
            var expected = section
            if section.isEncrypted { expected.legacyUnknownCommandLength = false }
            #expect(decoded == expected, "iteration \(iteration)")
            #expect(try decoded.encoded() == bytes, "iteration \(iteration)")
            #expect(try SpliceInfoSection(text: decoded.hexString()) == decoded, "iteration \(iteration)")
            #expect(try SpliceInfoSection(text: decoded.base64String()) == decoded, "iteration \(iteration)")
            let viaJSON = try Self.viaJSON(decoded)
            #expect(viaJSON == decoded, "iteration \(iteration)")
            #expect(try viaJSON.encoded() == bytes, "iteration \(iteration)")
        }
        // The generator must reach both edge cases often, not just the plain path.
        #expect(legacy > Self.iterations / 5 && stuffed > Self.iterations / 4, "legacy \(legacy), stuffed \(stuffed)")
    }
}
