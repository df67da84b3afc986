/// The frame syntaxes an audio elementary stream (or a packed audio file) can use.
enum AudioSyntax: Hashable, Sendable {
    /// ISO/IEC 13818-7 / 14496-3 ADTS (AAC).
    case adts
    /// ISO/IEC 11172-3 / 13818-3 MPEG audio layers I–III.
    case mpegAudio
    /// ATSC A/52 AC-3 (bsid ≤ 10) or E-AC-3 (bsid 11…16, Annex E) sync frames.
    case ac3
}

/// One decoded audio frame header: enough to name the codec, report the format and walk frames.
struct AudioFrameHeader: Hashable, Sendable {
    var format: AudioFormat
    /// MPEG-4 audio object type for AAC (ADTS profile + 1); `nil` for the other formats.
    var objectType: Int?
    var sampleRate: Int
    var channels: Int
    var samplesPerFrame: Int
    /// Length of the whole frame in bytes, header included (never less than the header).
    var frameLength: Int
    /// `false` for E-AC-3 dependent substreams and independent substreams other than 0, whose
    /// frames overlap substream 0 in time and so must not add to the duration.
    var isPrimary = true

    var codec: String {
        switch format {
        case .aac: return "mp4a.40.\(objectType ?? 2)"
        case .mpegAudio(let layer): return "mp4a.40.\(31 + layer)"  // 32, 33, 34 = layer I, II, III
        case .ac3: return "ac-3"
        case .eac3: return "ec-3"
        }
    }

    /// Whether `other` plausibly continues the same stream (same format and sample rate), which
    /// makes resynchronisation after damage far less likely to lock onto stray sync-like bytes.
    func isCompatible(with other: AudioFrameHeader) -> Bool {
        format == other.format && sampleRate == other.sampleRate
    }

    /// Parses the header at `offset` in `syntax`; `nil` when there is no valid header there.
    static func parse(_ bytes: [UInt8], at offset: Int, syntax: AudioSyntax) -> AudioFrameHeader? {
        guard offset >= 0, offset < bytes.count else { return nil }
        switch syntax {
        case .adts: return parseADTS(bytes, offset)
        case .mpegAudio: return parseMPEGAudio(bytes, offset)
        case .ac3: return parseAC3(bytes, offset)
        }
    }

    /// Guesses the syntax from the first bytes at `offset`.
    static func syntax(of bytes: [UInt8], at offset: Int) -> AudioSyntax? {
        guard offset >= 0, offset + 1 < bytes.count else { return nil }
        if bytes[offset] == 0x0B, bytes[offset + 1] == 0x77 { return .ac3 }
        guard bytes[offset] == 0xFF else { return nil }
        if bytes[offset + 1] & 0xF6 == 0xF0 { return .adts }  // 12-bit sync, layer 00
        if bytes[offset + 1] & 0xE0 == 0xE0 { return .mpegAudio }  // 11-bit sync
        return nil
    }

    // MARK: ADTS (ISO/IEC 13818-7 §6.2, 14496-3 §1.A.2)

    static let aacSampleRates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    private static func parseADTS(_ b: [UInt8], _ o: Int) -> AudioFrameHeader? {
        guard o + 7 <= b.count, b[o] == 0xFF, b[o + 1] & 0xF6 == 0xF0 else { return nil }
        let protectionAbsent = b[o + 1] & 1 == 1
        let profile = Int(b[o + 2] >> 6)
        let frequencyIndex = Int((b[o + 2] >> 2) & 0x0F)
        guard frequencyIndex < aacSampleRates.count else { return nil }
        let channelConfiguration = Int((b[o + 2] & 1) << 2 | b[o + 3] >> 6)
        let frameLength = Int(b[o + 3] & 3) << 11 | Int(b[o + 4]) << 3 | Int(b[o + 5] >> 5)
        let rawDataBlocks = Int(b[o + 6] & 3) + 1
        let headerLength = protectionAbsent ? 7 : 9
        guard frameLength > headerLength else { return nil }
        return AudioFrameHeader(
            format: .aac, objectType: profile + 1, sampleRate: aacSampleRates[frequencyIndex],
            channels: channelConfiguration == 7 ? 8 : channelConfiguration,
            samplesPerFrame: 1024 * rawDataBlocks, frameLength: frameLength)
    }

    // MARK: MPEG audio (ISO/IEC 11172-3 §2.4.2.3, 13818-3)

