/// The `splice_command()` of a section, selected by `splice_command_type` (SCTE 35 Table 7):
///
/// | type   | command                  | HLS attribute (HLS-RULES D9–D11) |
/// |--------|--------------------------|----------------------------------|
/// | `0x00` | `splice_null()`          | `SCTE35-CMD` |
/// | `0x04` | `splice_schedule()`      | `SCTE35-CMD` (kept as opaque bytes) |
/// | `0x05` | `splice_insert()`        | `SCTE35-OUT` / `SCTE35-IN` |
/// | `0x06` | `time_signal()`          | `SCTE35-OUT` / `SCTE35-IN` / `SCTE35-CMD` per descriptor |
/// | `0x07` | `bandwidth_reservation()`| `SCTE35-CMD` |
/// | `0xFF` | `private_command()`      | `SCTE35-CMD` |
///
/// Any other type is kept as ``unknown(type:bytes:)`` so that it still round-trips.
/// (``unknown(type:bytes:)`` with one of the types above encodes fine but decodes as that type.)
public enum SpliceCommand: Sendable, Hashable {
    /// `splice_null()` (`0x00`): empty; a heartbeat or a carrier for descriptors.
    case spliceNull
    /// `splice_schedule()` (`0x04`), not decoded: its body bytes.
    case spliceSchedule(bytes: [UInt8])
    /// `splice_insert()` (`0x05`).
    case spliceInsert(SpliceInsert)
    /// `time_signal()` (`0x06`).
    case timeSignal(TimeSignal)
    /// `bandwidth_reservation()` (`0x07`): empty.
    case bandwidthReservation
    /// `private_command()` (`0xFF`).
    case privateCommand(PrivateCommand)
    /// A reserved command type, kept as its body bytes.
    case unknown(type: UInt8, bytes: [UInt8])

    /// `splice_command_type`.
    public var type: UInt8 {
        switch self {
        case .spliceNull: return 0x00
        case .spliceSchedule: return 0x04
        case .spliceInsert: return 0x05
        case .timeSignal: return 0x06
        case .bandwidthReservation: return 0x07
        case .privateCommand: return 0xFF
        case .unknown(let type, _): return type
        }
    }

    /// The standard's syntax name (`"splice_insert"`), or `nil` for a reserved type.
    public static func name(forType type: UInt8) -> String? {
        switch type {
        case 0x00: return "splice_null"
        case 0x04: return "splice_schedule"
        case 0x05: return "splice_insert"
        case 0x06: return "time_signal"
        case 0x07: return "bandwidth_reservation"
        case 0xFF: return "private_command"
        default: return nil
        }
    }

    /// Commands whose end can be found by parsing, which the legacy `splice_command_length == 0xFFF`
    /// ("length unknown") requires.
    static func isSelfDelimiting(type: UInt8) -> Bool {
        switch type {
        case 0x00, 0x05, 0x06, 0x07: return true
        default: return false
        }
    }

    /// Parses a command body. `reader` is limited to `splice_command_length` bytes unless the length
    /// is the legacy `0xFFF`, in which case only self-delimiting types get here.
    init(type: UInt8, reading reader: inout BitReader) throws(SCTE35Error) {
        switch type {
        case 0x00: self = .spliceNull
        case 0x04: self = .spliceSchedule(bytes: try reader.remainingByteArray("splice_schedule"))
        case 0x05: self = .spliceInsert(try SpliceInsert(reading: &reader))
        case 0x06: self = .timeSignal(try TimeSignal(reading: &reader))
        case 0x07: self = .bandwidthReservation
        case 0xFF: self = .privateCommand(try PrivateCommand(reading: &reader))
        default: self = .unknown(type: type, bytes: try reader.remainingByteArray("splice_command"))
        }
    }

    /// The command's bytes after `splice_command_type` (`splice_command_length` is their count).
    func encodedBody() throws(SCTE35Error) -> [UInt8] {
        var writer = BitWriter()
        try write(to: &writer)
        return writer.bytes
    }

    func write(to writer: inout BitWriter) throws(SCTE35Error) {
        switch self {
        case .spliceNull, .bandwidthReservation: break
        case .spliceSchedule(let bytes): writer.append(bytes)
        case .spliceInsert(let insert): try insert.write(to: &writer)
        case .timeSignal(let signal): try signal.write(to: &writer)
        case .privateCommand(let command): try command.write(to: &writer)
        case .unknown(_, let bytes): writer.append(bytes)
        }
    }
}

// MARK: - Conveniences

extension SpliceCommand {
    /// The `splice_insert()`, if this is one.
    public var spliceInsert: SpliceInsert? {
        if case .spliceInsert(let insert) = self { return insert }
        return nil
    }

    /// The `time_signal()`, if this is one.
    public var timeSignal: TimeSignal? {
        if case .timeSignal(let signal) = self { return signal }
        return nil
    }
}

// MARK: - Codable

/// `{"splice_command_type": 5, "splice_command_name": "splice_insert", …fields of the command}`.
extension SpliceCommand: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        let type = try c.decode(UInt8.self, forKey: "splice_command_type")
        switch type {
        case 0x00: self = .spliceNull
        case 0x04: self = .spliceSchedule(bytes: try c.decodeHexIfPresent(forKey: "bytes") ?? [])
        case 0x05: self = .spliceInsert(try SpliceInsert(from: decoder))
        case 0x06: self = .timeSignal(try TimeSignal(from: decoder))
        case 0x07: self = .bandwidthReservation
        case 0xFF: self = .privateCommand(try PrivateCommand(from: decoder))
        default: self = .unknown(type: type, bytes: try c.decodeHexIfPresent(forKey: "bytes") ?? [])
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(type, forKey: "splice_command_type")
        if let name = Self.name(forType: type) {
            try c.encode(name, forKey: "splice_command_name")
        }
        switch self {
        case .spliceNull, .bandwidthReservation: break
        case .spliceSchedule(let bytes), .unknown(_, let bytes): try c.encodeHex(bytes, forKey: "bytes")
        case .spliceInsert(let insert): try insert.encode(to: encoder)
        case .timeSignal(let signal): try signal.encode(to: encoder)
        case .privateCommand(let command): try command.encode(to: encoder)
        }
    }
}
