/// One partial segment of a media segment file (RFC 8216bis §4.4.4.9, HLS-RULES F3): a byte range of
/// the parent segment and its media duration, for
/// `EXT-X-PART:DURATION=<duration>,URI="<segment>",BYTERANGE="<length>@<offset>"[,INDEPENDENT=YES]`.
public struct MediaPart: Sendable, Hashable {
    /// Where the part starts in the segment file: on a transport packet boundary.
    public var offset: Int64
    public var length: Int64
    /// The part's media duration, in µs: from its first access unit's PTS to the next part's.
    public var durationMicroseconds: Int64
    /// `INDEPENDENT=YES`: the part's first video frame is a key frame, so a client can start
    /// decoding at this part. Every part of an audio-only segment is independent.
    public var independent: Bool

    public init(offset: Int64, length: Int64, durationMicroseconds: Int64, independent: Bool) {
        self.offset = offset
        self.length = length
        self.durationMicroseconds = durationMicroseconds
        self.independent = independent
    }

    /// The first byte after the part.
    public var end: Int64 { offset + length }
}

/// Cuts a whole MPEG-TS segment into partial segments: byte ranges that start where a frame starts.
///
/// ## Where a cut goes
///
/// Parts are cut on the *timing stream*: the video (the first video stream) when there is one, else
/// the first audio stream. A cut lies at the first transport packet of a PES packet of that stream
/// (its `payload_unit_start_indicator`), so a part holds whole access units; ffmpeg and Bento4
/// write one video access unit per PES packet. Audio is cut where its PES packets start: ffmpeg's
/// muxer puts ~0.36 s of AAC in one PES unless told otherwise (`-pes_payload_size`), which makes
/// that the finest cut of an audio-only segment.
///
/// The packets of other PIDs interleaved before a cut packet stay in the part before it: the muxed
/// audio of a part is what the muxer put there. One exception: a run of packets of no elementary
/// stream (PAT, PMT, SDT) directly before the cut packet goes with the part after it. ffmpeg repeats
/// the PAT and PMT right before every key frame, so an independent part then starts with the
/// tables a client needs to decode it. The parts are contiguous and cover the file: the first starts
/// at byte 0 (the segment's own PAT and PMT), the last ends at its last byte.
///
/// ## Durations
///
/// A part starts at the earliest PTS of the timing stream from its cut packet on (with B-frames the
/// packet in decode order is not the earliest; a cut is only made where no earlier packet presents
/// later), measured from the segment's earliest PTS and rounded to µs. A part lasts until the next
/// part's start; the last lasts the rest of the duration the playlist gives the segment, so the
/// parts add up to the segment's EXTINF exactly (F3: "the same samples, timing and metadata as the
/// parent").
public enum TransportStreamParts {
    /// Cuts `bytes`, a whole TS segment that lasts `segmentDurationMicroseconds` (its EXTINF), after
    /// each of `cutTimes`: µs after the segment's earliest PTS of the timing stream. A cut is made at
    /// the first PES packet of the timing stream that starts at or after the time. Times at or
    /// before the start, at or after the segment's end, past the last PES packet, or landing on the
    /// same PES packet as an earlier time make no cut, so no part is empty.
    ///
    /// - Throws: what ``TransportStreamProbe/probe(_:)`` throws.
    public static func cut(
        _ bytes: [UInt8], segmentDurationMicroseconds: Int64, at cutTimes: [Int64]
    ) throws(MediaProbeError) -> [MediaPart] {
        let probe = try TransportStreamProbe.probe(bytes)
        return cut(bytes, probe: probe, segmentDurationMicroseconds: segmentDurationMicroseconds, at: cutTimes)
    }

    /// ``cut(_:segmentDurationMicroseconds:at:)`` given `probe`, the probe of `bytes` (a publisher
    /// has it already). A segment with neither audio nor video is one part.
    public static func cut(
        _ bytes: [UInt8], probe: SegmentProbe, segmentDurationMicroseconds: Int64, at cutTimes: [Int64]
    ) -> [MediaPart] {
        let video = probe.video.flatMap { video in probe.videoPID.map { (pid: $0, format: video.format) } }
        let points: [CutPoint]
        if let pid = video?.pid ?? probe.audioPID {
            points = cutPoints(bytes, pid: pid, format: video?.format)
        } else {
            points = []
        }

        // Part starts as (index into points, µs); the first part starts with the first PES packet.
        var starts: [(point: Int, time: Int64)] = [(0, 0)]
        var next = 1
        for time in cutTimes.sorted() where time > starts[starts.count - 1].time && time < segmentDurationMicroseconds {
            while next < points.count, !(points[next].clean && points[next].time >= time) { next += 1 }
            guard next < points.count, points[next].time < segmentDurationMicroseconds else { break }
            starts.append((next, points[next].time))
            next += 1
        }

        var parts: [MediaPart] = []
        var offset = 0
        for (index, start) in starts.enumerated() {
            let isLast = index + 1 == starts.count
            let end = isLast ? bytes.count : partStart(bytes, at: points[starts[index + 1].point].offset, after: offset, probe)
            let endTime = isLast ? segmentDurationMicroseconds : starts[index + 1].time
            let independent = video == nil || (points.indices.contains(start.point) && points[start.point].keyFrame)
            parts.append(
                MediaPart(
                    offset: Int64(offset), length: Int64(end - offset), durationMicroseconds: endTime - start.time,
                    independent: independent))
            offset = end
        }
        return parts
    }

