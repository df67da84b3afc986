@testable import HeadwaterMedia
import Testing

/// The bit-level building blocks, on hand-made inputs.
@Suite("Bitstream parsing")
struct BitstreamTests {
    @Test func expGolomb() throws {
        // ue: 1 → 0, 010 → 1, 011 → 2, 00100 → 3; se: 00101 → −2 (code 4), 00110 → 3 (code 5)
        var reader = RBSPReader([0b1010_0110, 0b0100_0010, 0b1001_1000])
        #expect(try reader.ue("a") == 0)
        #expect(try reader.ue("b") == 1)
        #expect(try reader.ue("c") == 2)
        #expect(try reader.ue("d") == 3)
        #expect(try reader.se("e") == -2)
        #expect(try reader.se("f") == 3)
        #expect(throws: BitstreamError.self) { try reader.bits(8, "g") }
        // 32 leading zeros is beyond what either standard allows.
        var long = RBSPReader([0, 0, 0, 0, 0xFF])
        #expect(throws: BitstreamError.self) { try long.ue("h") }
    }

    @Test func emulationPreventionAndNALUnits() {
        let stream: [UInt8] = [0, 0, 0, 1, 0x67, 0, 0, 3, 1, 0xAA, 0, 0, 1, 0x68, 0xBB, 0, 0, 0, 0, 1, 0x65, 0, 0, 3]
        var units = NALUnitIterator(stream, range: 0..<stream.count)
        var found: [[UInt8]] = []
        while let unit = units.next() { found.append(Array(stream[unit])) }
        #expect(found == [[0x67, 0, 0, 3, 1, 0xAA], [0x68, 0xBB], [0x65, 0, 0, 3]])
        #expect(rbsp(found[0], 0..<found[0].count) == [0x67, 0, 0, 1, 0xAA])
        #expect(rbsp([0, 0, 3, 0, 0, 3, 3], 0..<7) == [0, 0, 0, 0, 3])
        var none = NALUnitIterator([1, 2, 3], range: 0..<10)
        #expect(none.next() == nil)
    }

    @Test func crcOfAProgramAssociationSection() {
        // The PAT ffmpeg writes: program 1 → PMT PID 0x1000, CRC 0x2AB104B2.
        let pat: [UInt8] = [0x00, 0xB0, 0x0D, 0x00, 0x01, 0xC1, 0x00, 0x00, 0x00, 0x01, 0xF0, 0x00, 0x2A, 0xB1, 0x04, 0xB2]
        #expect(crc32MPEG2(pat) == 0)
        #expect(ProgramAssociationTable(section: pat[...])?.programs == [.init(number: 1, pmtPID: 0x1000)])
        var damaged = pat
        damaged[9] = 2
        #expect(ProgramAssociationTable(section: damaged[...]) == nil)
    }

    @Test func ptsArithmeticWraps() {
        #expect(Timestamps.distance(from: (1 << 33) - 10, to: 5) == 15)
        #expect(Timestamps.distance(from: 5, to: (1 << 33) - 10) == -15)
        #expect(Timestamps.adding(-15, to: 5) == (1 << 33) - 10)
        #expect(Timestamps.microseconds(ticks: 90_000) == 1_000_000)
        #expect(Timestamps.microseconds(ticks: 1) == 11)  // 11.1 µs
        #expect(Timestamps.microseconds(ticks: 87_087, plusSeconds: 1001, over: 30000) == 1_001_000)
        #expect(Timestamps.microseconds(ticks: -5) == 0)
    }

