import HeadwaterSCTE35
import Testing

/// Bad input is data, not a crash: every malformed section throws a specific ``SCTE35Error``.
@Suite("Malformed input")
struct MalformedInputTests {
    static var vectorNames: [String] { (Vectors.all + Vectors.badCRC).map(\.name) }

    static func vector(_ name: String) -> [UInt8] {
        (Vectors.all + Vectors.badCRC).first { $0.name == name }?.bytes ?? []
    }

    static var ex1: [UInt8] { Vectors.bytes(hex: Vectors.ex1Hex) }

    @Test(arguments: vectorNames)
    func everyTruncationThrows(_ name: String) {
        let bytes = Self.vector(name)
        for count in 0..<bytes.count {
            let prefix = Array(bytes.prefix(count))
            for verifyCRC in [true, false] {
                do {
                    _ = try SpliceInfoSection(bytes: prefix, verifyCRC: verifyCRC)
                    Issue.record("\(name): prefix of \(count) bytes decoded")
                } catch {
                    switch count {
                    case 0: #expect(error == .unexpectedEndOfData(field: "table_id", bitOffset: 0))
                    case 1: #expect(error == .unexpectedEndOfData(field: "section_syntax_indicator", bitOffset: 8))
                    case 2: #expect(error == .unexpectedEndOfData(field: "section_length", bitOffset: 12))
                    default:
                        #expect(error == .invalidSectionLength(declared: bytes.count - 3, actual: count - 3))
                    }
                }
            }
        }
    }

    @Test(arguments: Vectors.all.map(\.name))
    func everyFlippedByteFailsTheCRC(_ name: String) {
        let bytes = Self.vector(name)
        for index in 3..<bytes.count {
            var corrupted = bytes
            corrupted[index] ^= 0x5A
            #expect(throws: SCTE35Error.self) { try SpliceInfoSection(bytes: corrupted) }
            do {
                _ = try SpliceInfoSection(bytes: corrupted)
            } catch {
                guard case .crcMismatch(let expected, let computed) = error else {
                    Issue.record("\(name)[\(index)]: \(error)")
                    continue
                }
                #expect(expected != computed)
            }
        }
    }

    @Test func wrongTableID() {
        var bytes = Self.ex1
        bytes[0] = 0xFD
        #expect(throws: SCTE35Error.invalidTableID(0xFD)) { try SpliceInfoSection(bytes: bytes) }
        #expect(throws: SCTE35Error.invalidTableID(0x00)) { try SpliceInfoSection(bytes: [0x00]) }
    }