    /// Cut times for one segment given the part target (PART-TARGET): every multiple of the target
    /// before the segment's end, so that no part is longer than the target before the cuts are
    /// snapped to frames, and only the last is shorter (F3 exempts the final part of a parent from
    /// the 85 % floor). A remainder shorter than a frame makes no sliver: ``cut(_:segmentDurationMicroseconds:at:)``
    /// finds no PES packet to cut at there.
    ///
    /// Not the `k × target < duration − target / 2` rule that folds a short remainder into the part
    /// before: that part would be up to 1.5 × the target, and F3 says a part MUST NOT exceed it.
    public static func cutTimes(segmentDurationMicroseconds: Int64, partTargetMicroseconds: Int64) -> [Int64] {
        guard partTargetMicroseconds > 0 else { return [] }
        return Array(stride(from: partTargetMicroseconds, to: segmentDurationMicroseconds, by: Int(partTargetMicroseconds)))
    }

    /// A PES packet of the timing stream where a part may start.
    struct CutPoint {
        /// Its first transport packet.
        var offset: Int
        /// The earliest PTS from this PES packet on, from the segment's earliest PTS, in µs.
        var time: Int64
        /// No PES packet before it presents at or after `time`: the parts before and after the cut
        /// hold disjoint spans of time. Always true without B-frames.
        var clean: Bool
        var keyFrame: Bool
    }

    /// Every PES packet of `pid` with a PTS, in stream order. `format` is the video's, `nil` for audio.
    static func cutPoints(_ bytes: [UInt8], pid: UInt16, format: VideoFormat?) -> [CutPoint] {
        var found: [(offset: Int, pts: UInt64, keyFrame: Bool)] = []
        PESPacket.forEach(in: bytes, packets: TransportStreamProbe.packetOffsets(bytes), pid: pid) { pes in
            guard !pes.scrambled, let header = PESHeader(pes.bytes), let pts = header.pts else { return }
            let keyFrame = format.map { KeyFrameKind(accessUnit: pes.bytes, range: header.payload, format: $0) != nil }
            found.append((pes.range.lowerBound, pts, keyFrame ?? false))
        }
        guard let origin = found.first?.pts else { return [] }

        // Ticks from the first PES packet's PTS (negative for B-frames presented before it).
        let ticks = found.map { Timestamps.distance(from: origin, to: $0.pts) }
        var earliestFrom = ticks  // the minimum over each suffix
        for index in ticks.indices.dropLast().reversed() { earliestFrom[index] = min(ticks[index], earliestFrom[index + 1]) }
        let first = earliestFrom[0]
        var latestBefore = Int64.min
        var points: [CutPoint] = []
        points.reserveCapacity(found.count)
        for (index, pes) in found.enumerated() {
            points.append(
                CutPoint(
                    offset: pes.offset, time: Timestamps.microseconds(ticks: earliestFrom[index] - first),
                    clean: latestBefore < earliestFrom[index], keyFrame: pes.keyFrame))
            latestBefore = max(latestBefore, ticks[index])
        }
        return points
    }

    /// Where a part cut at the packet at `offset` starts: there, or earlier by the run of packets of
    /// no elementary stream (PAT, PMT, SDT) right before it, never at or before `previous`, the start
    /// of the part before.
    private static func partStart(_ bytes: [UInt8], at offset: Int, after previous: Int, _ probe: SegmentProbe) -> Int {
        let size = TransportStreamProbe.packetSize
        var start = offset
        while start - size > previous, bytes[start - size] == 0x47, let packet = TransportPacket(bytes, at: start - size),
            !probe.streams.contains(where: { $0.pid == packet.pid })
        {
            start -= size
        }
        return start
    }
}