    /// An SPS written bit by bit: Baseline, pic_order_cnt_type 1, cropping, and a VUI with an
    /// extended SAR, colour description and chroma location before the timing.
    @Test func handWrittenSequenceParameterSet() throws {
        var w = BitWriter()
        w.bits(66, 8)  // profile_idc
        w.bits(0xC0, 8)  // constraint_set0/1
        w.bits(30, 8)  // level_idc
        w.ue(0)  // seq_parameter_set_id
        w.ue(0)  // log2_max_frame_num_minus4
        w.ue(1)  // pic_order_cnt_type
        w.bits(0, 1)  // delta_pic_order_always_zero_flag
        w.se(-1)  // offset_for_non_ref_pic
        w.se(2)  // offset_for_top_to_bottom_field
        w.ue(2)  // num_ref_frames_in_pic_order_cnt_cycle
        w.se(1)
        w.se(-3)
        w.ue(1)  // max_num_ref_frames
        w.bits(0, 1)  // gaps_in_frame_num_value_allowed_flag
        w.ue(119)  // pic_width_in_mbs_minus1 → 1920
        w.ue(67)  // pic_height_in_map_units_minus1 → 1088
        w.bits(1, 1)  // frame_mbs_only_flag
        w.bits(1, 1)  // direct_8x8_inference_flag
        w.bits(1, 1)  // frame_cropping_flag
        w.ue(0)
        w.ue(0)
        w.ue(0)
        w.ue(4)  // bottom: 4 × 2 = 8 lines → 1080
        w.bits(1, 1)  // vui_parameters_present_flag
        w.bits(1, 1)  // aspect_ratio_info_present_flag
        w.bits(255, 8)  // Extended_SAR
        w.bits(4, 16)
        w.bits(3, 16)
        w.bits(0, 1)  // overscan_info_present_flag
        w.bits(1, 1)  // video_signal_type_present_flag
        w.bits(5, 3)
        w.bits(0, 1)
        w.bits(1, 1)  // colour_description_present_flag
        w.bits(0x010101, 24)
        w.bits(1, 1)  // chroma_loc_info_present_flag
        w.ue(1)
        w.ue(1)
        w.bits(1, 1)  // timing_info_present_flag
        w.bits(1001, 32)
        w.bits(120_000, 32)
        w.bits(1, 1)  // fixed_frame_rate_flag
        w.bits(1, 1)  // rbsp_stop_one_bit
        let payload = w.bytes

        let sps = try H264SequenceParameterSet(rbsp: payload)
        #expect(sps.codec == "avc1.42c01e")
        #expect(sps.width == 1920)
        #expect(sps.height == 1080)
        #expect(sps.timing == VUITiming(numUnitsInTick: 1001, timeScale: 120_000))  // 59.94 fps

        // The same SPS inside an Annex B stream with emulation prevention bytes where needed.
        var escaped: [UInt8] = [0x67]
        var zeros = 0
        for byte in payload {
            if zeros >= 2, byte <= 3 {
                escaped.append(3)
                zeros = 0
            }
            escaped.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        let stream: [UInt8] = [0, 0, 0, 1] + escaped + [0, 0, 1, 0x65, 0x88]
        var units = NALUnitIterator(stream, range: 0..<stream.count)
        let first = units.next()
        let unit = try #require(first)
        #expect(try H264SequenceParameterSet(rbsp: rbsp(stream, (unit.lowerBound + 1)..<unit.upperBound)) == sps)

        // Every truncation fails cleanly or loses only the VUI timing.
        for length in 0..<payload.count {
            if let partial = try? H264SequenceParameterSet(rbsp: Array(payload[0..<length])) {
                #expect(partial.width == 1920 && partial.height == 1080)
            }
        }
    }
}

/// MSB-first bit writer with Exp-Golomb codes, for building parameter sets in tests.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var used = 8

    mutating func bits(_ value: UInt64, _ count: Int) {
        for shift in stride(from: count - 1, through: 0, by: -1) {
            if used == 8 {
                bytes.append(0)
                used = 0
            }
            if (value >> UInt64(shift)) & 1 == 1 { bytes[bytes.count - 1] |= 0x80 >> UInt8(used) }
            used += 1
        }
    }

    mutating func ue(_ value: UInt64) {
        let code = value + 1
        let length = 64 - code.leadingZeroBitCount
        bits(0, length - 1)
        bits(code, length)
    }

    mutating func se(_ value: Int64) {
        ue(value > 0 ? UInt64(2 * value - 1) : UInt64(-2 * value))
    }
}
