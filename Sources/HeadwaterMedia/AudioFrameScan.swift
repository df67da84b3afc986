/// Walks consecutive audio frames in an elementary stream, resynchronising after damage, and
/// relates them to the PTS values of the PES packets that carried them.
struct AudioFrameScan {
    /// A PTS and the stream offset of the PES payload it came with; it applies to the first frame
    /// that starts at or after that offset (ISO/IEC 13818-1 §2.4.3.7).
    struct Anchor {
        var offset: Int
        var pts: UInt64
    }

    /// A timed frame: its PTS and the number of samples (of primary frames) before it.
    struct TimedFrame {
        var pts: UInt64
        var samplesBefore: Int
    }

    /// The first primary frame header; `nil` when no frame was found.
    private(set) var first: AudioFrameHeader?
    /// Samples in all primary frames of the stream's format and rate.
    private(set) var totalSamples = 0
    private(set) var firstTimed: TimedFrame?
    private(set) var lastTimed: TimedFrame?

    /// Scans `bytes[start...]`. With `syntax` `nil` (packed audio) the syntax is detected from the
    /// first frame that is followed by another frame (or ends the data) and then kept. With
    /// `firstFrameAtStart`, no frame is found unless one starts exactly at `start`.
    init(_ bytes: [UInt8], from start: Int, syntax: AudioSyntax?, anchors: [Anchor] = [], firstFrameAtStart: Bool = false) {
        var syntax = syntax
        var position = max(start, 0)
        var anchorIndex = 0
        var pending: Anchor?
        var locked = false  // the previous frame ended exactly here
        while position < bytes.count {
            guard let header = frame(at: position, syntax: &syntax, locked: locked, bytes: bytes) else {
                if firstFrameAtStart, first == nil { return }
                position += 1
                locked = false
                continue
            }
            locked = true
            while anchorIndex < anchors.count, anchors[anchorIndex].offset <= position {
                pending = anchors[anchorIndex]
                anchorIndex += 1
            }
            if header.isPrimary {
                if first == nil { first = header }
                if let anchor = pending {
                    let timed = TimedFrame(pts: anchor.pts, samplesBefore: totalSamples)
                    if firstTimed == nil { firstTimed = timed }
                    lastTimed = timed
                    pending = nil
                }
                totalSamples += header.samplesPerFrame
            }
            position += header.frameLength
        }
    }

    /// The complete frame at `position`, if there is one that fits the stream. Outside a locked run
    /// the frame must also be followed by another header (or end the data), so that random bytes
    /// resembling a sync word are not taken for a frame.
    private func frame(at position: Int, syntax: inout AudioSyntax?, locked: Bool, bytes: [UInt8]) -> AudioFrameHeader? {
        guard let candidateSyntax = syntax ?? AudioFrameHeader.syntax(of: bytes, at: position),
            let header = AudioFrameHeader.parse(bytes, at: position, syntax: candidateSyntax),
            header.frameLength <= bytes.count - position
        else { return nil }
        if let first, !header.isCompatible(with: first) { return nil }
        if !locked {
            let next = position + header.frameLength
            if next < bytes.count {
                guard let following = AudioFrameHeader.parse(bytes, at: next, syntax: candidateSyntax),
                    following.isCompatible(with: header)
                else { return nil }
            }
        }
        syntax = candidateSyntax
        return header
    }

    /// Microseconds from the first timed frame to the end of the last frame.
    var timedDurationMicroseconds: Int64 {
        guard let first, let firstTimed, let lastTimed else { return 0 }
        let ticks = Timestamps.distance(from: firstTimed.pts, to: lastTimed.pts)
        let samples = Int64(totalSamples - lastTimed.samplesBefore)
        return Timestamps.microseconds(ticks: ticks, plusSeconds: samples, over: Int64(first.sampleRate))
    }

    /// Microseconds of all primary frames, from their sample count.
    var sampleDurationMicroseconds: Int64 {
        guard let first else { return 0 }
        return Timestamps.microseconds(ticks: 0, plusSeconds: Int64(totalSamples), over: Int64(first.sampleRate))
    }
}
