/// One `splice_descriptor()` from the descriptor loop of a section.
///
/// ```
/// splice_descriptor() {                bits  mnemonic
///   splice_descriptor_tag                8    uimsbf
///   descriptor_length                    8    uimsbf
///   identifier                          32    uimsbf
///   for (i = 0; i < N; i++)
///     private_byte                       8    uimsbf
/// }
/// ```
/// Tags `0x00`–`0x03` are decoded when `identifier` is `'CUEI'` (``cueIdentifier``): avail, DTMF,
/// segmentation and time descriptors. Every other descriptor — another tag, or a private
/// descriptor with another owner's identifier (as in the RFC 8216 §8.10 example, HLS-RULES D17) —
/// is kept as ``unknown(_:)`` so that it round-trips unchanged.
public enum SpliceDescriptor: Sendable, Hashable {
    /// `avail_descriptor()` (tag `0x00`).
    case avail(AvailDescriptor)
    /// `DTMF_descriptor()` (tag `0x01`).
    case dtmf(DTMFDescriptor)
    /// `segmentation_descriptor()` (tag `0x02`).
    case segmentation(SegmentationDescriptor)
    /// `time_descriptor()` (tag `0x03`).
    case time(TimeDescriptor)
    /// Any other descriptor, opaque.
    case unknown(UnknownDescriptor)

    /// `'CUEI'`, the identifier of every descriptor the SCTE 35 standard defines.
    public static let cueIdentifier: UInt32 = 0x4355_4549

    /// `splice_descriptor_tag`.
    public var tag: UInt8 {
        switch self {
        case .avail: return 0x00
        case .dtmf: return 0x01
        case .segmentation: return 0x02
        case .time: return 0x03
        case .unknown(let descriptor): return descriptor.tag
        }
    }

    /// `identifier`.
    public var identifier: UInt32 {
        if case .unknown(let descriptor) = self { return descriptor.identifier }
        return Self.cueIdentifier
    }

    /// The standard's syntax name for a `'CUEI'` tag this library decodes, e.g. `"segmentation_descriptor"`.
    public static func name(forTag tag: UInt8) -> String? {
        switch tag {
        case 0x00: return "avail_descriptor"
        case 0x01: return "DTMF_descriptor"
        case 0x02: return "segmentation_descriptor"
        case 0x03: return "time_descriptor"
        default: return nil
        }
    }

    /// The segmentation descriptor, if this is one.
    public var segmentation: SegmentationDescriptor? {
        if case .segmentation(let descriptor) = self { return descriptor }
        return nil
    }
}

// MARK: - Binary

extension SpliceDescriptor {
    /// Reads one descriptor; `reader` is limited to the descriptor loop.
    init(reading reader: inout BitReader) throws(SCTE35Error) {
        var stray = reader
        let tag = try reader.uint8(8, "splice_descriptor_tag")
        let length = Int(try reader.uint8(8, "descriptor_length"))
        guard length <= reader.remainingBytes else {
            throw .descriptorLengthOverrun(
                byteOffset: stray.bitOffset / 8, tag: tag, declared: length, available: reader.remainingBytes,
                bytes: try stray.remainingByteArray("splice_descriptor"))
        }
        var body = try reader.subReader(byteCount: length, "splice_descriptor")
        let start = body.bitOffset
        let identifier = try body.uint32(32, "identifier")
        if identifier == Self.cueIdentifier {
            switch tag {
            case 0x00: self = .avail(try AvailDescriptor(reading: &body))
            case 0x01: self = .dtmf(try DTMFDescriptor(reading: &body))
            case 0x02: self = .segmentation(try SegmentationDescriptor(reading: &body))
            case 0x03: self = .time(try TimeDescriptor(reading: &body))
            default: self = .unknown(UnknownDescriptor(tag: tag, identifier: identifier, privateBytes: try body.remainingByteArray("private_byte")))
            }
        } else {
            self = .unknown(UnknownDescriptor(tag: tag, identifier: identifier, privateBytes: try body.remainingByteArray("private_byte")))
        }
        guard body.isAtEnd else {
            throw .descriptorLengthMismatch(tag: tag, declared: length, parsed: (body.bitOffset - start + 7) / 8)
        }
    }

    /// The bytes after `descriptor_length`: `identifier` and the descriptor's fields.
    func encodedBody() throws(SCTE35Error) -> [UInt8] {
        var writer = BitWriter()
        try writer.field("identifier", identifier, bits: 32)
        switch self {
        case .avail(let descriptor): try descriptor.write(to: &writer)
        case .dtmf(let descriptor): try descriptor.write(to: &writer)
        case .segmentation(let descriptor): try descriptor.write(to: &writer)
        case .time(let descriptor): try descriptor.write(to: &writer)
        case .unknown(let descriptor): writer.append(descriptor.privateBytes)
        }
        guard writer.bytes.count <= 0xFF else {
            throw .lengthOutOfRange(field: "descriptor_length", length: writer.bytes.count, maximum: 0xFF)
        }
        return writer.bytes
    }

    func write(to writer: inout BitWriter) throws(SCTE35Error) {
        let body = try encodedBody()
        try writer.field("splice_descriptor_tag", tag, bits: 8)
        try writer.field("descriptor_length", body.count, bits: 8)
        writer.append(body)
    }
}

// MARK: - Codable

/// `{"splice_descriptor_tag": 2, "splice_descriptor_name": …, "descriptor_length": …, "identifier": "CUEI", …fields}`.
extension SpliceDescriptor: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        let tag = try c.decode(UInt8.self, forKey: "splice_descriptor_tag")
        let identifier = c.contains("identifier") ? try c.decodeIdentifier(forKey: "identifier") : Self.cueIdentifier
        guard identifier == Self.cueIdentifier, tag <= 0x03 else {
            self = .unknown(UnknownDescriptor(
                tag: tag, identifier: identifier, privateBytes: try c.decodeHexIfPresent(forKey: "private_bytes") ?? []))
            return
        }
        switch tag {
        case 0x00: self = .avail(try AvailDescriptor(from: decoder))
        case 0x01: self = .dtmf(try DTMFDescriptor(from: decoder))
        case 0x02: self = .segmentation(try SegmentationDescriptor(from: decoder))
        default: self = .time(try TimeDescriptor(from: decoder))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(tag, forKey: "splice_descriptor_tag")
        if identifier == Self.cueIdentifier, let name = Self.name(forTag: tag) {
            try c.encode(name, forKey: "splice_descriptor_name")
        }
        if let body = try? encodedBody() {
            try c.encode(body.count, forKey: "descriptor_length")
        }
        try c.encodeIdentifier(identifier, forKey: "identifier")
        switch self {
        case .avail(let descriptor): try descriptor.encode(to: encoder)
        case .dtmf(let descriptor): try descriptor.encode(to: encoder)
        case .segmentation(let descriptor): try descriptor.encode(to: encoder)
        case .time(let descriptor): try descriptor.encode(to: encoder)
        case .unknown(let descriptor): try c.encodeHex(descriptor.privateBytes, forKey: "private_bytes")
        }
    }
}
