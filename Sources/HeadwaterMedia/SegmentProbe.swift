/// What a media segment contains, measured from its bytes: the facts an HLS origin publishes in
/// `EXT-X-STREAM-INF` (CODECS, RESOLUTION, FRAME-RATE; HLS-RULES E3/E4) and needs for timing
/// (first PTS, duration) and bit rate (byte count; see ``BitrateMeter``).
public struct SegmentProbe: Sendable, Hashable {
    /// RFC 6381 codec strings of the recognised audio and video streams, in program map table order,
    /// without duplicates: `["avc1.4d401e", "mp4a.40.2"]`.
    public var codecs: [String]
    /// Every elementary stream of the program, in program map table order (empty for packed audio
    /// other than its single implicit stream).
    public var streams: [ElementaryStream]
    /// The first video stream, if any.
    public var video: VideoInfo?
    /// The first audio stream, if any.
    public var audio: AudioInfo?
    /// 90 kHz presentation time stamp (33 bits) of the first access unit in presentation order of the
    /// video track, or of the audio track when there is no video. For packed audio, the ID3
    /// `com.apple.streaming.transportStreamTimestamp`, or `nil` when the tag is absent.
    public var firstPTS: UInt64?
    /// The duration of the video (else audio) track in microseconds: from its earliest PTS to its last
    /// PTS plus one frame (video), or to the end of its last audio frame.
    public var durationMicroseconds: Int64
    /// Whether the first video slice is an IDR picture (H.264 NAL type 5, H.265 types 19/20).
    /// Always `false` without video.
    public var startsWithIDR: Bool
    /// Transport stream only (HLS-RULES B18): packet 0 is the PAT and packet 1 the PMT.
    public var startsWithPATAndPMT: Bool
    /// Programs listed in the PAT (B18: a segment MUST hold a single program; the first is probed).
    public var programCount: Int
    /// Size of the probed bytes.
    public var byteCount: Int

    public init(
        codecs: [String], streams: [ElementaryStream], video: VideoInfo?, audio: AudioInfo?, firstPTS: UInt64?,
        durationMicroseconds: Int64, startsWithIDR: Bool, startsWithPATAndPMT: Bool, programCount: Int, byteCount: Int
    ) {
        self.codecs = codecs
        self.streams = streams
        self.video = video
        self.audio = audio
        self.firstPTS = firstPTS
        self.durationMicroseconds = durationMicroseconds
        self.startsWithIDR = startsWithIDR
        self.startsWithPATAndPMT = startsWithPATAndPMT
        self.programCount = programCount
        self.byteCount = byteCount
    }
}

extension SegmentProbe {
    /// The PID of the first video stream: the one ``video`` describes.
    var videoPID: UInt16? {
        streams.first { StreamKind(streamType: $0.streamType, descriptors: []).isVideo }?.pid
    }

    /// The PID of the first audio stream, the one ``audio`` describes: the first stream with a codec
    /// that is not video (a Dolby stream of type 0x06 is known by its codec, not its type).
    var audioPID: UInt16? {
        streams.first { $0.codec != nil && !StreamKind(streamType: $0.streamType, descriptors: []).isVideo }?.pid
    }
}

/// One elementary stream listed in a program map table.
public struct ElementaryStream: Sendable, Hashable {
    public var pid: UInt16
    /// `stream_type` from the PMT (0x1B H.264, 0x24 H.265, 0x0F AAC, 0x81 AC-3, 0x15 ID3, 0x86 SCTE-35, …).
    public var streamType: UInt8
    /// The RFC 6381 codec, or `nil` for streams that are not audio or video (ID3, SCTE-35) or not recognised.
    public var codec: String?

    public init(pid: UInt16, streamType: UInt8, codec: String?) {
        self.pid = pid
        self.streamType = streamType
        self.codec = codec
    }
}

public enum VideoFormat: Sendable, Hashable {
    case h264
    case hevc
}

