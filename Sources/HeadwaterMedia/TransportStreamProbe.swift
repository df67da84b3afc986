/// Probes an MPEG-2 transport stream segment (ISO/IEC 13818-1; HLS-RULES B18): PAT → PMT →
/// elementary streams, PES reassembly, H.264/H.265 parameter sets and audio frame headers.
///
/// Only the first program is probed. Packets are found by their `0x47` sync byte at 188-byte
/// spacing, resynchronising after damage; a trailing partial packet is ignored, as are packets with
/// `transport_error_indicator` set.
public enum TransportStreamProbe {
    public static let packetSize = 188

    /// Probes `bytes`, a whole segment.
    ///
    /// - Throws: ``MediaProbeError`` when the bytes are not a transport stream, lack a PAT or PMT, or
    ///   an audio or video stream cannot be described (no SPS, no frame, no PTS, scrambled).
    public static func probe(_ bytes: [UInt8]) throws(MediaProbeError) -> SegmentProbe {
        let packets = packetOffsets(bytes)
        guard !packets.isEmpty else { throw .notTransportStream }
        let (pat, pmtPID, pmt) = try programTables(bytes, packets)

        var states: [ElementaryStreamState] = []
        var indexByPID: [UInt16: Int] = [:]
        for stream in pmt.streams where indexByPID[stream.pid] == nil && stream.pid != 0 && stream.pid != pmtPID {
            indexByPID[stream.pid] = states.count
            states.append(ElementaryStreamState(pid: stream.pid, streamType: stream.streamType, kind: stream.kind))
        }
        guard !states.isEmpty else { throw .noElementaryStreams }

        for offset in packets {
            guard let packet = TransportPacket(bytes, at: offset), let index = indexByPID[packet.pid] else { continue }
            if packet.scrambled {
                states[index].markScrambled()
            } else if let payload = packet.payload {
                states[index].receive(bytes[payload], unitStart: packet.unitStart)
            }
        }

        var streams: [ElementaryStream] = []
        var codecs: [String] = []
        var video: (state: ElementaryStreamState, info: VideoInfo)?
        var audio: (info: AudioInfo, scan: AudioFrameScan, pid: UInt16)?
        for index in states.indices {
            states[index].flush()
            let state = states[index]
            var codec: String?
            if state.isVideo {
                let info = try state.videoInfo()
                codec = info.codec
                if video == nil { video = (state, info) }
            } else if state.audioSyntax != nil {
                let scan = state.audioScan()
                let info = try state.audioInfo(scan)
                codec = info.codec
                if audio == nil { audio = (info, scan, state.pid) }
            }
            streams.append(ElementaryStream(pid: state.pid, streamType: state.streamType, codec: codec))
            if let codec, !codecs.contains(codec) { codecs.append(codec) }
        }

        var firstPTS: UInt64?
        var duration: Int64 = 0
        if let video {
            let timing = try video.state.videoTiming(frameRate: video.info.frameRate)
            firstPTS = timing.firstPTS
            duration = timing.microseconds
        } else if let audio {
            guard let timed = audio.scan.firstTimed else { throw .missingTimestamps(pid: audio.pid) }
            firstPTS = timed.pts
            duration = audio.scan.timedDurationMicroseconds
        }

        let startsWithPATAndPMT =
            packets.count >= 2
            && TransportPacket(bytes, at: packets[0])?.pid == 0
            && TransportPacket(bytes, at: packets[1])?.pid == pmtPID
        return SegmentProbe(
            codecs: codecs, streams: streams, video: video?.info, audio: audio?.info, firstPTS: firstPTS,
            durationMicroseconds: duration, startsWithIDR: video?.state.firstSliceIsIDR ?? false,
            startsWithPATAndPMT: startsWithPATAndPMT, programCount: pat.programs.count, byteCount: bytes.count)
    }

    /// Offsets of the complete packets. A packet starts with `0x47`; outside a run of packets, the
    /// next packet (if complete data follows) must also start with `0x47`.
    static func packetOffsets(_ bytes: [UInt8]) -> [Int] {
        let size = packetSize
        func isSynchronised(_ position: Int) -> Bool {
            bytes[position] == 0x47 && (position + size >= bytes.count || bytes[position + size] == 0x47)
        }
        var offsets: [Int] = []
        var position = 0
        while position + size <= bytes.count {
            let continuesRun = offsets.last == position - size && bytes[position] == 0x47
            if continuesRun || isSynchronised(position) {
                offsets.append(position)
                position += size
            } else {
                position += 1
            }
        }
        return offsets
    }

    /// The first valid PAT, then the first valid PMT of its first program (searched from the start,
    /// so a PMT sent before the PAT still counts).
    private static func programTables(
        _ bytes: [UInt8], _ packets: [Int]
    ) throws(MediaProbeError) -> (ProgramAssociationTable, UInt16, ProgramMapTable) {
        var pat: ProgramAssociationTable?
        var assembler = SectionAssembler()
        search: for offset in packets {
            guard let packet = TransportPacket(bytes, at: offset), packet.pid == 0, !packet.scrambled,
                let payload = packet.payload
            else { continue }
            for section in assembler.append(bytes[payload], unitStart: packet.unitStart) {
                if let table = ProgramAssociationTable(section: section) {
                    pat = table
                    break search
                }
            }
        }
        guard let pat else { throw .missingProgramAssociationTable }
        guard let program = pat.programs.first else { throw .noProgram }

        assembler = SectionAssembler()
        for offset in packets {
            guard let packet = TransportPacket(bytes, at: offset), packet.pid == program.pmtPID, !packet.scrambled,
                let payload = packet.payload
            else { continue }
            for section in assembler.append(bytes[payload], unitStart: packet.unitStart) {
                if let pmt = ProgramMapTable(section: section), pmt.programNumber == program.number {
                    return (pat, program.pmtPID, pmt)
                }
            }
        }
        throw .missingProgramMapTable(pid: program.pmtPID)
    }
}

/// The header of one 188-byte transport packet (ISO/IEC 13818-1 §2.4.3.2).
struct TransportPacket {
    var pid: UInt16
    var unitStart: Bool
    /// `transport_scrambling_control` ≠ 0.
    var scrambled: Bool
    /// Payload bytes in the segment, after any adaptation field; `nil` when there is none.
    var payload: Range<Int>?

    /// `nil` when the packet is incomplete or flagged with `transport_error_indicator`.
    init?(_ bytes: [UInt8], at offset: Int) {
        let end = offset + TransportStreamProbe.packetSize
        guard offset >= 0, end <= bytes.count, bytes[offset + 1] & 0x80 == 0 else { return nil }
        pid = UInt16(bytes[offset + 1] & 0x1F) << 8 | UInt16(bytes[offset + 2])
        unitStart = bytes[offset + 1] & 0x40 != 0
        scrambled = bytes[offset + 3] >> 6 != 0
        let control = (bytes[offset + 3] >> 4) & 3  // adaptation_field_control
        var start = offset + 4
        if control & 2 != 0 { start += 1 + Int(bytes[offset + 4]) }
        payload = control & 1 != 0 && start < end ? start..<end : nil
    }
}
