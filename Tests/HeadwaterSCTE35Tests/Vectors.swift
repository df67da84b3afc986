import HeadwaterSCTE35

/// Test vectors. Sources:
/// - HLS-RULES.md section I6 (SCTE 35 §14.1/§14.2, AWS MediaConvert) and D17 (RFC 8216 §8.10).
/// - `threefive` 3.1.5 (Python), generated once with its encoder and committed here; the tests do
///   not run Python. Its decoded values are quoted next to each vector.
/// - Hand-assembled sections for syntax threefive does not cover (component loops, cancellation,
///   encryption, reserved types); their CRCs were computed independently (bitwise CRC-32/MPEG-2).
enum Vectors {
    // MARK: HLS-RULES I6

    /// Ex 1: SCTE 35 §14.2, splice_insert.
    static let ex1Base64 = "/DAvAAAAAAAA///wFAVIAACPf+/+c2nALv4AUsz1AAAAAAAKAAhDVUVJAAABNWLbowo="
    static let ex1Hex = "0xFC302F000000000000FFFFF014054800008F7FEFFE7369C02EFE0052CCF500000000000A0008435545490000013562DBA30A"

    /// Ex 2: SCTE 35 §14.1, time_signal + Provider Placement Opportunity Start (no sub-segment fields).
    static let ex2Base64 = "/DA0AAAAAAAA///wBQb+cr0AUAAeAhxDVUVJSAAAjn/PAAGlmbAICAAAAAAsoKGKNAIAmsnRfg=="
    static let ex2Hex = "0xFC3034000000000000FFFFF00506FE72BD0050001E021C435545494800008E7FCF0001A599B00808000000002CA0A18A3402009AC9D17E"

    /// Ex 3: AWS MediaConvert `EXT-OATCLS-SCTE35` out (0x34) and in (0x35).
    static let awsOutBase64 = "/DAnAAAAAAAAAP/wBQb+AA27oAARAg9DVUVJAAAAAX+HCQA0AAE0xUZn"
    static let awsOutHex = "0xFC302700000000000000FFF00506FE000DBBA00011020F43554549000000017F87090034000134C54667"
    static let awsInBase64 = "/DAnAAAAAAAAAP/wBQb+ADbugAARAg9DVUVJAAAAAX+HCQA1AAA3v5+Q"

    /// D17 / Ex 4: RFC 8216 §8.10 example (CRC_32 is zero; sap bits 00; identifier not 'CUEI').
    static let d17OutHex = "0xFC002F000000000000FF000014056FFFFFF000E081622DCAFF000052636200000000000A0008029896F50000008700000000"
    static let d17InHex = "0xFC002A000000000000FF00000F056FFFFFF000408162802E6100000000000A0008029896F50000008700000000"

    // MARK: threefive 3.1.5

    /// time_signal, pts_adjustment 100 s, segmentation 0x34 with sub_segment 3/4, restricted delivery
    /// (web 1, blackout 0, archive 1, "Restrict Group 1"), 60 s duration, ADI UPID "SIGNAL:Ny/12345678".
    static let threefiveSubSegmentsBase64 = "/DBAAAAAiVRA///wBQb+cr0AUAAqAihDVUVJEjRWeH/VAABSZcAJElNJR05BTDpOeS8xMjM0NTY3ODQBAgMEgivKAQ=="
    /// private_command, identifier 'CUEI', private bytes 01 02 03 AB.
    static let threefivePrivateCommandBase64 = "/DAZAAAAAAAAAP/wCP9DVUVJAQIDqwAAeOxCkg=="
    /// splice_null.
    static let threefiveSpliceNullBase64 = "/DARAAAAAAAAAP/wAAAAAHpPv/8="
    /// splice_insert event 42, out, program immediate, no duration, unique_program_id 42.
    static let threefiveImmediateInsertBase64 = "/DAbAAAAAAAAAP/wCgUAAAAqf98AKgAAAACJ5BlX"
    /// splice_insert event 43, out, pts 100.5 s, break 30 s auto-return, unique_program_id 43.
    static let threefiveTimedInsertBase64 = "/DAlAAAAAAAAAP/wFAUAAAArf+/+AIoECP4AKTLgACsAAAAA8W6QiA=="
    /// bandwidth_reservation.
    static let threefiveBandwidthBase64 = "/DARAAAAAAAAAP/wAAcAAH9E+Go="
    /// time_signal without time + DTMF (preroll 177, "121#") + time descriptor (TAI 1700000000.5, offset 37).
    static let threefiveDTMFTimeBase64 = "/DAwAAAAAAAAAP/wAQZ/AB4BCkNVRUmxnzEyMSMDEENVRUkAAGVT8QAdzWUAACWnoP2q"

    // MARK: Hand-assembled