/// The first video stream, from its first sequence parameter set.
public struct VideoInfo: Sendable, Hashable {
    public var format: VideoFormat
    public var codec: String
    /// `profile_idc` (H.264: 66 Baseline, 77 Main, 100 High; H.265: general_profile_idc).
    public var profile: Int
    /// `level_idc` (H.264: 30 = level 3.0; H.265: general_level_idc = 30 × level).
    public var level: Int
    /// Displayed width in pixels, after SPS frame cropping (H.265: conformance window).
    public var width: Int
    /// Displayed height in pixels, after SPS frame cropping (H.265: conformance window).
    public var height: Int
    /// From the VUI timing when present and plausible (H.264), otherwise from the median PTS delta.
    public var frameRate: FrameRate?

    public init(format: VideoFormat, codec: String, profile: Int, level: Int, width: Int, height: Int, frameRate: FrameRate?) {
        self.format = format
        self.codec = codec
        self.profile = profile
        self.level = level
        self.width = width
        self.height = height
        self.frameRate = frameRate
    }

    /// The HLS RESOLUTION attribute value, `<width>x<height>`.
    public var resolution: String { "\(width)x\(height)" }
}

public enum AudioFormat: Sendable, Hashable {
    case aac
    /// MPEG-1/2 audio layer 1, 2 or 3 (MP3).
    case mpegAudio(layer: Int)
    case ac3
    case eac3
}

/// The first audio stream, from its first frame header.
public struct AudioInfo: Sendable, Hashable {
    public var format: AudioFormat
    public var codec: String
    /// MPEG-4 audio object type for AAC (2 = LC, 1 = Main, 4 = LTP), from the ADTS profile. ADTS cannot
    /// signal HE-AAC (5) or HE-AACv2 (29) explicitly, so those streams report their core object type 2.
    public var objectType: Int?
    /// Sampling rate in Hz as signalled in the header (for implicit HE-AAC, the core rate).
    public var sampleRate: Int
    /// Channel count (AAC: 0 means the configuration is in a program config element; AC-3: with LFE).
    public var channels: Int

    public init(format: AudioFormat, codec: String, objectType: Int?, sampleRate: Int, channels: Int) {
        self.format = format
        self.codec = codec
        self.objectType = objectType
        self.sampleRate = sampleRate
        self.channels = channels
    }
}

/// A frame rate as an exact fraction, reduced to lowest terms (25/1, 30000/1001).
public struct FrameRate: Sendable, Hashable, CustomStringConvertible {
    public enum Source: Sendable, Hashable {
        /// H.264 VUI: `time_scale / (2 × num_units_in_tick)`.
        case vuiTiming
        /// 90 kHz / the median delta between sorted access unit PTS values.
        case timestamps
    }

    public var numerator: UInt64
    public var denominator: UInt64
    public var source: Source

    /// Reduces `numerator / denominator`; `nil` when either is zero.
    public init?(numerator: UInt64, denominator: UInt64, source: Source) {
        guard numerator > 0, denominator > 0 else { return nil }
        var a = numerator
        var b = denominator
        while b != 0 { (a, b) = (b, a % b) }
        self.numerator = numerator / a
        self.denominator = denominator / a
        self.source = source
    }

    public var framesPerSecond: Double { Double(numerator) / Double(denominator) }

    /// The HLS FRAME-RATE attribute value: a decimal rounded to three places ("25.000", "29.970").
    public var hlsAttributeValue: String {
        var whole = numerator / denominator
        let remainder = numerator % denominator
        var millis: UInt64
        if denominator < 1 << 53 {
            millis = (remainder * 2000 + denominator) / (2 * denominator)  // exact rounding, no overflow
        } else {
            millis = UInt64((Double(remainder) / Double(denominator) * 1000).rounded())  // 0...1000
        }
        if millis >= 1000 {
            whole += 1
            millis -= 1000
        }
        let digits = String(millis)
        return "\(whole)." + String(repeating: "0", count: 3 - digits.count) + digits
    }

    public var description: String { "\(numerator)/\(denominator)" }
}
