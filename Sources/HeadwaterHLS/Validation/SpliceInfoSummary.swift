/// Just enough of an SCTE-35 `splice_info_section()` (HLS-RULES I1, I2) to validate the
/// `SCTE35-CMD/OUT/IN` values of a DATERANGE without depending on the SCTE-35 module: the framing
/// (table_id, section_length) and, for an unencrypted `splice_insert()`, the cancel and
/// out-of-network flags and the break duration. The CRC is not checked here (the spec's own example
/// in §9.10 carries a zero CRC).
struct SpliceInfoSummary: Equatable {
    /// `splice_command_type`, when the section is not encrypted.
    var commandType: UInt8?
    /// The `splice_insert()` fields, when the command is one and is long enough to read.
    var spliceInsert: SpliceInsert?

    struct SpliceInsert: Equatable {
        var eventID: UInt32
        var isCancelled: Bool
        /// `nil` when cancelled (the flags are absent).
        var outOfNetwork: Bool?
        /// `break_duration.duration` in 90 kHz ticks, when `duration_flag` is set.
        var breakDuration: UInt64?
    }

    /// Why a value is not a splice_info_section, in one line.
    struct Malformed: Error, Equatable {
        var reason: String
    }

    static func inspect(_ bytes: [UInt8]) -> Result<SpliceInfoSummary, Malformed> {
        guard bytes.count >= 3 else {
            return .failure(Malformed(reason: "is \(bytes.count) bytes, too short for a splice_info_section"))
        }
        guard bytes[0] == 0xFC else {
            return .failure(Malformed(reason: "starts with table_id 0x\(hex(bytes[0])), not 0xFC"))
        }
        let sectionLength = Int(bytes[1] & 0x0F) << 8 | Int(bytes[2])
        // A section cut from an MPEG-TS packet may be followed by its 0xFF stuffing (at most one
        // packet's payload): the SCTE-35 decoder reads it, so it is not malformed here either.
        let after = bytes.dropFirst(min(bytes.count, sectionLength + 3))
        let isStuffing = !after.isEmpty && after.count <= 184 && after.allSatisfy { $0 == 0xFF }
        guard sectionLength + 3 == bytes.count || (sectionLength + 3 < bytes.count && isStuffing) else {
            return .failure(
                Malformed(
                    reason:
                        "has section_length \(sectionLength) (+3 = \(sectionLength + 3) bytes) but is \(bytes.count) bytes"
                ))
        }
        // table_id … splice_command_type (14 bytes), descriptor_loop_length (2), CRC_32 (4).
        guard bytes.count >= 20 else {
            return .failure(
                Malformed(reason: "is \(bytes.count) bytes, too short for a splice_info_section (at least 20)"))
        }
        var summary = SpliceInfoSummary()
        let encrypted = bytes[4] & 0x80 != 0
        guard !encrypted else { return .success(summary) }
        summary.commandType = bytes[13]
        if bytes[13] == 0x05 { summary.spliceInsert = readSpliceInsert(bytes[14...]) }
        return .success(summary)
    }

    private static func readSpliceInsert(_ b: ArraySlice<UInt8>) -> SpliceInsert? {
        var i = b.startIndex
        func byte() -> UInt8? {
            guard i < b.endIndex else { return nil }
            defer { i += 1 }
            return b[i]
        }
        func skipSpliceTime() -> Bool {
            guard let first = byte() else { return false }
            if first & 0x80 != 0 {
                for _ in 0..<4 { guard byte() != nil else { return false } }
            }
            return true
        }
        guard let e0 = byte(), let e1 = byte(), let e2 = byte(), let e3 = byte(), let cancel = byte() else {
            return nil
        }
        let eventID = UInt32(e0) << 24 | UInt32(e1) << 16 | UInt32(e2) << 8 | UInt32(e3)
        var insert = SpliceInsert(
            eventID: eventID, isCancelled: cancel & 0x80 != 0, outOfNetwork: nil, breakDuration: nil)
        guard !insert.isCancelled else { return insert }
        guard let flags = byte() else { return nil }
        insert.outOfNetwork = flags & 0x80 != 0
        let programSplice = flags & 0x40 != 0
        let durationFlag = flags & 0x20 != 0
        let immediate = flags & 0x10 != 0
        if programSplice {
            if !immediate, !skipSpliceTime() { return insert }
        } else {
            guard let count = byte() else { return insert }
            for _ in 0..<count {
                guard byte() != nil else { return insert }
                if !immediate, !skipSpliceTime() { return insert }
            }
        }
        if durationFlag {
            guard let d0 = byte(), let d1 = byte(), let d2 = byte(), let d3 = byte(), let d4 = byte() else {
                return insert
            }
            insert.breakDuration =
                UInt64(d0 & 0x01) << 32 | UInt64(d1) << 24 | UInt64(d2) << 16 | UInt64(d3) << 8 | UInt64(d4)
        }
        return insert
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
