import Foundation
@testable import HeadwaterMedia
import Testing

/// The I-frame index on ffmpeg's fixtures, on every demo, ad and slate segment under `Public/`, and
/// on hand-made segments whose key frames, interleaving and timing are known exactly.
@Suite("I-frame index")
struct IFrameIndexTests {
    static let videoFixtures = [
        "main_640x360_25fps.ts", "baseline_416x234.ts", "high_854x480_cqm.ts", "main_29.97fps.ts",
        "high444_161x91.ts", "interlaced_352x200.ts", "hevc_320x180.ts",
    ]
    static let audioFixtures = ["audio_only_aac.ts", "audio_ac3.ts", "audio_eac3.ts", "audio_mp3.ts"]

    // MARK: Real segments

    @Test(arguments: videoFixtures)
    func fixture(_ file: String) throws {
        let bytes = try Fixture.bytes(file)
        let probe = try TransportStreamProbe.probe(bytes)
        let index = try #require(IFrameIndex(transportStream: bytes, probe: probe))
        try Self.checkInvariants(index, bytes, probe, file)
        #expect(index.entries.first?.pts == probe.firstPTS, "\(file) starts with its key frame")
        #expect(index.video == probe.video)
        // ffmpeg writes SDT, PAT, PMT, then the first video packet.
        #expect(index.initializationSection == 0..<564, "\(file)")
        #expect(index.entries.first?.range.lowerBound == 564, "\(file)")
        let kind: KeyFrameKind = file.hasPrefix("hevc") ? .hevcIRAP(nalUnitType: 20) : .h264IDR
        #expect(index.entries.allSatisfy { $0.kind == kind }, "\(file): \(index.entries.map(\.kind))")
    }

    @Test(arguments: audioFixtures)
    func audioHasNoIndex(_ file: String) throws {
        #expect(try IFrameIndex.index(transportStream: try Fixture.bytes(file)) == nil)
    }

