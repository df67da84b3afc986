/// Why a `splice_info_section()` could not be decoded, or a model could not be encoded.
///
/// The codec never traps on input: every problem found in bytes, text or model values is reported
/// through one of these cases, with enough context (field name, bit offset, lengths) to explain the
/// failure in a single log line. ``description`` is that line.
public enum SCTE35Error: Error, Hashable, Sendable, CustomStringConvertible {
    /// The data ended while `field` was being read; `bitOffset` is where the read started,
    /// counted from the first bit of `table_id`.
    case unexpectedEndOfData(field: String, bitOffset: Int)
    /// `table_id` is not `0xFC`, so this is not a `splice_info_section()`.
    case invalidTableID(UInt8)
    /// `section_length` reaches past the bytes supplied (`declared > actual`), or ends the section
    /// before them and what follows is not MPEG-TS stuffing: at most
    /// ``SpliceInfoSection/maximumTrailingStuffingCount`` bytes of `0xFF`. `actual` counts the bytes
    /// after the `section_length` field.
    case invalidSectionLength(declared: Int, actual: Int)
    /// The `CRC_32` field (`expected`) differs from the CRC computed over the section (`computed`).
    case crcMismatch(expected: UInt32, computed: UInt32)
    /// `splice_command_length` reaches past the end of the section.
    case spliceCommandLengthOverrun(declared: Int, available: Int)
    /// The command parsed to a different number of bytes than `splice_command_length` declares.
    case spliceCommandLengthMismatch(commandType: UInt8, declared: Int, parsed: Int)
    /// `splice_command_length` is the legacy `0xFFF` ("unknown") but the command type has no
    /// self-delimiting syntax (private, schedule or unknown commands), so its end cannot be found.
    case unknownSpliceCommandLength(commandType: UInt8)
    /// `descriptor_loop_length` reaches past the end of the section.
    case descriptorLoopLengthOverrun(declared: Int, available: Int)
    /// The descriptor loop ends with fewer bytes than a descriptor's header (`splice_descriptor_tag`
    /// and `descriptor_length`): `bytes` are those stray bytes, the first at `byteOffset` (counted
    /// from `table_id`).
    case descriptorLoopTrailingBytes(byteOffset: Int, bytes: [UInt8])
    /// A descriptor's `descriptor_length` reaches past the end of the descriptor loop, so the loop
    /// ends with bytes that are no whole descriptor: `bytes` are those, from the descriptor's tag at
    /// `byteOffset` (counted from `table_id`) to the end of the loop; `available` is how many follow
    /// its header.
    case descriptorLengthOverrun(byteOffset: Int, tag: UInt8, declared: Int, available: Int, bytes: [UInt8])
    /// A descriptor parsed to a different number of bytes than its `descriptor_length` declares.
    case descriptorLengthMismatch(tag: UInt8, declared: Int, parsed: Int)
    /// Text given as hexadecimal has a non-hex character (or a dangling digit) at `offset`.
    case invalidHex(offset: Int)
    /// Text given as base64 has an invalid character, misplaced padding or a bad length at `offset`.
    case invalidBase64(offset: Int)
    /// Encoding: a model value does not fit its field.
    case valueOutOfRange(field: String, value: UInt64, bitWidth: Int)
    /// Encoding: a variable-length part is longer than its length field can express.
    case lengthOutOfRange(field: String, length: Int, maximum: Int)

    /// A short, fixed name of what went wrong, fit for a metric label or a log field
    /// (`crc_mismatch`, `descriptor_loop_stray_bytes`, …); ``description`` has the details. The
    /// set is closed: one label per case (the two descriptor-loop overruns share one, and so do the
    /// two encoding-only cases).
    public var reasonLabel: String {
        switch self {
        case .unexpectedEndOfData: return "truncated"
        case .invalidTableID: return "invalid_table_id"
        case .invalidSectionLength: return "invalid_section_length"
        case .crcMismatch: return "crc_mismatch"
        case .spliceCommandLengthOverrun, .spliceCommandLengthMismatch: return "invalid_splice_command_length"
        case .unknownSpliceCommandLength: return "unknown_splice_command_length"
        case .descriptorLoopLengthOverrun: return "invalid_descriptor_loop_length"
        case .descriptorLoopTrailingBytes, .descriptorLengthOverrun: return "descriptor_loop_stray_bytes"
        case .descriptorLengthMismatch: return "invalid_descriptor_length"
        case .invalidHex: return "invalid_hex"
        case .invalidBase64: return "invalid_base64"
        case .valueOutOfRange, .lengthOutOfRange: return "unencodable"
        }
    }