    @Test func sectionLengthLargerOrSmallerThanData() {
        var larger = Self.ex1
        larger[2] += 1
        #expect(throws: SCTE35Error.invalidSectionLength(declared: 48, actual: 47)) { try SpliceInfoSection(bytes: larger) }
        var smaller = Self.ex1
        smaller[2] -= 1
        #expect(throws: SCTE35Error.invalidSectionLength(declared: 46, actual: 47)) { try SpliceInfoSection(bytes: smaller) }
        #expect(throws: SCTE35Error.invalidSectionLength(declared: 47, actual: 48)) {
            try SpliceInfoSection(bytes: Self.ex1 + [0x00])  // not MPEG-TS stuffing (FieldEdgeCaseTests has 0xFF)
        }
        #expect(throws: SCTE35Error.unexpectedEndOfData(field: "CRC_32", bitOffset: 24)) {
            try SpliceInfoSection(bytes: [0xFC, 0x30, 0x02, 0x00, 0x00])
        }
    }

    @Test func descriptorLoopLengthOverrun() {
        var bytes = Self.ex1
        bytes[35] = 0x0B  // descriptor_loop_length 10 → 11
        #expect(throws: SCTE35Error.descriptorLoopLengthOverrun(declared: 11, available: 10)) {
            try SpliceInfoSection(bytes: repaired(bytes))
        }
    }

    @Test func descriptorLengthOverrunAndMismatch() {
        var overrun = Self.ex1
        overrun[37] = 0x09  // descriptor_length 8 → 9
        let rest: [UInt8] = [0x00, 0x09, 0x43, 0x55, 0x45, 0x49, 0x00, 0x00, 0x01, 0x35]
        #expect(throws: SCTE35Error.descriptorLengthOverrun(byteOffset: 36, tag: 0, declared: 9, available: 8, bytes: rest)) {
            try SpliceInfoSection(bytes: repaired(overrun))
        }
        // One more byte inside the avail descriptor than it defines.
        var longer = Self.ex1
        longer[35] = 0x0B
        longer[37] = 0x09
        longer.insert(0x00, at: 46)
        #expect(throws: SCTE35Error.descriptorLengthMismatch(tag: 0, declared: 9, parsed: 8)) {
            try SpliceInfoSection(bytes: repaired(longer))
        }
        // Too short to hold the identifier.
        var short = Self.ex1
        short[37] = 0x02
        short[35] = 0x04
        short.removeSubrange(40..<46)
        #expect(throws: SCTE35Error.unexpectedEndOfData(field: "identifier", bitOffset: 38 * 8)) {
            try SpliceInfoSection(bytes: repaired(short))
        }
        // A lone tag byte at the end of the loop.
        var dangling = Self.ex1
        dangling[35] = 0x0B
        dangling.insert(0x00, at: 46)
        #expect(throws: SCTE35Error.descriptorLoopTrailingBytes(byteOffset: 46, bytes: [0x00])) {
            try SpliceInfoSection(bytes: repaired(dangling))
        }
    }

    @Test func spliceCommandLengthMismatch() {
        var longer = Self.ex1
        longer[12] = 0x15  // splice_command_length 20 → 21: the insert parses to 20 bytes
        #expect(throws: SCTE35Error.spliceCommandLengthMismatch(commandType: 5, declared: 21, parsed: 20)) {
            try SpliceInfoSection(bytes: repaired(longer))
        }
        var shorter = Self.ex1
        shorter[12] = 0x13  // 19: the insert runs out of bytes
        #expect(throws: SCTE35Error.unexpectedEndOfData(field: "avails_expected", bitOffset: 33 * 8)) {
            try SpliceInfoSection(bytes: repaired(shorter))
        }
        var overrun = Self.ex1
        overrun[11] = 0xF1  // 0x114 = 276
        #expect(throws: SCTE35Error.spliceCommandLengthOverrun(declared: 0x114, available: 32)) {
            try SpliceInfoSection(bytes: repaired(overrun))
        }
        var legacyPrivate = Vectors.bytes(base64: Vectors.threefivePrivateCommandBase64)
        legacyPrivate[11] |= 0x0F
        legacyPrivate[12] = 0xFF
        #expect(throws: SCTE35Error.unknownSpliceCommandLength(commandType: 0xFF)) {
            try SpliceInfoSection(bytes: repaired(legacyPrivate))
        }
    }

    @Test func invalidHex() {
        #expect(throws: SCTE35Error.invalidHex(offset: 5)) { try SpliceInfoSection(hex: "0xFC3G") }
        #expect(throws: SCTE35Error.invalidHex(offset: 4)) { try SpliceInfoSection(hex: "0xFC3") }
        #expect(throws: SCTE35Error.invalidHex(offset: 2)) { try SpliceInfoSection(hex: "0x FC3") }
        #expect(throws: SCTE35Error.invalidHex(offset: 0)) { try SpliceInfoSection(hex: "xx") }
        #expect(throws: SCTE35Error.unexpectedEndOfData(field: "table_id", bitOffset: 0)) { try SpliceInfoSection(hex: "0x") }
        #expect(throws: SCTE35Error.unexpectedEndOfData(field: "table_id", bitOffset: 0)) { try SpliceInfoSection(text: "   ") }
    }

    @Test func invalidBase64() {
        #expect(throws: SCTE35Error.invalidBase64(offset: 3)) { try SpliceInfoSection(base64: "/DA*AAAA") }
        #expect(throws: SCTE35Error.invalidBase64(offset: 5)) { try SpliceInfoSection(base64: "/DAvA") }
        #expect(throws: SCTE35Error.invalidBase64(offset: 7)) { try SpliceInfoSection(base64: "/DAvAA=") }
        #expect(throws: SCTE35Error.invalidBase64(offset: 1)) { try SpliceInfoSection(base64: "/=AvAA==") }
        #expect(throws: SCTE35Error.invalidBase64(offset: 4)) { try SpliceInfoSection(base64: "/DAv AAA") }
        #expect(throws: SCTE35Error.invalidBase64(offset: 2)) { try SpliceInfoSection(text: "/D-_") }
    }
}