    /// Every video segment of the demo channel, its ads and slate; the alternate audio renditions
    /// have none.
    @Test func publicSegments() throws {
        let files = try Self.publicSegments()
        #expect(files.count >= 80, "found \(files.count) segments under Public/")
        var indexed = 0
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            let probe = try TransportStreamProbe.probe(bytes)
            let name = file.path.replacingOccurrences(of: Self.publicDirectory.path + "/", with: "")
            guard let index = IFrameIndex(transportStream: bytes, probe: probe) else {
                #expect(name.contains("/audio-alt/"), "\(name): no index but not an audio rendition")
                continue
            }
            indexed += 1
            try Self.checkInvariants(index, bytes, probe, name)
            // generate.sh: one IDR per 2 s segment, ffmpeg's HLS muxer writes PAT, PMT, then it.
            #expect(index.entries.count == 1, "\(name): \(index.entries.count) key frames")
            #expect(index.initializationSection == 0..<376, "\(name)")
            #expect(index.entries.first?.range.lowerBound == 376, "\(name)")
            #expect(index.entries.first?.kind == .h264IDR, "\(name)")
            #expect(index.leadingMicroseconds == 0, "\(name)")
        }
        #expect(indexed >= 60)
    }

    /// Every prefix of a segment that still probes indexes without trapping: the entries are the
    /// whole segment's, a key frame cut short ending with the prefix.
    @Test(arguments: ["main_640x360_25fps.ts", "main_29.97fps.ts", "hevc_320x180.ts"])
    func truncatedSegments(_ file: String) throws {
        let bytes = try Fixture.bytes(file)
        let whole = try #require(try IFrameIndex.index(transportStream: bytes))
        var indexed = 0
        for end in stride(from: 0, through: bytes.count, by: TransportStreamProbe.packetSize) {
            let prefix = Array(bytes[0..<end])
            guard let probe = try? TransportStreamProbe.probe(prefix),
                let index = IFrameIndex(transportStream: prefix, probe: probe)
            else { continue }
            indexed += 1
            #expect(index.entries.count <= whole.entries.count, "\(file) cut at \(end)")
            for (entry, full) in zip(index.entries, whole.entries) {
                #expect(entry.range.lowerBound == full.range.lowerBound && entry.pts == full.pts, "\(file) cut at \(end)")
                let expectedEnd = full.range.upperBound <= end ? full.range.upperBound : end
                #expect(entry.range.upperBound <= expectedEnd, "\(file) cut at \(end): \(entry.range), whole \(full.range)")
                if full.range.upperBound <= end { #expect(entry.range == full.range, "\(file) cut at \(end)") }
                #expect(entry.durationMicroseconds >= 0, "\(file) cut at \(end)")
            }
            #expect(index.leadingMicroseconds >= 0)
        }
        #expect(indexed > bytes.count / TransportStreamProbe.packetSize / 2, "\(file): \(indexed) prefixes indexed")
    }

    // MARK: Hand-made segments

    /// PAT, PMT, IDR (a metadata packet inside it), P, the PAT and PMT again, IDR, a metadata packet,
    /// P: two entries, each exactly its PES, neither holding the tables.
    @Test func twoKeyFrames() throws {
        var ts = SyntheticSegment()
        ts.tables()
        let idr0 = ts.accessUnit(.idr, pts: 126_000, randomAccess: true)
        ts.append(idr0[0])
        ts.metadata()  // interleaved: inside the first key frame's span
        ts.append(idr0[1...])
        ts.add(.p, pts: 129_600, randomAccess: true)  // the hint lies here
        let repeated = ts.bytes.count
        ts.tables()  // repeated right before the key frame, as ffmpeg does
        let second = ts.bytes.count
        ts.add(.idr, pts: 133_200, randomAccess: false)
        let secondEnd = ts.bytes.count
        ts.metadata()  // after the key frame's last packet: outside its range
        ts.add(.p, pts: 136_800, randomAccess: false)

        let probe = try TransportStreamProbe.probe(ts.bytes)
        #expect(probe.durationMicroseconds == 160_000)
        let index = try #require(IFrameIndex(transportStream: ts.bytes, probe: probe))
        try Self.checkInvariants(index, ts.bytes, probe, "synthetic")
        #expect(index.initializationSection == 0..<376)
        #expect(index.entries.map(\.range) == [376..<(376 + 188 * (idr0.count + 1)), second..<secondEnd])
        #expect(second == repeated + 376)
        #expect(index.entries.map(\.pts) == [126_000, 133_200])
        #expect(index.entries.map(\.durationMicroseconds) == [80_000, 80_000])
        #expect(index.entries.map(\.randomAccessIndicator) == [true, false])
        #expect(index.entries.map(\.kind) == [.h264IDR, .h264IDR])
        #expect(index.video.codec == "avc1.42001e" && index.video.resolution == "64x64")
    }

    /// A segment that starts with a P frame: the time before its key frame is left to the previous
    /// segment's last entry; a segment without a key frame has no entries.
    @Test func segmentNotStartingWithAKeyFrame() throws {
        var ts = SyntheticSegment()
        ts.tables()
        ts.add(.sps, pts: 126_000, randomAccess: false)
        ts.add(.p, pts: 129_600, randomAccess: false)
        let noKeyFrame = ts.bytes
        ts.add(.idr, pts: 133_200, randomAccess: true)
        ts.add(.p, pts: 136_800, randomAccess: false)

        let index = try #require(try IFrameIndex.index(transportStream: ts.bytes))
        #expect(index.entries.map(\.pts) == [133_200])
        #expect(index.entries.map(\.durationMicroseconds) == [80_000])
        #expect(index.leadingMicroseconds == 80_000)

        let none = try #require(try IFrameIndex.index(transportStream: noKeyFrame))
        #expect(none.entries.isEmpty)
        #expect(none.leadingMicroseconds == 80_000)
        #expect(none.initializationSection == 0..<376)
    }

    /// An open GOP: an intra picture with a recovery point SEI (`recovery_frame_cnt` 0) is a key
    /// frame; with a later recovery point, or on a P picture, it is not.
    @Test func openGOPRecoveryPoints() throws {
        var ts = SyntheticSegment()
        ts.tables()
        ts.add(.idr, pts: 126_000, randomAccess: true)
        ts.add(.p, pts: 129_600, randomAccess: false)
        ts.add(.recoveryPoint(frames: 0, intra: true), pts: 133_200, randomAccess: true)
        ts.add(.recoveryPoint(frames: 3, intra: true), pts: 136_800, randomAccess: true)
        ts.add(.recoveryPoint(frames: 0, intra: false), pts: 140_400, randomAccess: true)
        let index = try #require(try IFrameIndex.index(transportStream: ts.bytes))
        #expect(index.entries.map(\.kind) == [.h264IDR, .h264RecoveryPoint])
        #expect(index.entries.map(\.durationMicroseconds) == [80_000, 120_000])
    }

    @Test func hevcRandomAccessPictures() {
        func kind(_ units: [[UInt8]]) -> KeyFrameKind? {
            let bytes = units.flatMap { [UInt8]([0, 0, 0, 1]) + $0 }
            return KeyFrameKind(accessUnit: bytes, range: 0..<bytes.count, format: .hevc)
        }
        let aud: [UInt8] = [0x46, 0x01, 0x50]  // type 35
        let vps: [UInt8] = [0x40, 0x01, 0x0C]  // type 32
        #expect(kind([aud, vps, [0x2A, 0x01, 0xAF]]) == .hevcIRAP(nalUnitType: 21))  // CRA
        #expect(kind([aud, [0x26, 0x01, 0xAF]]) == .hevcIRAP(nalUnitType: 19))  // IDR_W_RADL
        #expect(kind([aud, [0x20, 0x01, 0xAF]]) == .hevcIRAP(nalUnitType: 16))  // BLA_W_LP
        #expect(kind([aud, [0x02, 0x01, 0xAF]]) == nil)  // TRAIL_R
        #expect(kind([aud, [0x30, 0x01, 0xAF]]) == nil)  // 24: reserved, not IRAP
        // An IDR in layer 1 does not make the base layer's trailing picture a key frame.
        #expect(kind([aud, [0x26, 0x09, 0xAF], [0x02, 0x01, 0xAF]]) == nil)
        #expect(kind([aud, vps]) == nil)
    }

    // MARK: Bit rates

    @Test func bitRatesFollowTheSegmentBitRateDefinition() {
        // EXTINF 2 s, 2 s, 1 s; target duration 2: runs of 1 to 3.5 s qualify.
        typealias Entries = [(byteCount: Int, durationMicroseconds: Int64)]
        let entries: Entries = [(20_000, 2_000_000), (30_000, 2_000_000), (10_000, 1_000_000)]
        let rates = IFrameIndex.BitRates(entries: entries, targetDuration: 2)
        #expect(rates.peak == 120_000)  // the second entry alone
        #expect(rates.average == 96_000)  // 60 000 B × 8 / 5 s
        #expect(rates.largestEntry == 120_000)

        // Short entries count only in runs of at least 0.5 × target duration: the peak is the
        // run's, below the largest single entry.
        let shortEntries: Entries = [(5_000, 400_000), (1_000, 400_000), (1_000, 400_000)]
        let short = IFrameIndex.BitRates(entries: shortEntries, targetDuration: 2)
        #expect(short.peak == 46_667)  // 7 000 B × 8 / 1.2 s, rounded up
        #expect(short.largestEntry == 100_000)
        #expect(short.average == 46_667)

        let none = IFrameIndex.BitRates(entries: [(5_000, 0)] as Entries, targetDuration: 2)
        #expect(none.peak == nil && none.average == nil && none.largestEntry == nil)
    }

    /// The demo's I-frame bit rates next to its media bit rates (printed for the record). An I-frame
    /// range is part of its segment and lasts as long (one key frame per segment), so its average
    /// cannot exceed the segment's.
    @Test func demoBitRates() throws {
        let master = try String(contentsOf: Self.publicDirectory.appendingPathComponent("demo/master.m3u8"), encoding: .utf8)
        for rendition in ["v0", "v1", "v2"] {
            var indexes: [IFrameIndex] = []
            var media = BitrateMeter(targetDuration: 2)
            for segment in 0..<10 {
                let url = Self.publicDirectory.appendingPathComponent("demo/\(rendition)/seg-0000\(segment).ts")
                let bytes = [UInt8](try Data(contentsOf: url))
                let probe = try TransportStreamProbe.probe(bytes)
                media.add(probe)
                indexes.append(try #require(IFrameIndex(transportStream: bytes, probe: probe)))
            }
            let iFrames = IFrameIndex.BitRates(indexes: indexes, targetDuration: 2)
            let declared = try #require(Self.declaredBandwidth(master, uri: "\(rendition)/index.m3u8"))
            let peak = try #require(iFrames.peak)
            let average = try #require(iFrames.average)
            let largest = try #require(iFrames.largestEntry)
            let mediaAverage = try #require(media.averageBitRate)
            #expect(average <= mediaAverage, "\(rendition)")
            #expect(peak <= largest, "\(rendition)")
            #expect(average <= declared.average && peak <= declared.peak, "\(rendition)")
            print(
                "I-frame bit rates \(rendition) \(indexes[0].video.resolution): peak \(peak), average \(average)"
                    + " (largest entry \(largest)); media peak \(media.peakBitRate ?? 0),"
                    + " average \(mediaAverage); declared BANDWIDTH \(declared.peak), AVERAGE-BANDWIDTH \(declared.average)")
        }
    }

    // MARK: Helpers

    static let publicDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Public")

    /// Every `.ts` under `Public/`, sorted.
    static func publicSegments() throws -> [URL] {
        let enumerator = try #require(FileManager.default.enumerator(at: publicDirectory, includingPropertiesForKeys: nil))
        return enumerator.compactMap { $0 as? URL }.filter { $0.pathExtension == "ts" }.sorted { $0.path < $1.path }
    }

    /// BANDWIDTH and AVERAGE-BANDWIDTH of the `EXT-X-STREAM-INF` whose URI is `uri`.
    static func declaredBandwidth(_ master: String, uri: String) -> (peak: Int, average: Int)? {
        let lines = master.split(separator: "\n").map(String.init)
        guard let at = lines.firstIndex(of: uri), at > 0 else { return nil }
        var attributes: [String: Int] = [:]
        for pair in lines[at - 1].split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Int(parts[1]) {
                attributes[String(parts[0].split(separator: ":").last ?? parts[0])] = value
            }
        }
        guard let peak = attributes["BANDWIDTH"], let average = attributes["AVERAGE-BANDWIDTH"] else { return nil }
        return (peak, average)
    }

    /// What every index must satisfy, read back from the bytes themselves.
    static func checkInvariants(_ index: IFrameIndex, _ bytes: [UInt8], _ probe: SegmentProbe, _ name: String) throws {
        let size = TransportStreamProbe.packetSize
        #expect(!index.entries.isEmpty, "\(name): no key frame")
        let tables = try #require(index.initializationSection, "\(name): no PAT and PMT")
        #expect(tables.lowerBound == 0 && tables.upperBound % size == 0, "\(name)")
        var previousEnd = tables.upperBound
        for entry in index.entries {
            let range = entry.range
            #expect(range.lowerBound % size == 0 && range.upperBound % size == 0, "\(name): \(range) not packet-aligned")
            #expect(!range.isEmpty && range.upperBound <= bytes.count, "\(name): \(range) outside \(bytes.count) bytes")
            #expect(range.lowerBound >= previousEnd, "\(name): \(range) overlaps what precedes it (\(previousEnd))")
            previousEnd = range.upperBound
            #expect(entry.durationMicroseconds > 0, "\(name)")

            // Exactly one PES of the video PID starts in the range, at its first packet, with the
            // entry's PTS; the video PID's next packet after the range starts the next PES.
            let videoPackets = stride(from: range.lowerBound, to: range.upperBound, by: size).filter {
                pid(bytes, $0) == index.videoPID
            }
            #expect(videoPackets.first == range.lowerBound, "\(name): \(range) does not start with the video PID")
            #expect(videoPackets.last == range.upperBound - size, "\(name): \(range) does not end with the video PID")
            #expect(videoPackets.filter { unitStart(bytes, $0) } == [range.lowerBound], "\(name): \(range)")
            let next = stride(from: range.upperBound, to: bytes.count, by: size).first { pid(bytes, $0) == index.videoPID }
            #expect(next.map { unitStart(bytes, $0) } ?? true, "\(name): the PES goes on after \(range)")
            let header = PESHeader(Array(bytes[(range.lowerBound + payloadStart(bytes, range.lowerBound))..<range.upperBound]))
            #expect(header?.pts == entry.pts, "\(name)")
        }
        // EXTINFs add up to the segment's duration, less what precedes the first key frame.
        let total = index.entries.reduce(0) { $0 + $1.durationMicroseconds }
        #expect(total + index.leadingMicroseconds == probe.durationMicroseconds, "\(name)")
        let frame = Int64(1_000_000 / (probe.video?.frameRate?.framesPerSecond ?? 25))
        #expect(index.leadingMicroseconds < frame, "\(name): \(total) µs of \(probe.durationMicroseconds)")
    }

    static func pid(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(bytes[offset + 1] & 0x1F) << 8 | UInt16(bytes[offset + 2])
    }

    static func unitStart(_ bytes: [UInt8], _ offset: Int) -> Bool { bytes[offset + 1] & 0x40 != 0 }

    static func payloadStart(_ bytes: [UInt8], _ offset: Int) -> Int {
        bytes[offset + 3] & 0x20 != 0 ? 5 + Int(bytes[offset + 4]) : 4
    }
}

