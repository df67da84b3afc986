/// The tags the parser models, looked up by a hash of the name bytes (no `String` is built for a
/// tag name on the hot path).
enum KnownTag: String {
    case extm3u = "EXTM3U"
    case extinf = "EXTINF"
    case programDateTime = "EXT-X-PROGRAM-DATE-TIME"
    case byteRange = "EXT-X-BYTERANGE"
    case version = "EXT-X-VERSION"
    case independentSegments = "EXT-X-INDEPENDENT-SEGMENTS"
    case start = "EXT-X-START"
    case define = "EXT-X-DEFINE"
    case targetDuration = "EXT-X-TARGETDURATION"
    case mediaSequence = "EXT-X-MEDIA-SEQUENCE"
    case discontinuitySequence = "EXT-X-DISCONTINUITY-SEQUENCE"
    case playlistType = "EXT-X-PLAYLIST-TYPE"
    case iFramesOnly = "EXT-X-I-FRAMES-ONLY"
    case partInf = "EXT-X-PART-INF"
    case serverControl = "EXT-X-SERVER-CONTROL"
    case endList = "EXT-X-ENDLIST"
    case skip = "EXT-X-SKIP"
    case preloadHint = "EXT-X-PRELOAD-HINT"
    case renditionReport = "EXT-X-RENDITION-REPORT"
    case discontinuity = "EXT-X-DISCONTINUITY"
    case key = "EXT-X-KEY"
    case map = "EXT-X-MAP"
    case dateRange = "EXT-X-DATERANGE"
    case gap = "EXT-X-GAP"
    case bitrate = "EXT-X-BITRATE"
    case part = "EXT-X-PART"
    case cueOut = "EXT-X-CUE-OUT"
    case cueOutCont = "EXT-X-CUE-OUT-CONT"
    case cueIn = "EXT-X-CUE-IN"
    case oatcls = "EXT-OATCLS-SCTE35"
    case scte35 = "EXT-X-SCTE35"
    case asset = "EXT-X-ASSET"
    case media = "EXT-X-MEDIA"
    case streamInf = "EXT-X-STREAM-INF"
    case iFrameStreamInf = "EXT-X-I-FRAME-STREAM-INF"
    case sessionData = "EXT-X-SESSION-DATA"
    case sessionKey = "EXT-X-SESSION-KEY"
    case contentSteering = "EXT-X-CONTENT-STEERING"