    /// Every ``reasonLabel``, so that a counter can export each series from 0.
    public static let reasonLabels = [
        "truncated", "invalid_table_id", "invalid_section_length", "crc_mismatch", "invalid_splice_command_length",
        "unknown_splice_command_length", "invalid_descriptor_loop_length", "descriptor_loop_stray_bytes",
        "invalid_descriptor_length", "invalid_hex", "invalid_base64", "unencodable",
    ]

    public var description: String {
        switch self {
        case .unexpectedEndOfData(let field, let bitOffset):
            return "unexpected end of data reading \(field) at bit \(bitOffset) (byte \(bitOffset / 8))"
        case .invalidTableID(let id):
            return "invalid table_id \(hex(UInt64(id), digits: 2)), expected 0xFC"
        case .invalidSectionLength(let declared, let actual) where declared < actual:
            return "invalid section_length \(declared): \(actual) bytes follow the section_length field, and the "
                + "\(bytes(actual - declared)) after the section are not MPEG-TS stuffing (up to "
                + "\(SpliceInfoSection.maximumTrailingStuffingCount) bytes of 0xFF)"
        case .invalidSectionLength(let declared, let actual):
            return "invalid section_length \(declared): \(actual) bytes follow the section_length field"
        case .crcMismatch(let expected, let computed):
            return "CRC mismatch: expected \(hex(UInt64(expected), digits: 8)), computed \(hex(UInt64(computed), digits: 8))"
        case .spliceCommandLengthOverrun(let declared, let available):
            return "splice_command_length \(declared) exceeds the \(available) bytes available"
        case .spliceCommandLengthMismatch(let type, let declared, let parsed):
            return "splice_command_length \(declared) does not match the \(parsed) bytes parsed for command type "
                + hex(UInt64(type), digits: 2)
        case .unknownSpliceCommandLength(let type):
            return "splice_command_length 0xFFF (unknown) is not supported for command type \(hex(UInt64(type), digits: 2))"
        case .descriptorLoopLengthOverrun(let declared, let available):
            return "descriptor_loop_length \(declared) exceeds the \(available) bytes available"
        case .descriptorLoopTrailingBytes(let offset, let stray):
            return "descriptor loop ends with \(strayBytes(stray, at: offset)): fewer than a descriptor header "
                + "(splice_descriptor_tag, descriptor_length)"
        case .descriptorLengthOverrun(let offset, let tag, let declared, let available, let stray):
            return "descriptor loop ends with \(strayBytes(stray, at: offset)): descriptor tag \(hex(UInt64(tag), digits: 2)) "
                + "declares descriptor_length \(declared) but \(bytes(available)) \(available == 1 ? "follows" : "follow") its header"
        case .descriptorLengthMismatch(let tag, let declared, let parsed):
            return "descriptor_length \(declared) of descriptor tag \(hex(UInt64(tag), digits: 2)) does not match the \(parsed) bytes parsed"
        case .invalidHex(let offset):
            return "invalid hex at character \(offset)"
        case .invalidBase64(let offset):
            return "invalid base64 at character \(offset)"
        case .valueOutOfRange(let field, let value, let bitWidth):
            return "\(field) value \(value) does not fit in \(bitWidth) bits"
        case .lengthOutOfRange(let field, let length, _) where length < 0:
            return "\(field) length \(length) is negative"
        case .lengthOutOfRange(let field, let length, let maximum):
            return "\(field) length \(length) exceeds the maximum \(maximum)"
        }
    }
}

/// `"1 byte"`, `"3 bytes"`.
private func bytes(_ count: Int) -> String {
    count == 1 ? "1 byte" : "\(count) bytes"
}

/// `"2 stray bytes at bytes 46–47 (0x0009)"`: the count, the offsets and the bytes themselves, the
/// hex cut after 16 bytes so that the message stays one readable line.
private func strayBytes(_ stray: [UInt8], at offset: Int) -> String {
    let shown = Hex.encode(Array(stray.prefix(16))) + (stray.count > 16 ? "…" : "")
    let place = stray.count == 1 ? "byte \(offset)" : "bytes \(offset)–\(offset + stray.count - 1)"
    return "\(stray.count == 1 ? "1 stray byte" : "\(stray.count) stray bytes") at \(place) (\(shown))"
}

/// `0x`-prefixed, zero-padded, upper-case hex of `value`, for messages.
func hex(_ value: UInt64, digits: Int) -> String {
    let raw = String(value, radix: 16, uppercase: true)
    let padding = raw.count < digits ? String(repeating: "0", count: digits - raw.count) : ""
    return "0x" + padding + raw
}