/// A transport stream written packet by packet: PAT and PMT (program 1, PMT on PID 0x1000, H.264 on
/// 0x100, ID3 metadata on 0x102), H.264 access units with a hand-written SPS (Baseline 3.0, 64×64),
/// and metadata packets to interleave.
struct SyntheticSegment {
    static let videoPID: UInt16 = 0x100
    static let metadataPID: UInt16 = 0x102
    static let pmtPID: UInt16 = 0x1000

    enum Picture {
        /// AUD, SPS, PPS, IDR slice.
        case idr
        /// AUD, P slice.
        case p
        /// AUD, SPS, PPS, P slice: parameter sets but no key frame.
        case sps
        /// AUD, recovery point SEI, then an I slice (`intra`) or a P slice.
        case recoveryPoint(frames: UInt64, intra: Bool)
    }

    private(set) var bytes: [UInt8] = []
    private var continuity: [UInt16: UInt8] = [:]

    mutating func append(_ packets: some Sequence<[UInt8]>) {
        for packet in packets { bytes += packet }
    }

    mutating func append(_ packet: [UInt8]) { bytes += packet }

    /// Appends the packets of one access unit.
    mutating func add(_ picture: Picture, pts: UInt64, randomAccess: Bool) {
        let packets = accessUnit(picture, pts: pts, randomAccess: randomAccess)
        append(packets)
    }