    /// Finds the tag whose name is `name`: a switch on the length, then on the last eight bytes as an integer —
    /// constants generated from the names — then a comparison of the remaining leading bytes.
    static func lookup(_ name: UnsafeBufferPointer<UInt8>) -> KnownTag? {
        guard name.count >= 6, name.count <= 28, let base = name.baseAddress else { return nil }
        var tail: UInt64 = 0
        for index in max(0, name.count - 8)..<name.count { tail = tail << 8 | UInt64(base[index]) }
        let tag: KnownTag
        switch name.count {
        case 6:
            switch tail {
            case 0x0000455854494E46: tag = .extinf  // EXTINF
            case 0x00004558544D3355: tag = .extm3u  // EXTM3U
            default: return nil
            }
        case 9:
            switch tail {
            case 0x58542D582D474150: tag = .gap  // EXT-X-GAP
            case 0x58542D582D4B4559: tag = .key  // EXT-X-KEY
            case 0x58542D582D4D4150: tag = .map  // EXT-X-MAP
            default: return nil
            }
        case 10:
            switch tail {
            case 0x542D582D50415254: tag = .part  // EXT-X-PART
            case 0x542D582D534B4950: tag = .skip  // EXT-X-SKIP
            default: return nil
            }
        case 11:
            switch tail {
            case 0x2D582D4153534554: tag = .asset  // EXT-X-ASSET
            case 0x2D582D4D45444941: tag = .media  // EXT-X-MEDIA
            case 0x2D582D5354415254: tag = .start  // EXT-X-START
            default: return nil
            }
        case 12:
            switch tail {
            case 0x582D4355452D494E: tag = .cueIn  // EXT-X-CUE-IN
            case 0x582D444546494E45: tag = .define  // EXT-X-DEFINE
            case 0x582D534354453335: tag = .scte35  // EXT-X-SCTE35
            default: return nil
            }
        case 13:
            switch tail {
            case 0x2D42495452415445: tag = .bitrate  // EXT-X-BITRATE
            case 0x2D4355452D4F5554: tag = .cueOut  // EXT-X-CUE-OUT
            case 0x2D454E444C495354: tag = .endList  // EXT-X-ENDLIST
            case 0x2D56455253494F4E: tag = .version  // EXT-X-VERSION
            default: return nil
            }
        case 14:
            switch tail {
            case 0x504152542D494E46: tag = .partInf  // EXT-X-PART-INF
            default: return nil
            }
        case 15:
            switch tail {
            case 0x59544552414E4745: tag = .byteRange  // EXT-X-BYTERANGE
            case 0x41544552414E4745: tag = .dateRange  // EXT-X-DATERANGE
            default: return nil
            }
        case 16:
            switch tail {
            case 0x5245414D2D494E46: tag = .streamInf  // EXT-X-STREAM-INF
            default: return nil
            }
        case 17:
            switch tail {
            case 0x532D534354453335: tag = .oatcls  // EXT-OATCLS-SCTE35
            case 0x53494F4E2D4B4559: tag = .sessionKey  // EXT-X-SESSION-KEY
            default: return nil
            }
        case 18:
            switch tail {
            case 0x4F55542D434F4E54: tag = .cueOutCont  // EXT-X-CUE-OUT-CONT
            case 0x4F41442D48494E54: tag = .preloadHint  // EXT-X-PRELOAD-HINT
            case 0x494F4E2D44415441: tag = .sessionData  // EXT-X-SESSION-DATA
            default: return nil
            }
        case 19:
            switch tail {
            case 0x4E54494E55495459: tag = .discontinuity  // EXT-X-DISCONTINUITY
            case 0x4D45532D4F4E4C59: tag = .iFramesOnly  // EXT-X-I-FRAMES-ONLY
            case 0x4953542D54595045: tag = .playlistType  // EXT-X-PLAYLIST-TYPE
            default: return nil
            }
        case 20:
            switch tail {
            case 0x53455155454E4345: tag = .mediaSequence  // EXT-X-MEDIA-SEQUENCE
            case 0x2D434F4E54524F4C: tag = .serverControl  // EXT-X-SERVER-CONTROL
            case 0x4455524154494F4E: tag = .targetDuration  // EXT-X-TARGETDURATION
            default: return nil
            }
        case 22:
            switch tail {
            case 0x5354454552494E47: tag = .contentSteering  // EXT-X-CONTENT-STEERING
            case 0x4E2D5245504F5254: tag = .renditionReport  // EXT-X-RENDITION-REPORT
            default: return nil
            }
        case 23:
            switch tail {
            case 0x4154452D54494D45: tag = .programDateTime  // EXT-X-PROGRAM-DATE-TIME
            default: return nil
            }
        case 24:
            switch tail {
            case 0x5245414D2D494E46: tag = .iFrameStreamInf  // EXT-X-I-FRAME-STREAM-INF
            default: return nil
            }
        case 26:
            switch tail {
            case 0x5345474D454E5453: tag = .independentSegments  // EXT-X-INDEPENDENT-SEGMENTS
            default: return nil
            }
        case 28:
            switch tail {
            case 0x53455155454E4345: tag = .discontinuitySequence  // EXT-X-DISCONTINUITY-SEQUENCE
            default: return nil
            }
        default: return nil
        }
        let headCount = name.count - 8
        guard headCount > 0 else { return tag }
        var expected = tag.rawValue
        return expected.withUTF8 { memcmpEqual(base, $0.baseAddress!, headCount) } ? tag : nil
    }
}

/// Byte equality of two buffers of `count` bytes.
@inline(__always)
func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    var i = 0
    while i < count {
        if a[i] != b[i] { return false }
        i += 1
    }
    return true
}
