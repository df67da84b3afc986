/// Per-PID state while a transport stream is probed: PES reassembly plus what the video or audio
/// parser has learned so far.
struct ElementaryStreamState {
    let pid: UInt16
    let streamType: UInt8
    let kind: StreamKind
    private(set) var scrambledPackets = 0

    private var pes: [UInt8] = []
    private var pesActive = false

    // Video
    private(set) var h264: H264SequenceParameterSet?
    private(set) var hevc: HEVCSequenceParameterSet?
    /// The first reason a sequence parameter set was rejected, when none parsed.
    private(set) var parameterSetError: String?
    /// Whether the first slice NAL unit of the stream belongs to an IDR picture; `nil` before one is seen.
    private(set) var firstSliceIsIDR: Bool?
    /// PTS of every video PES packet (one access unit each), in stream order.
    private(set) var accessUnitPTS: [UInt64] = []

    // Audio
    private(set) var audioBytes: [UInt8] = []
    private(set) var audioAnchors: [AudioFrameScan.Anchor] = []

    init(pid: UInt16, streamType: UInt8, kind: StreamKind) {
        self.pid = pid
        self.streamType = streamType
        self.kind = kind
    }

    var isVideo: Bool { kind.isVideo }

    var audioSyntax: AudioSyntax? {
        if case .audio(let syntax) = kind { return syntax }
        return nil
    }

    mutating func markScrambled() { scrambledPackets += 1 }

    /// Feeds the payload of one transport packet of this PID.
    mutating func receive(_ payload: ArraySlice<UInt8>, unitStart: Bool) {
        guard kind != .other else { return }
        if unitStart {
            flush()
            pes = Array(payload)
            pesActive = true
        } else if pesActive, !isVideo || needsVideoScan {
            // Once the SPS and the first slice are known, a video PES packet is only needed for the
            // PTS in its header, which the first packet carries.
            pes += payload
        }
    }

    /// Processes the PES packet in progress, if any. Call once after the last packet.
    mutating func flush() {
        guard pesActive else { return }
        pesActive = false
        guard let header = PESHeader(pes) else { return }
        switch kind {
        case .h264, .hevc:
            if let pts = header.pts { accessUnitPTS.append(pts) }
            scanVideo(header.payload)
        case .audio:
            if let pts = header.pts { audioAnchors.append(.init(offset: audioBytes.count, pts: pts)) }
            audioBytes += pes[header.payload]
        case .other:
            break
        }
    }

    private var hasParameterSet: Bool { h264 != nil || hevc != nil }

    private var needsVideoScan: Bool { !hasParameterSet || firstSliceIsIDR == nil }

    /// Looks for the first SPS and the first slice, then stops scanning.
    private mutating func scanVideo(_ payload: Range<Int>) {
        guard needsVideoScan else { return }
        var units = NALUnitIterator(pes, range: payload)
        while let unit = units.next() {
            let header = pes[unit.lowerBound]
            if kind == .h264 {
                let type = header & 0x1F
                if type == 7, h264 == nil {
                    do throws(BitstreamError) {
                        h264 = try H264SequenceParameterSet(rbsp: rbsp(pes, (unit.lowerBound + 1)..<unit.upperBound))
                    } catch {
                        parameterSetError = parameterSetError ?? error.description
                    }
                }
                if (1...5).contains(type), firstSliceIsIDR == nil { firstSliceIsIDR = type == 5 }
            } else {
                guard unit.count >= 2 else { continue }
                let type = (header >> 1) & 0x3F
                if type == 33, hevc == nil {
                    do throws(BitstreamError) {
                        hevc = try HEVCSequenceParameterSet(rbsp: rbsp(pes, (unit.lowerBound + 2)..<unit.upperBound))
                    } catch {
                        parameterSetError = parameterSetError ?? error.description
                    }
                }
                if type <= 31, firstSliceIsIDR == nil { firstSliceIsIDR = type == 19 || type == 20 }
            }
            if hasParameterSet, firstSliceIsIDR != nil { return }
        }
    }