    /// The PAT, then the PMT.
    mutating func tables() {
        let pat: [UInt8] = [
            0x00, 0xB0, 0x0D, 0x00, 0x01, 0xC1, 0x00, 0x00, 0x00, 0x01, 0xE0 | UInt8(Self.pmtPID >> 8), UInt8(Self.pmtPID & 0xFF),
        ]
        let patPacket = section(pid: 0, pat)
        append(patPacket)
        var pmt: [UInt8] = [0x02, 0xB0, 0x00, 0x00, 0x01, 0xC1, 0x00, 0x00, 0xE1, 0x00, 0xF0, 0x00]
        for (type, pid) in [(UInt8(0x1B), Self.videoPID), (0x15, Self.metadataPID)] {
            pmt += [type, 0xE0 | UInt8(pid >> 8), UInt8(pid & 0xFF), 0xF0, 0x00]
        }
        pmt[2] = UInt8(pmt.count - 3 + 4)
        let pmtPacket = section(pid: Self.pmtPID, pmt)
        append(pmtPacket)
    }

    /// One packet of the metadata PID (a PES continuation: payload only).
    mutating func metadata() {
        let payload = [UInt8](repeating: 0xAB, count: 184)
        let metadataPacket = packet(pid: Self.metadataPID, unitStart: false, randomAccess: false, payload: payload)
        append(metadataPacket)
    }

