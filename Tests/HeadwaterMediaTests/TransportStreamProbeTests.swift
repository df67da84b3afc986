import HeadwaterMedia
import Testing

/// What `ffprobe` reports for each fixture (see Fixtures/README.md), and what the probe must match.
struct TransportStreamExpectation: Sendable, CustomTestStringConvertible {
    var file: String
    var codecs: [String]
    var resolution: (width: Int, height: Int)?
    var frameRate: (numerator: UInt64, denominator: UInt64)?
    var profileLevel: (profile: Int, level: Int)?
    var audio: (codec: String, sampleRate: Int, channels: Int)?
    /// `ffprobe -show_packets`: PTS of the first access unit of the video (else audio) stream.
    var firstPTS: UInt64
    /// (last PTS − first PTS + one frame) of that stream, in microseconds.
    var durationMicroseconds: Int64
    var startsWithIDR: Bool

    var testDescription: String { file }
}

@Suite("Transport stream fixtures against ffprobe")
struct TransportStreamProbeTests {
    static let expectations: [TransportStreamExpectation] = [
        .init(
            file: "main_640x360_25fps.ts", codecs: ["avc1.4d401e", "mp4a.40.2"], resolution: (640, 360),
            frameRate: (25, 1), profileLevel: (77, 30), audio: ("mp4a.40.2", 48000, 2),
            firstPTS: 133_200, durationMicroseconds: 2_000_000, startsWithIDR: true),
        .init(
            file: "baseline_416x234.ts", codecs: ["avc1.42c015", "mp4a.40.2"], resolution: (416, 234),
            frameRate: (25, 1), profileLevel: (66, 21), audio: ("mp4a.40.2", 48000, 2),
            firstPTS: 127_920, durationMicroseconds: 2_000_000, startsWithIDR: true),
        .init(
            file: "high_854x480_cqm.ts", codecs: ["avc1.64001f", "mp4a.40.2"], resolution: (854, 480),
            frameRate: (25, 1), profileLevel: (100, 31), audio: ("mp4a.40.2", 44100, 1),
            firstPTS: 133_200, durationMicroseconds: 1_000_000, startsWithIDR: true),
        .init(
            file: "main_29.97fps.ts", codecs: ["avc1.4d401e"], resolution: (640, 360),
            frameRate: (30000, 1001), profileLevel: (77, 30), audio: nil,
            firstPTS: 132_006, durationMicroseconds: 1_001_000, startsWithIDR: true),
        .init(
            file: "high444_161x91.ts", codecs: ["avc1.f4000b"], resolution: (161, 91),
            frameRate: (25, 1), profileLevel: (244, 11), audio: nil,
            firstPTS: 133_200, durationMicroseconds: 400_000, startsWithIDR: true),
        .init(
            file: "interlaced_352x200.ts", codecs: ["avc1.640015"], resolution: (352, 200),
            frameRate: (25, 1), profileLevel: (100, 21), audio: nil,
            firstPTS: 133_200, durationMicroseconds: 320_000, startsWithIDR: true),
        .init(
            file: "hevc_320x180.ts", codecs: ["hvc1.1.6.L60.90"], resolution: (320, 180),
            frameRate: (25, 1), profileLevel: (1, 60), audio: nil,
            firstPTS: 133_200, durationMicroseconds: 1_000_000, startsWithIDR: true),
        .init(
            file: "audio_only_aac.ts", codecs: ["mp4a.40.2"], resolution: nil, frameRate: nil, profileLevel: nil,
            audio: ("mp4a.40.2", 48000, 2), firstPTS: 126_000, durationMicroseconds: 2_026_667, startsWithIDR: false),
        .init(
            file: "audio_ac3.ts", codecs: ["ac-3"], resolution: nil, frameRate: nil, profileLevel: nil,
            audio: ("ac-3", 48000, 2), firstPTS: 126_000, durationMicroseconds: 512_000, startsWithIDR: false),
        .init(
            file: "audio_eac3.ts", codecs: ["ec-3"], resolution: nil, frameRate: nil, profileLevel: nil,
            audio: ("ec-3", 48000, 2), firstPTS: 126_000, durationMicroseconds: 512_000, startsWithIDR: false),
        .init(
            file: "audio_mp3.ts", codecs: ["mp4a.40.34"], resolution: nil, frameRate: nil, profileLevel: nil,
            // Two PES packets (PTS 126000 with 14 frames, 158914 with 7): 32914 ticks + 7 × 1152 / 44100 s
            // = 548 568.25 µs. ffprobe's per-frame PTS are interpolated and rounded to ticks (last 173020),
            // which would give 548 566.9.
            audio: ("mp4a.40.34", 44100, 2), firstPTS: 126_000, durationMicroseconds: 548_568, startsWithIDR: false),
    ]

