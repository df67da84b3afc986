import HeadwaterMedia
import Testing

@Suite("Packed audio")
struct PackedAudioProbeTests {
    @Test func adtsWithHLSTimestamp() throws {
        let bytes = try Fixture.bytes("packed_aac_id3.aac")
        let probe = try PackedAudioProbe.probe(bytes)
        #expect(probe.codecs == ["mp4a.40.2"])
        #expect(probe.firstPTS == 0x1_2345_6789)  // the 33-bit PRIV value, top bit set
        // ffprobe -show_packets: 48 frames of 1024 samples at 48 kHz.
        #expect(probe.durationMicroseconds == 1_024_000)
        #expect(probe.audio == AudioInfo(format: .aac, codec: "mp4a.40.2", objectType: 2, sampleRate: 48000, channels: 2))
        #expect(probe.video == nil)
        #expect(!probe.startsWithIDR)
        #expect(probe.byteCount == bytes.count)
    }

    @Test func adtsWithoutID3() throws {
        let probe = try PackedAudioProbe.probe(try Fixture.bytes("audio_44100_mono.aac"))
        #expect(probe.codecs == ["mp4a.40.2"])
        #expect(probe.firstPTS == nil)
        // ffprobe -show_packets: 45 frames × 1024 / 44100 Hz = 1.0448979… s.
        #expect(probe.durationMicroseconds == 1_044_898)
        #expect(probe.audio?.sampleRate == 44100)
        #expect(probe.audio?.channels == 1)
    }

    @Test func ac3FivePointOne() throws {
        let probe = try PackedAudioProbe.probe(try Fixture.bytes("audio_51.ac3"))
        #expect(probe.codecs == ["ac-3"])
        #expect(probe.audio?.channels == 6)  // 3/2 + LFE
        #expect(probe.audio?.sampleRate == 48000)
        // ffprobe: 7 frames × 1536 / 48 kHz = 0.224 s.
        #expect(probe.durationMicroseconds == 224_000)
    }

    @Test func transportStreamIsNotPackedAudio() throws {
        #expect(throws: MediaProbeError.notPackedAudio) {
            try PackedAudioProbe.probe(try Fixture.bytes("audio_only_aac.ts"))
        }
        #expect(throws: MediaProbeError.notPackedAudio) { try PackedAudioProbe.probe([]) }
        #expect(throws: MediaProbeError.notPackedAudio) { try PackedAudioProbe.probe(Array("#EXTM3U\n".utf8)) }
    }

    @Test func malformedID3Tags() throws {
        let audio = try Fixture.bytes("audio_44100_mono.aac")
        let oversized: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0x7F, 0x7F] + audio
        #expect(throws: MediaProbeError.invalidID3Tag(reason: "tag size 16383 exceeds the \(audio.count) bytes available")) {
            try PackedAudioProbe.probe(oversized)
        }
        let notSyncsafe: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 0x80] + audio
        #expect(throws: MediaProbeError.invalidID3Tag(reason: "tag size is not a syncsafe integer")) {
            try PackedAudioProbe.probe(notSyncsafe)
        }
        let badVersion: [UInt8] = Array("ID3".utf8) + [9, 0, 0, 0, 0, 0, 0] + audio
        #expect(throws: MediaProbeError.invalidID3Tag(reason: "unsupported version 2.9")) {
            try PackedAudioProbe.probe(badVersion)
        }
        // A PRIV frame claiming more bytes than the tag holds.
        let frame: [UInt8] = Array("PRIV".utf8) + [0, 0, 0, 0x40, 0, 0] + [UInt8](repeating: 0x41, count: 4)
        let overrun: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, UInt8(frame.count)] + frame + audio
        #expect(throws: MediaProbeError.invalidID3Tag(reason: "frame at offset 10 overruns the tag")) {
            try PackedAudioProbe.probe(overrun)
        }
    }

    @Test func id3TagWithoutTimestampLeavesFirstPTSUnset() throws {
        // ID3v2.3 tag with a TIT2 frame (plain 32-bit size) and padding.
        let text: [UInt8] = [0] + Array("title".utf8)
        let frame: [UInt8] = Array("TIT2".utf8) + [0, 0, 0, UInt8(text.count), 0, 0] + text
        let body = frame + [UInt8](repeating: 0, count: 8)
        let tag: [UInt8] = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, UInt8(body.count)] + body
        let probe = try PackedAudioProbe.probe(tag + (try Fixture.bytes("audio_44100_mono.aac")))
        #expect(probe.firstPTS == nil)
        #expect(probe.durationMicroseconds == 1_044_898)
    }
}