    /// The packets of one access unit's PES packet (not appended).
    mutating func accessUnit(_ picture: Picture, pts: UInt64, randomAccess: Bool) -> [[UInt8]] {
        let slice = [UInt8](repeating: 0xAB, count: 500)  // enough for several packets, no start code
        var units: [[UInt8]] = [[0x09, 0xF0]]
        switch picture {
        case .idr:
            units += [[0x67] + Self.sps, [0x68, 0xCE, 0x38, 0x80], [0x65, 0x88, 0x84] + slice]
        case .p:
            units.append([0x41, 0x9A] + slice)
        case .sps:
            units += [[0x67] + Self.sps, [0x68, 0xCE, 0x38, 0x80], [0x41, 0x9A] + slice]
        case .recoveryPoint(let frames, let intra):
            var payload = BitWriter()
            payload.ue(frames)  // recovery_frame_cnt
            payload.bits(0b1000, 4)  // exact_match_flag, broken_link_flag, changing_slice_group_idc
            let message = payload.bytes
            units.append([0x06, 0x06, UInt8(message.count)] + message + [0x80])
            // first_mb_in_slice 0, slice_type 7 (I) or 5 (P)
            units.append([0x41, intra ? 0x88 : 0x98] + slice)
        }
        var pes: [UInt8] = [0x00, 0x00, 0x01, 0xE0, 0x00, 0x00, 0x80, 0x80, 0x05]
        pes += [
            0x21 | UInt8((pts >> 29) & 0x0E), UInt8((pts >> 22) & 0xFF), UInt8((pts >> 14) & 0xFE) | 1,
            UInt8((pts >> 7) & 0xFF), UInt8((pts << 1) & 0xFE) | 1,
        ]
        pes += units.flatMap { [UInt8]([0, 0, 0, 1]) + $0 }
        var packets: [[UInt8]] = []
        var rest = pes[...]
        while !rest.isEmpty {
            let first = packets.isEmpty
            let needsField = (first && randomAccess) || rest.count < 184
            let take = min(rest.count, needsField ? 182 : 184)
            let chunk = Array(rest.prefix(take))
            packets.append(
                packet(pid: Self.videoPID, unitStart: first, randomAccess: first && randomAccess, payload: chunk, forceField: needsField))
            rest = rest.dropFirst(take)
        }
        return packets
    }

