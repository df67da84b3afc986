import HeadwaterMedia
import HeadwaterTesting
import Testing

/// Damaged input must produce a result or a specific error, never a trap.
@Suite("Robustness")
struct RobustnessTests {
    static let seed: UInt64 = 0x4D45_4449_4150_524F
    static let mutationCases = 5_000

    @Test(arguments: Fixture.transportStreams)
    func truncationAtEveryPacketBoundary(_ file: String) throws {
        let bytes = try Fixture.bytes(file)
        let full = try TransportStreamProbe.probe(bytes)
        var succeeded = 0
        for end in stride(from: 0, through: bytes.count, by: TransportStreamProbe.packetSize) {
            for cut in [end, end + 1, end + 100] where cut <= bytes.count {
                do {
                    let probe = try TransportStreamProbe.probe(Array(bytes[0..<cut]))
                    succeeded += 1
                    // Success means every stream was described: the codecs are those of the whole file.
                    #expect(probe.codecs == full.codecs, "\(file) cut at \(cut)")
                    #expect(probe.durationMicroseconds <= full.durationMicroseconds, "\(file) cut at \(cut)")
                } catch {
                    #expect(!error.description.isEmpty)
                }
            }
        }
        #expect(succeeded > 0)
    }

    @Test func truncatedPrefixesGiveSpecificErrors() throws {
        let bytes = try Fixture.bytes("main_640x360_25fps.ts")
        #expect(throws: MediaProbeError.notTransportStream) { try TransportStreamProbe.probe([]) }
        #expect(throws: MediaProbeError.notTransportStream) { try TransportStreamProbe.probe(Array(bytes[0..<187])) }
        // ffmpeg's packets: SDT, PAT, PMT, then video.
        #expect(throws: MediaProbeError.missingProgramAssociationTable) {
            try TransportStreamProbe.probe(Array(bytes[0..<188]))
        }
        #expect(throws: MediaProbeError.missingProgramMapTable(pid: 0x1000)) {
            try TransportStreamProbe.probe(Array(bytes[0..<376]))
        }
        #expect(throws: MediaProbeError.missingParameterSets(pid: 0x100)) {
            try TransportStreamProbe.probe(Array(bytes[0..<564]))
        }
    }

    @Test func randomMutationsNeverTrap() throws {
        let corpus = try (Fixture.transportStreams + Fixture.packedAudio).map { ($0, try Fixture.bytes($0)) }
        var random = SeededRandom(seed: Self.seed)
        var succeeded = 0
        for iteration in 0..<Self.mutationCases {
            let (name, original) = corpus[random.below(corpus.count)]
            var bytes = original
            // Half of the edits land in the first 2 KB, where the PAT, PMT, SPS and first PES headers are.
            for _ in 0..<(1 + random.below(8)) {
                let span = random.below(2) == 0 ? min(bytes.count, 2048) : bytes.count
                switch random.below(5) {
                case 0 where span > 0: bytes[random.below(span)] = random.byte()
                case 1 where span > 0: bytes[random.below(span)] ^= 1 << UInt8(random.below(8))
                case 2: bytes.insert(random.byte(), at: random.below(span + 1))
                case 3 where span > 0: bytes.remove(at: random.below(span))
                case 4 where span > 0: bytes.removeSubrange(random.below(span)...)
                default: break
                }
            }
            let result: Result<SegmentProbe, MediaProbeError>
            if name.hasSuffix(".ts") {
                result = Result { () throws(MediaProbeError) in try TransportStreamProbe.probe(bytes) }
            } else {
                result = Result { () throws(MediaProbeError) in try PackedAudioProbe.probe(bytes) }
            }
            switch result {
            case .success(let probe):
                succeeded += 1
                #expect(probe.byteCount == bytes.count, "iteration \(iteration)")
                #expect(probe.durationMicroseconds >= 0, "iteration \(iteration)")
                #expect(probe.firstPTS.map { $0 < 1 << 33 } ?? true, "iteration \(iteration)")
            case .failure(let error):
                #expect(!error.description.isEmpty, "iteration \(iteration)")
            }
        }
        // Mutations must exercise the success path too, not only the errors.
        #expect(succeeded > Self.mutationCases / 10)
    }

    @Test func garbageIsRejectedWithASpecificError() {
        #expect(throws: MediaProbeError.notTransportStream) { try TransportStreamProbe.probe([UInt8](repeating: 0, count: 10_000)) }
        #expect(throws: MediaProbeError.notTransportStream) {
            try TransportStreamProbe.probe(Array("#EXTM3U\n#EXT-X-VERSION:7\n".utf8))
        }
        var random = SeededRandom(seed: Self.seed)
        for _ in 0..<20 {
            let bytes = (0..<20_000).map { _ in random.byte() }
            do {
                _ = try TransportStreamProbe.probe(bytes)
                Issue.record("random bytes probed as a transport stream")
            } catch {
                #expect(error == .notTransportStream || error == .missingProgramAssociationTable)
            }
        }
        // 0x47 every 188 bytes and nothing else: packets, but no PAT.
        var packets = [UInt8](repeating: 0xFF, count: 188 * 10)
        for offset in stride(from: 0, to: packets.count, by: 188) { packets[offset] = 0x47 }
        #expect(throws: MediaProbeError.missingProgramAssociationTable) { try TransportStreamProbe.probe(packets) }
    }

    @Test func resynchronisesAndIgnoresATrailingPartialPacket() throws {
        let bytes = try Fixture.bytes("main_640x360_25fps.ts")
        let expected = try TransportStreamProbe.probe(bytes)
        var damaged = [UInt8](repeating: 0x47, count: 7) + bytes  // leading junk
        damaged.insert(contentsOf: [0x00, 0x47, 0x12, 0x47, 0x00], at: 7 + 188 * 20)  // junk between packets
        damaged += bytes[0..<100]  // trailing partial packet
        let probe = try TransportStreamProbe.probe(damaged)
        #expect(probe.codecs == expected.codecs)
        #expect(probe.video == expected.video)
        #expect(probe.firstPTS == expected.firstPTS)
        #expect(probe.durationMicroseconds == expected.durationMicroseconds)
        #expect(probe.startsWithPATAndPMT == expected.startsWithPATAndPMT)
    }

    @Test func missingProgramMapTable() throws {
        let bytes = try Fixture.bytes("main_640x360_25fps.ts")
        let withoutPMT = TransportStreamEditor.packets(of: bytes).filter { TransportStreamEditor.pid($0) != 0x1000 }
        #expect(throws: MediaProbeError.missingProgramMapTable(pid: 0x1000)) {
            try TransportStreamProbe.probe(Array(withoutPMT.joined()))
        }
    }

    @Test func scrambledVideo() throws {
        let packets = TransportStreamEditor.packets(of: try Fixture.bytes("main_640x360_25fps.ts")).map { packet in
            var packet = packet
            if TransportStreamEditor.pid(packet) == 0x100 { packet[3] |= 0x80 }  // transport_scrambling_control = 2
            return packet
        }
        #expect(throws: MediaProbeError.scrambled(pid: 0x100)) { try TransportStreamProbe.probe(Array(packets.joined())) }
    }

    @Test func audioWithoutTimestamps() throws {
        let packets = TransportStreamEditor.packets(of: try Fixture.bytes("audio_only_aac.ts")).map { packet in
            var packet = packet
            if let pes = TransportStreamEditor.pesHeaderOffset(packet) { packet[pes + 7] &= 0x3F }  // PTS_DTS_flags = 0
            return packet
        }
        #expect(throws: MediaProbeError.missingTimestamps(pid: 0x100)) { try TransportStreamProbe.probe(Array(packets.joined())) }
    }

    @Test func timestampsWrappingThrough33Bits() throws {
        let bytes = try Fixture.bytes("main_640x360_25fps.ts")
        // Move the segment so that it starts one second before the 33-bit PTS wraps to 0.
        let start: UInt64 = (1 << 33) - 90_000
        let shifted = TransportStreamEditor.shiftingTimestamps(bytes, by: start &- 133_200)
        let probe = try TransportStreamProbe.probe(shifted)
        #expect(probe.firstPTS == start)
        #expect(probe.durationMicroseconds == 2_000_000)
        #expect(probe.video?.frameRate?.numerator == 25)
    }
}