    /// splice_insert event 1, out, component mode: tag 1 at pts 100, tag 2 time not specified; unique_program_id 1.
    static let componentInsertHex = "0xFC3024000000000000FFFFF01305000000017F8F0201FE00000064027F00010000000022703135"
    /// time_signal pts 0 + segmentation event 2, component loop (tag 0x21, pts_offset 5), Program Start 1/1.
    static let componentSegmentationHex = "0xFC302E000000000000FFFFF00506FE000000000018021643554549000000027F3F0121FE0000000500001001019AF18B56"
    /// time_signal (no time) + segmentation event 3 cancelled.
    static let cancelledSegmentationHex = "0xFC301D000000000000FFFFF001067F000B02094355454900000003FF04035808"
    /// splice_insert event 4 cancelled.
    static let cancelledInsertHex = "0xFC3016000000000000FFFFF0050500000004FF0000B3FECD48"
    /// encrypted_packet 1, algorithm 2, cw_index 5, splice_command_length 5, 12 opaque bytes.
    static let encryptedHex = "0xFC301A00840000000005FFF0050102030405060708090A0B0C2FB61B2B"
    /// reserved command type 0x10 (AB CD EF), 'CUEI' descriptor tag 0x09 (01 02), alignment stuffing FF FF.
    static let unknownTypesHex = "0xFC301E000000000000FFFFF00310ABCDEF00080906435545490102FFFFD7BE6979"
    /// splice_null with the legacy splice_command_length 0xFFF ("unknown").
    static let legacyCommandLengthHex = "0xFC3011000000000000FFFFFFFF00000043775FDF"

    /// Every vector whose CRC is valid, as bytes, with a name for failure messages.
    static var all: [(name: String, bytes: [UInt8])] {
        let base64: [(String, String)] = [
            ("ex1", ex1Base64), ("ex2", ex2Base64), ("awsOut", awsOutBase64), ("awsIn", awsInBase64),
            ("threefiveSubSegments", threefiveSubSegmentsBase64), ("threefivePrivate", threefivePrivateCommandBase64),
            ("threefiveNull", threefiveSpliceNullBase64), ("threefiveImmediate", threefiveImmediateInsertBase64),
            ("threefiveTimed", threefiveTimedInsertBase64), ("threefiveBandwidth", threefiveBandwidthBase64),
            ("threefiveDTMFTime", threefiveDTMFTimeBase64),
        ]
        let hex: [(String, String)] = [
            ("componentInsert", componentInsertHex), ("componentSegmentation", componentSegmentationHex),
            ("cancelledSegmentation", cancelledSegmentationHex), ("cancelledInsert", cancelledInsertHex),
            ("encrypted", encryptedHex), ("unknownTypes", unknownTypesHex), ("legacyCommandLength", legacyCommandLengthHex),
        ]
        return base64.map { ($0.0, bytes(base64: $0.1)) } + hex.map { ($0.0, bytes(hex: $0.1)) }
    }

    /// The vectors whose CRC is wrong on purpose (D17).
    static var badCRC: [(name: String, bytes: [UInt8])] {
        [("d17Out", bytes(hex: d17OutHex)), ("d17In", bytes(hex: d17InHex))]
    }

    static func bytes(hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var digits = Array(hex.utf8.dropFirst(2))
        while digits.count >= 2 {
            result.append(UInt8(String(decoding: digits.prefix(2), as: UTF8.self), radix: 16) ?? 0)
            digits.removeFirst(2)
        }
        return result
    }

    /// A deliberately simple base64 decoder, independent of the library's.
    static func bytes(base64: String) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var bits: [Bool] = []
        for char in base64 where char != "=" {
            guard let value = alphabet.firstIndex(of: char) else { return [] }
            for shift in (0..<6).reversed() { bits.append(value >> shift & 1 == 1) }
        }
        return stride(from: 0, to: bits.count - 7, by: 8).map { start in
            bits[start..<(start + 8)].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        }
    }
}

/// `bytes` with `section_length` set to match its size and `CRC_32` recomputed, so that a test
/// can reach the structural checks behind the length and CRC checks.
func repaired(_ bytes: [UInt8], fixLength: Bool = true) -> [UInt8] {
    var bytes = bytes
    if fixLength, bytes.count >= 3 {
        let length = bytes.count - 3
        if length <= 0xFFF {
            bytes[1] = bytes[1] & 0xF0 | UInt8(length >> 8)
            bytes[2] = UInt8(length & 0xFF)
        }
    }
    if bytes.count >= 7 {
        let crc = CRC32MPEG2.checksum(bytes.dropLast(4))
        for index in 0..<4 {
            bytes[bytes.count - 4 + index] = UInt8(truncatingIfNeeded: crc >> UInt32(24 - 8 * index))
        }
    }
    return bytes
}