    @Test(arguments: expectations)
    func matchesFFprobe(_ expected: TransportStreamExpectation) throws {
        let bytes = try Fixture.bytes(expected.file)
        let probe = try TransportStreamProbe.probe(bytes)
        #expect(probe.codecs == expected.codecs)
        #expect(probe.firstPTS == expected.firstPTS)
        #expect(probe.durationMicroseconds == expected.durationMicroseconds)
        #expect(probe.startsWithIDR == expected.startsWithIDR)
        #expect(probe.byteCount == bytes.count)
        #expect(!probe.startsWithPATAndPMT)  // ffmpeg sends the SDT (PID 0x11) first
        #expect(probe.programCount == 1)
        if let resolution = expected.resolution {
            #expect(probe.video?.width == resolution.width)
            #expect(probe.video?.height == resolution.height)
            #expect(probe.video?.resolution == "\(resolution.width)x\(resolution.height)")
        } else {
            #expect(probe.video == nil)
        }
        if let rate = expected.frameRate {
            #expect(probe.video?.frameRate?.numerator == rate.numerator)
            #expect(probe.video?.frameRate?.denominator == rate.denominator)
        }
        if let profileLevel = expected.profileLevel {
            #expect(probe.video?.profile == profileLevel.profile)
            #expect(probe.video?.level == profileLevel.level)
        }
        if let audio = expected.audio {
            #expect(probe.audio?.codec == audio.codec)
            #expect(probe.audio?.sampleRate == audio.sampleRate)
            #expect(probe.audio?.channels == audio.channels)
        } else {
            #expect(probe.audio == nil)
        }
    }

    @Test func streamsAreListedInProgramMapTableOrder() throws {
        let probe = try TransportStreamProbe.probe(try Fixture.bytes("main_640x360_25fps.ts"))
        #expect(
            probe.streams == [
                ElementaryStream(pid: 0x100, streamType: 0x1B, codec: "avc1.4d401e"),
                ElementaryStream(pid: 0x101, streamType: 0x0F, codec: "mp4a.40.2"),
            ])
        #expect(probe.video?.format == .h264)
        #expect(probe.audio?.format == .aac)
        #expect(probe.audio?.objectType == 2)
    }

    @Test func patAndPMTFirst() throws {
        // B18: without ffmpeg's leading SDT packet, packets 0 and 1 are the PAT and the PMT.
        let packets = TransportStreamEditor.packets(of: try Fixture.bytes("main_640x360_25fps.ts"))
        let withoutSDT = packets.filter { TransportStreamEditor.pid($0) != 0x11 }
        #expect(try TransportStreamProbe.probe(Array(withoutSDT.joined())).startsWithPATAndPMT)
    }

    @Test func frameRateSources() throws {
        // x264 writes VUI timing; the HEVC SPS VUI is not parsed, so its rate comes from PTS deltas.
        let h264 = try TransportStreamProbe.probe(try Fixture.bytes("main_29.97fps.ts"))
        #expect(h264.video?.frameRate?.source == .vuiTiming)
        #expect(h264.video?.frameRate?.hlsAttributeValue == "29.970")
        let hevc = try TransportStreamProbe.probe(try Fixture.bytes("hevc_320x180.ts"))
        #expect(hevc.video?.frameRate?.source == .timestamps)
        #expect(hevc.video?.frameRate?.hlsAttributeValue == "25.000")
        #expect(hevc.video?.format == .hevc)
    }

    @Test func dolbyAndMPEGAudioFormats() throws {
        #expect(try TransportStreamProbe.probe(try Fixture.bytes("audio_ac3.ts")).audio?.format == .ac3)
        #expect(try TransportStreamProbe.probe(try Fixture.bytes("audio_eac3.ts")).audio?.format == .eac3)
        #expect(try TransportStreamProbe.probe(try Fixture.bytes("audio_mp3.ts")).audio?.format == .mpegAudio(layer: 3))
    }

    @Test func frameRateAttributeRounding() {
        #expect(FrameRate(numerator: 24000, denominator: 1001, source: .timestamps)?.hlsAttributeValue == "23.976")
        #expect(FrameRate(numerator: 60000, denominator: 1001, source: .timestamps)?.hlsAttributeValue == "59.940")
        #expect(FrameRate(numerator: 50, denominator: 2, source: .timestamps)?.numerator == 25)
        #expect(FrameRate(numerator: 2, denominator: 3, source: .timestamps)?.hlsAttributeValue == "0.667")
        #expect(FrameRate(numerator: 0, denominator: 3, source: .timestamps) == nil)
        #expect(FrameRate(numerator: .max, denominator: .max - 1, source: .timestamps)?.hlsAttributeValue == "1.000")
    }
}