    /// kbit/s by [MPEG-1 ? 0 : 1][layer − 1][bitrate_index].
    private static let mpegBitRates: [[[Int]]] = [
        [
            [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
            [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
            [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
        ],
        [
            [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
            [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
            [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
        ],
    ]

    private static func parseMPEGAudio(_ b: [UInt8], _ o: Int) -> AudioFrameHeader? {
        guard o + 4 <= b.count, b[o] == 0xFF, b[o + 1] & 0xE0 == 0xE0 else { return nil }
        let versionBits = Int((b[o + 1] >> 3) & 3)  // 0 = 2.5, 1 = reserved, 2 = 2, 3 = 1
        let layerBits = Int((b[o + 1] >> 1) & 3)  // 1 = III, 2 = II, 3 = I
        guard versionBits != 1, layerBits != 0 else { return nil }
        let layer = 4 - layerBits
        let bitRateIndex = Int(b[o + 2] >> 4)
        let rateIndex = Int((b[o + 2] >> 2) & 3)
        guard bitRateIndex != 0, bitRateIndex != 15, rateIndex != 3 else { return nil }  // free format unsupported
        let padding = Int((b[o + 2] >> 1) & 1)
        let isMPEG1 = versionBits == 3
        let baseRates = [44100, 48000, 32000]
        let sampleRate = baseRates[rateIndex] / (isMPEG1 ? 1 : versionBits == 2 ? 2 : 4)
        let bitRate = mpegBitRates[isMPEG1 ? 0 : 1][layer - 1][bitRateIndex] * 1000
        let samples: Int
        let length: Int
        switch layer {
        case 1:
            samples = 384
            length = (12 * bitRate / sampleRate + padding) * 4
        case 2:
            samples = 1152
            length = 144 * bitRate / sampleRate + padding
        default:
            samples = isMPEG1 ? 1152 : 576
            length = (isMPEG1 ? 144 : 72) * bitRate / sampleRate + padding
        }
        guard length > 4 else { return nil }
        return AudioFrameHeader(
            format: .mpegAudio(layer: layer), objectType: nil, sampleRate: sampleRate,
            channels: b[o + 3] >> 6 == 3 ? 1 : 2, samplesPerFrame: samples, frameLength: length)
    }

    // MARK: AC-3 (ATSC A/52 §5.4.1) and E-AC-3 (A/52 Annex E §E.1.2)

    private static let ac3BitRates = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 576, 640]
    /// Full-bandwidth channels by acmod.
    private static let acmodChannels = [2, 1, 2, 3, 3, 4, 4, 5]

    private static func parseAC3(_ b: [UInt8], _ o: Int) -> AudioFrameHeader? {
        guard o + 8 <= b.count, b[o] == 0x0B, b[o + 1] == 0x77 else { return nil }
        let bsid = Int(b[o + 5] >> 3)
        if bsid > 10 { return parseEAC3(b, o, bsid: bsid) }
        let fscod = Int(b[o + 4] >> 6)
        let frameSizeCode = Int(b[o + 4] & 0x3F)
        guard fscod != 3, frameSizeCode < 38 else { return nil }
        let bitRate = ac3BitRates[frameSizeCode >> 1]
        let words: Int
        switch fscod {
        case 0: words = 2 * bitRate  // 48 kHz
        case 1: words = bitRate * 320 / 147 + (frameSizeCode & 1)  // 44.1 kHz
        default: words = 3 * bitRate  // 32 kHz
        }
        // acmod, then cmixlev/surmixlev/dsurmod depending on acmod, then lfeon.
        let acmod = Int(b[o + 6] >> 5)
        var bit = 3
        if acmod & 1 == 1, acmod != 1 { bit += 2 }
        if acmod & 4 == 4 { bit += 2 }
        if acmod == 2 { bit += 2 }
        let lfe = Int((b[o + 6 + bit / 8] >> UInt8(7 - bit % 8)) & 1)
        return AudioFrameHeader(
            format: .ac3, objectType: nil, sampleRate: [48000, 44100, 32000][fscod],
            channels: acmodChannels[acmod] + lfe, samplesPerFrame: 1536, frameLength: words * 2)
    }

    private static func parseEAC3(_ b: [UInt8], _ o: Int, bsid: Int) -> AudioFrameHeader? {
        guard bsid <= 16 else { return nil }
        let frameSize = (Int(b[o + 2] & 0x07) << 8 | Int(b[o + 3])) + 1  // in 16-bit words
        let fscod = Int(b[o + 4] >> 6)
        let sampleRate: Int
        let blocks: Int
        if fscod == 3 {
            let fscod2 = Int((b[o + 4] >> 4) & 3)
            guard fscod2 != 3 else { return nil }
            sampleRate = [24000, 22050, 16000][fscod2]
            blocks = 6
        } else {
            sampleRate = [48000, 44100, 32000][fscod]
            blocks = [1, 2, 3, 6][Int((b[o + 4] >> 4) & 3)]
        }
        let acmod = Int((b[o + 4] >> 1) & 7)
        let lfe = Int(b[o + 4] & 1)
        let streamType = b[o + 2] >> 6  // 0 independent, 1 dependent, 2 AC-3 convertible, 3 reserved
        let substreamID = (b[o + 2] >> 3) & 7
        guard streamType != 3 else { return nil }
        return AudioFrameHeader(
            format: .eac3, objectType: nil, sampleRate: sampleRate,
            channels: acmodChannels[acmod] + lfe, samplesPerFrame: 256 * blocks, frameLength: frameSize * 2,
            isPrimary: streamType != 1 && substreamID == 0)
    }
}
