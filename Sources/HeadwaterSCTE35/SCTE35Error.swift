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
    /// `section_length + 3` does not equal the number of bytes supplied.
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
    /// A descriptor's `descriptor_length` reaches past the end of the descriptor loop.
    case descriptorLengthOverrun(tag: UInt8, declared: Int, available: Int)
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

    public var description: String {
        switch self {
        case .unexpectedEndOfData(let field, let bitOffset):
            return "unexpected end of data reading \(field) at bit \(bitOffset) (byte \(bitOffset / 8))"
        case .invalidTableID(let id):
            return "invalid table_id \(hex(UInt64(id), digits: 2)), expected 0xFC"
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
        case .descriptorLengthOverrun(let tag, let declared, let available):
            return "descriptor_length \(declared) of descriptor tag \(hex(UInt64(tag), digits: 2)) exceeds the \(available) bytes left in the loop"
        case .descriptorLengthMismatch(let tag, let declared, let parsed):
            return "descriptor_length \(declared) of descriptor tag \(hex(UInt64(tag), digits: 2)) does not match the \(parsed) bytes parsed"
        case .invalidHex(let offset):
            return "invalid hex at character \(offset)"
        case .invalidBase64(let offset):
            return "invalid base64 at character \(offset)"
        case .valueOutOfRange(let field, let value, let bitWidth):
            return "\(field) value \(value) does not fit in \(bitWidth) bits"
        case .lengthOutOfRange(let field, let length, let maximum):
            return "\(field) length \(length) exceeds the maximum \(maximum)"
        }
    }
}

/// `0x`-prefixed, zero-padded, upper-case hex of `value`, for messages.
func hex(_ value: UInt64, digits: Int) -> String {
    let raw = String(value, radix: 16, uppercase: true)
    let padding = raw.count < digits ? String(repeating: "0", count: digits - raw.count) : ""
    return "0x" + padding + raw
}