    // MARK: Results

    /// The video description, or the reason there is none.
    func videoInfo() throws(MediaProbeError) -> VideoInfo {
        let frameRate: FrameRate?
        let info: VideoInfo
        if let sps = h264 {
            frameRate = Self.vuiFrameRate(sps.timing) ?? ptsFrameRate
            info = VideoInfo(
                format: .h264, codec: sps.codec, profile: Int(sps.profileIDC), level: Int(sps.levelIDC),
                width: sps.width, height: sps.height, frameRate: frameRate)
        } else if let sps = hevc {
            frameRate = ptsFrameRate
            info = VideoInfo(
                format: .hevc, codec: sps.codec, profile: Int(sps.profileIDC), level: Int(sps.levelIDC),
                width: sps.width, height: sps.height, frameRate: frameRate)
        } else if let reason = parameterSetError {
            throw .invalidParameterSet(pid: pid, reason: reason)
        } else if scrambledPackets > 0 {
            throw .scrambled(pid: pid)
        } else {
            throw .missingParameterSets(pid: pid)
        }
        return info
    }

    /// VUI timing as a frame rate when it is plausible (1…480 fps).
    private static func vuiFrameRate(_ timing: VUITiming?) -> FrameRate? {
        guard let timing else { return nil }
        let ticks = 2 * UInt64(timing.numUnitsInTick)
        let scale = UInt64(timing.timeScale)
        guard scale >= ticks, scale <= 480 * ticks else { return nil }
        return FrameRate(numerator: scale, denominator: ticks, source: .vuiTiming)
    }

    /// 90 kHz over the median delta between sorted, distinct access unit PTS values.
    private var ptsFrameRate: FrameRate? {
        guard let origin = accessUnitPTS.first else { return nil }
        let sorted = Set(accessUnitPTS.map { Timestamps.distance(from: origin, to: $0) }).sorted()
        guard sorted.count >= 2 else { return nil }
        let deltas = zip(sorted.dropFirst(), sorted).map { $0 - $1 }.sorted()
        return FrameRate(numerator: 90_000, denominator: UInt64(deltas[(deltas.count - 1) / 2]), source: .timestamps)
    }

    /// Earliest PTS and duration of the video track: from its earliest to its latest PTS plus one frame.
    func videoTiming(frameRate: FrameRate?) throws(MediaProbeError) -> (firstPTS: UInt64, microseconds: Int64) {
        guard let origin = accessUnitPTS.first else { throw .missingTimestamps(pid: pid) }
        var earliest: Int64 = 0
        var latest: Int64 = 0
        for pts in accessUnitPTS {
            let distance = Timestamps.distance(from: origin, to: pts)
            earliest = min(earliest, distance)
            latest = max(latest, distance)
        }
        let frame = frameRate.map { (Int64(clamping: $0.denominator), Int64(clamping: $0.numerator)) } ?? (0, 1)
        let microseconds = Timestamps.microseconds(ticks: latest - earliest, plusSeconds: frame.0, over: frame.1)
        return (Timestamps.adding(earliest, to: origin), microseconds)
    }

    /// The audio frames of the stream.
    func audioScan() -> AudioFrameScan {
        AudioFrameScan(audioBytes, from: 0, syntax: audioSyntax, anchors: audioAnchors)
    }

    /// The audio description, or the reason there is none.
    func audioInfo(_ scan: AudioFrameScan) throws(MediaProbeError) -> AudioInfo {
        guard let header = scan.first else {
            throw scrambledPackets > 0 ? .scrambled(pid: pid) : .missingAudioFrames(pid: pid)
        }
        return AudioInfo(
            format: header.format, codec: header.codec, objectType: header.objectType,
            sampleRate: header.sampleRate, channels: header.channels)
    }
}