    /// Baseline 3.0, 64×64 (4×4 macroblocks), pic_order_cnt_type 2, no VUI.
    static let sps: [UInt8] = {
        var w = BitWriter()
        w.bits(66, 8)  // profile_idc
        w.bits(0, 8)  // constraint flags
        w.bits(30, 8)  // level_idc
        w.ue(0)  // seq_parameter_set_id
        w.ue(0)  // log2_max_frame_num_minus4
        w.ue(2)  // pic_order_cnt_type
        w.ue(1)  // max_num_ref_frames
        w.bits(0, 1)  // gaps_in_frame_num_value_allowed_flag
        w.ue(3)  // pic_width_in_mbs_minus1
        w.ue(3)  // pic_height_in_map_units_minus1
        w.bits(1, 1)  // frame_mbs_only_flag
        w.bits(1, 1)  // direct_8x8_inference_flag
        w.bits(0, 1)  // frame_cropping_flag
        w.bits(0, 1)  // vui_parameters_present_flag
        w.bits(1, 1)  // rbsp_stop_one_bit
        return w.bytes
    }()

    /// A PSI section in one packet: pointer_field 0, the section with its CRC, 0xFF stuffing.
    private mutating func section(pid: UInt16, _ section: [UInt8]) -> [UInt8] {
        let crc = crc32MPEG2(section)
        let complete = section + [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)]
        let payload = [0] + complete + [UInt8](repeating: 0xFF, count: 183 - complete.count)
        return packet(pid: pid, unitStart: true, randomAccess: false, payload: payload)
    }

    /// One 188-byte packet; an adaptation field (with the random access flag, and stuffing up to the
    /// payload) when asked or when the payload is short of 184 bytes.
    private mutating func packet(
        pid: UInt16, unitStart: Bool, randomAccess: Bool, payload: [UInt8], forceField: Bool = false
    ) -> [UInt8] {
        let counter = continuity[pid, default: 0]
        continuity[pid] = (counter + 1) & 0x0F
        let withField = forceField || randomAccess || payload.count < 184
        var packet: [UInt8] = [
            0x47, (unitStart ? 0x40 : 0) | UInt8(pid >> 8), UInt8(pid & 0xFF), (withField ? 0x30 : 0x10) | counter,
        ]
        if withField {
            let fieldLength = 183 - payload.count
            packet.append(UInt8(fieldLength))
            if fieldLength > 0 {
                packet.append(randomAccess ? 0x40 : 0x00)
                packet += [UInt8](repeating: 0xFF, count: fieldLength - 1)
            }
        }
        packet += payload
        precondition(packet.count == 188)
        return packet
    }
}
