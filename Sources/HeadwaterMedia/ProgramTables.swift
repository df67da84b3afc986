/// CRC-32/MPEG-2 (polynomial 0x04C11DB7, initial value 0xFFFFFFFF, no reflection, no final XOR),
/// which protects PSI sections (ISO/IEC 13818-1 Annex A). Over a section including its CRC_32 the
/// result is 0.
func crc32MPEG2<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc = (crc << 8) ^ crcTable[Int((crc >> 24) ^ UInt32(byte))]
    }
    return crc
}

private let crcTable: [UInt32] = (0..<256).map { index in
    var value = UInt32(index) << 24
    for _ in 0..<8 { value = value & 0x8000_0000 != 0 ? (value << 1) ^ 0x04C1_1DB7 : value << 1 }
    return value
}

/// `program_association_section()` (ISO/IEC 13818-1 §2.4.4.3): program number → PMT PID.
struct ProgramAssociationTable: Hashable, Sendable {
    struct Program: Hashable, Sendable {
        var number: UInt16
        var pmtPID: UInt16
    }

    /// Programs in table order, without the network PID entry (program_number 0).
    var programs: [Program]

    /// Parses one complete section (from `table_id` through `CRC_32`); `nil` when it is not a valid,
    /// current PAT.
    init?(section: ArraySlice<UInt8>) {
        let s = Array(section)
        guard s.count >= 12, s[0] == 0x00, crc32MPEG2(s) == 0, s[5] & 1 == 1 else { return nil }
        programs = []
        var offset = 8
        while offset + 4 <= s.count - 4 {
            let number = UInt16(s[offset]) << 8 | UInt16(s[offset + 1])
            let pid = UInt16(s[offset + 2] & 0x1F) << 8 | UInt16(s[offset + 3])
            if number != 0 { programs.append(Program(number: number, pmtPID: pid)) }
            offset += 4
        }
    }
}

/// `TS_program_map_section()` (ISO/IEC 13818-1 §2.4.4.8): the elementary streams of one program.
struct ProgramMapTable: Hashable, Sendable {
    struct Stream: Hashable, Sendable {
        var streamType: UInt8
        var pid: UInt16
        var kind: StreamKind
    }

    var programNumber: UInt16
    var streams: [Stream]

    /// Parses one complete section; `nil` when it is not a valid, current PMT.
    init?(section: ArraySlice<UInt8>) {
        let s = Array(section)
        guard s.count >= 16, s[0] == 0x02, crc32MPEG2(s) == 0, s[5] & 1 == 1 else { return nil }
        programNumber = UInt16(s[3]) << 8 | UInt16(s[4])
        let end = s.count - 4
        let programInfoLength = Int(s[10] & 0x0F) << 8 | Int(s[11])
        var offset = 12 + programInfoLength
        streams = []
        while offset + 5 <= end {
            let type = s[offset]
            let pid = UInt16(s[offset + 1] & 0x1F) << 8 | UInt16(s[offset + 2])
            let infoLength = Int(s[offset + 3] & 0x0F) << 8 | Int(s[offset + 4])
            let descriptors = (offset + 5)..<min(offset + 5 + infoLength, end)
            streams.append(Stream(streamType: type, pid: pid, kind: StreamKind(streamType: type, descriptors: s[descriptors])))
            offset += 5 + infoLength
        }
    }
}

/// How the prober treats an elementary stream, from its `stream_type` and descriptors.
enum StreamKind: Hashable, Sendable {
    case h264
    case hevc
    case audio(AudioSyntax)
    /// Streams that carry no audio or video (ID3 metadata, SCTE-35) or that are not recognised.
    case other

    init(streamType: UInt8, descriptors: ArraySlice<UInt8>) {
        switch streamType {
        case 0x1B, 0xDB: self = .h264  // 0xDB: SAMPLE-AES H.264 (NAL headers and SPS stay clear)
        case 0x24: self = .hevc
        case 0x0F, 0xCF: self = .audio(.adts)  // 0xCF: SAMPLE-AES AAC (ADTS headers stay clear)
        case 0x03, 0x04: self = .audio(.mpegAudio)
        case 0x81, 0x87, 0xC1, 0xC2: self = .audio(.ac3)  // ATSC AC-3, E-AC-3 and their SAMPLE-AES forms
        case 0x06: self = Self.isDolbyAudio(descriptors) ? .audio(.ac3) : .other
        default: self = .other
        }
    }

    /// H.264 or H.265: a stream of access units with key frames.
    var isVideo: Bool { self == .h264 || self == .hevc }

    /// DVB AC-3 (0x6A) or enhanced AC-3 (0x7A) descriptors, or an `AC-3`/`EAC3` registration descriptor.
    private static func isDolbyAudio(_ descriptors: ArraySlice<UInt8>) -> Bool {
        var offset = descriptors.startIndex
        while offset + 2 <= descriptors.endIndex {
            let tag = descriptors[offset]
            let length = Int(descriptors[offset + 1])
            let body = (offset + 2)..<min(offset + 2 + length, descriptors.endIndex)
            if tag == 0x6A || tag == 0x7A { return true }
            if tag == 0x05, body.count >= 4 {
                let identifier = Array(descriptors[body.lowerBound..<(body.lowerBound + 4)])
                if identifier == Array("AC-3".utf8) || identifier == Array("EAC3".utf8) { return true }
            }
            offset += 2 + length
        }
        return false
    }
}

/// Reassembles PSI sections carried on one PID (ISO/IEC 13818-1 §2.4.4.1–2.4.4.2: pointer_field,
/// sections spanning packets, several sections per packet, 0xFF stuffing).
struct SectionAssembler {
    private var buffer: [UInt8] = []
    private var active = false

    /// Feeds one packet payload and returns the complete sections it finished.
    mutating func append(_ payload: ArraySlice<UInt8>, unitStart: Bool) -> [ArraySlice<UInt8>] {
        var sections: [ArraySlice<UInt8>] = []
        var payload = payload
        if unitStart {
            guard let pointer = payload.first else { return sections }
            payload = payload.dropFirst()
            let pointerEnd = min(payload.startIndex + Int(pointer), payload.endIndex)
            if active {
                buffer += payload[payload.startIndex..<pointerEnd]
                extract(into: &sections)
            }
            buffer = Array(payload[pointerEnd...])
            active = true
        } else if active {
            buffer += payload
        }
        extract(into: &sections)
        return sections
    }

    private mutating func extract(into sections: inout [ArraySlice<UInt8>]) {
        while active {
            guard let tableID = buffer.first, tableID != 0xFF else {
                // Stuffing: nothing more in this unit.
                if buffer.first == 0xFF { reset() }
                return
            }
            guard buffer.count >= 3 else { return }
            let length = 3 + (Int(buffer[1] & 0x0F) << 8 | Int(buffer[2]))
            guard length <= 1024 else {
                reset()  // longer than any PSI section may be (§2.4.4.11): garbage
                return
            }
            guard buffer.count >= length else { return }
            sections.append(buffer[0..<length])
            buffer.removeFirst(length)
        }
    }

    private mutating func reset() {
        buffer = []
        active = false
    }
}