/// Byte-level edits of transport streams for the tests above.
enum TransportStreamEditor {
    static func packets(of bytes: [UInt8]) -> [[UInt8]] {
        stride(from: 0, to: bytes.count - 187, by: 188).map { Array(bytes[$0..<($0 + 188)]) }
    }

    static func pid(_ packet: [UInt8]) -> UInt16 { UInt16(packet[1] & 0x1F) << 8 | UInt16(packet[2]) }

    /// The offset of a PES header starting in this packet (unit start, not PSI), if any.
    static func pesHeaderOffset(_ packet: [UInt8]) -> Int? {
        guard packet[1] & 0x40 != 0, pid(packet) >= 0x20, pid(packet) != 0x1000 else { return nil }
        var start = 4
        if packet[3] & 0x20 != 0 { start += 1 + Int(packet[4]) }
        guard start + 14 <= 188, packet[start] == 0, packet[start + 1] == 0, packet[start + 2] == 1 else { return nil }
        return start
    }

    /// Adds `delta` (mod 2³³) to every PTS and DTS.
    static func shiftingTimestamps(_ bytes: [UInt8], by delta: UInt64) -> [UInt8] {
        Array(
            packets(of: bytes).map { packet -> [UInt8] in
                var packet = packet
                guard let pes = pesHeaderOffset(packet) else { return packet }
                let flags = packet[pes + 7] >> 6
                if flags >= 2 { rewrite(&packet, at: pes + 9, adding: delta) }
                if flags == 3 { rewrite(&packet, at: pes + 14, adding: delta) }
                return packet
            }.joined())
    }

    private static func rewrite(_ packet: inout [UInt8], at offset: Int, adding delta: UInt64) {
        let b = packet[offset..<(offset + 5)].map(UInt64.init)
        let old = (b[0] >> 1 & 7) << 30 | b[1] << 22 | (b[2] >> 1) << 15 | b[3] << 7 | b[4] >> 1
        let value = (old &+ delta) & ((1 << 33) - 1)
        packet[offset] = UInt8(b[0] & 0xF0) | UInt8((value >> 29) & 0x0E) | 1
        packet[offset + 1] = UInt8((value >> 22) & 0xFF)
        packet[offset + 2] = UInt8((value >> 14) & 0xFE) | 1
        packet[offset + 3] = UInt8((value >> 7) & 0xFF)
        packet[offset + 4] = UInt8((value << 1) & 0xFE) | 1
    }
}
