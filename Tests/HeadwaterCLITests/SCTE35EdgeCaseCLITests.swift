import Foundation
import Testing

/// `headwater scte35 decode … | headwater scte35 encode -` with cues as they come from the field:
/// the legacy `splice_command_length = 0xFFF` and MPEG-TS stuffing after the section come back
/// byte for byte, and the JSON between the two says what the bytes say.
@Suite("headwater scte35: field edge cases")
struct SCTE35EdgeCaseCLITests {
    /// HLS-RULES I6 Ex 1 with `splice_command_length` 0xFFF (CRC recomputed; see FieldEdgeCaseTests).
    static let legacyHex =
        "0xFC302F000000000000FFFFFFFF054800008F7FEFFE7369C02EFE0052CCF500000000000A0008435545490000013599D44C33"
    /// Ex 1 followed by 133 bytes of stuffing, as at the end of a transport packet's payload.
    static let stuffedHex =
        "0xFC302F000000000000FFFFF014054800008F7FEFFE7369C02EFE0052CCF500000000000A0008435545490000013562DBA30A"
        + String(repeating: "FF", count: 133)

    /// Decodes `cue`, checks the JSON with `inspect`, encodes that JSON and returns the hex printed.
    static func decodeThenEncode(_ cue: String, inspect: ([String: Any]) throws -> Void) throws -> String {
        let decoded = try HeadwaterProcess.run(["scte35", "decode", cue])
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stderr.isEmpty, "\(decoded.stderr)")
        try inspect(try #require(try JSONSerialization.jsonObject(with: Data(decoded.stdout.utf8)) as? [String: Any]))
        let encoded = try HeadwaterProcess.run(["scte35", "encode", "--format", "hex", "-"], stdin: decoded.stdout)
        #expect(encoded.status == 0, "\(encoded.stderr)")
        return encoded.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("a legacy 0xFFF splice_command_length shows as 4095 and round-trips byte for byte")
    func legacyCommandLength() throws {
        let hex = try Self.decodeThenEncode(Self.legacyHex) { json in
            #expect(json["splice_command_length"] as? Int == 4095)
            #expect((json["splice_command"] as? [String: Any])?["splice_event_id"] as? Int == 0x4800_008F)
            #expect(json["crc_32"] as? String == "0x99D44C33")
            #expect(json["trailing_stuffing_byte_count"] == nil)
        }
        #expect(hex == Self.legacyHex)
    }

    @Test("MPEG-TS stuffing after the section is reported and round-trips byte for byte, also from base64")
    func trailingStuffing() throws {
        let bytes = (0..<(Self.stuffedHex.count - 2) / 2).map { index -> UInt8 in
            let start = Self.stuffedHex.index(Self.stuffedHex.startIndex, offsetBy: 2 + 2 * index)
            return UInt8(Self.stuffedHex[start..<Self.stuffedHex.index(start, offsetBy: 2)], radix: 16) ?? 0
        }
        for cue in [Self.stuffedHex, Data(bytes).base64EncodedString()] {
            let hex = try Self.decodeThenEncode(cue) { json in
                #expect(json["trailing_stuffing_byte_count"] as? Int == 133)
                #expect(json["section_length"] as? Int == 47)
                #expect(json["splice_command_length"] as? Int == 20)
                #expect(json["crc_32"] as? String == "0x62DBA30A")
            }
            #expect(hex == Self.stuffedHex)
        }
    }

    @Test("stray bytes at the end of a descriptor loop: exit 1, one line saying which bytes and where")
    func strayDescriptorBytes() throws {
        let stray = "0xFC3030000000000000FFFFF014054800008F7FEFFE7369C02EFE0052CCF500000000000B000843554549000001350047D6BDDA"
        let result = try HeadwaterProcess.run(["scte35", "decode", stray])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "headwater: scte35: descriptor loop ends with 1 stray byte at byte 46 (0x00): fewer than a "
            + "descriptor header (splice_descriptor_tag, descriptor_length)\n")
    }

    @Test("bytes after the section that are not stuffing: exit 1 with the reason")
    func trailingGarbage() throws {
        let result = try HeadwaterProcess.run(["scte35", "decode", Self.legacyHex + "FF47"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("are not MPEG-TS stuffing"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }
}
