/// Every key frame of a transport stream segment's video, as an I-frame playlist
/// (`EXT-X-I-FRAMES-ONLY`, RFC 8216bis §4.4.3.6) lists it: a byte range of the segment
/// (`EXT-X-BYTERANGE`), the key frame's presentation time, and its `EXTINF`. With ``video`` (CODECS and
/// RESOLUTION) and ``BitRates`` (BANDWIDTH and AVERAGE-BANDWIDTH) it gives everything an
/// `EXT-X-I-FRAME-STREAM-INF` needs. Computed once per segment, from its bytes and its
/// ``SegmentProbe``.
///
/// ## What a range holds
///
/// An entry's ``Entry/range`` starts at the first transport packet of the key frame's PES packet and
/// ends with the last packet of that PES (the last packet of the video PID before its next
/// `payload_unit_start_indicator`). Packets of other PIDs interleaved in between, audio or a
/// repeated PAT, are inside it, as TS interleaves them; packets after the key frame's last one are
/// not. Every range starts on a packet boundary and holds exactly one key frame, assuming one
/// access unit per video PES packet (as ffmpeg's and Bento4's muxers write it).
///
/// ## The PAT and PMT are not in the ranges
///
/// A decoder needs the PAT and PMT first. They are the segment's Media Initialization Section
/// (8216bis §3.1.1: "a Program Association Table (PAT) followed by a Program Map Table (PMT)"),
/// given once per segment as ``initializationSection``, and no range includes them, not even the
/// first key frame's, whose PES directly follows them:
/// - 8216bis §4.4.3.6 (RFC 8216 §4.3.3.6; HLS-RULES B19): "The byte range of an I-frame segment with
///   an EXT-X-BYTERANGE tag applied to it MUST NOT include its Media Initialization Section; clients
///   can assume that the Media Initialization Section is defined by the EXT-X-MAP tag, or is located
///   between the start of the resource and the offset of the first I-frame segment in that resource."
/// - Packagers do exactly this. Bento4's `mp42hls` records each I-frame at the position of its
///   video sample, after the PAT and PMT it writes at the start of each segment; the TS I-frame
///   playlist in Apple's developer forums thread 4252 lists `8648@376`, `16920@49256` and
///   `13724@150776` for one segment: the first I-frame right after the two-packet PAT and PMT
///   (376 bytes), the others where their PES starts.
/// - So a key frame in the middle of a segment gets no PAT and PMT of its own either: a client
///   decodes it after the segment's. (ffmpeg's muxer repeats the PAT and PMT right before every video
///   key frame; those copies lie between the previous frame's packets and the key frame's, in no
///   range.)
///
/// An I-frame playlist therefore lists ``Entry/range`` and tells clients where the tables are, either
/// by the implicit rule above (``initializationSection`` ends where the first range starts when the
/// PES follows the tables directly, as ffmpeg and Bento4 write segments) or explicitly, with
/// `EXT-X-MAP:URI="<segment>",BYTERANGE="<initializationSection.count>@0"` (version 5) before each
/// segment's entries, which also holds when something else sits between the tables and the first
/// key frame. Exactly the bytes a client decodes are then `initializationSection` followed by the
/// range.
///
/// ## Durations
///
/// An entry's `EXTINF` is the time from its PTS to the next key frame's; the last entry's runs to the
/// end of the segment as ``SegmentProbe`` measures it: its last video PTS plus one frame. The
/// durations therefore add up to the segment's duration minus ``leadingMicroseconds``, the frames
/// before the first key frame (zero when the segment starts with one); an I-frame
/// playlist adds those to the previous segment's last entry, whose span they continue.
///
/// ## CODECS and RESOLUTION
///
/// ``video`` is the probe's: `video.codec` and `video.resolution`. The I-frame stream presents video
/// only, so its CODECS is the video codec alone, even where audio packets are interleaved in a
/// range.
///
/// fMP4 segments are not indexed: HeadwaterMedia does not parse ISO BMFF fragments.
public struct IFrameIndex: Sendable, Hashable {
    /// One key frame: an I-frame playlist entry.
    public struct Entry: Sendable, Hashable {
        /// The key frame's bytes in the segment: `EXT-X-BYTERANGE:<range.count>@<range.lowerBound>`.
        public var range: Range<Int>
        /// The key frame's 90 kHz presentation time stamp (33 bits), from its PES header.
        public var pts: UInt64
        /// The `EXTINF`: to the next key frame's PTS, or for the last one to the segment's end.
        public var durationMicroseconds: Int64
        public var kind: KeyFrameKind
        /// Whether the key frame's first packet has `random_access_indicator` set: a hint only, not
        /// how key frames are found (see ``KeyFrameKind``).
        public var randomAccessIndicator: Bool

        public init(
            range: Range<Int>, pts: UInt64, durationMicroseconds: Int64, kind: KeyFrameKind, randomAccessIndicator: Bool
        ) {
            self.range = range
            self.pts = pts
            self.durationMicroseconds = durationMicroseconds
            self.kind = kind
            self.randomAccessIndicator = randomAccessIndicator
        }
    }

    /// The key frames in stream order, ranges ascending and disjoint.
    public var entries: [Entry]
    /// The segment's PAT and PMT: from its first byte to the end of the packet that completes the
    /// PMT of the first program, which follows the first PAT. `nil` when the bytes before the first
    /// key frame do not hold both (HLS-RULES B18 asks for them at the start): such a segment has no
    /// Media Initialization Section to point an I-frame playlist at.
    public var initializationSection: Range<Int>?
    /// The video stream, as probed: CODECS (`codec`) and RESOLUTION (`resolution`).
    public var video: VideoInfo
    /// The PID of the video stream indexed (the first in the program map table).
    public var videoPID: UInt16
    /// The segment's earliest video PTS (``SegmentProbe/firstPTS``).
    public var firstPTS: UInt64
    /// The segment's video duration (``SegmentProbe/durationMicroseconds``).
    public var durationMicroseconds: Int64

    public init(
        entries: [Entry], initializationSection: Range<Int>?, video: VideoInfo, videoPID: UInt16, firstPTS: UInt64,
        durationMicroseconds: Int64
    ) {
        self.entries = entries
        self.initializationSection = initializationSection
        self.video = video
        self.videoPID = videoPID
        self.firstPTS = firstPTS
        self.durationMicroseconds = durationMicroseconds
    }

    /// The time before the first key frame (all of the segment when it has none), which no entry of
    /// this segment covers.
    public var leadingMicroseconds: Int64 {
        max(durationMicroseconds - entries.reduce(0) { $0 + $1.durationMicroseconds }, 0)
    }
}

// MARK: - Indexing

extension IFrameIndex {
    /// Probes `bytes`, a whole transport stream segment, and indexes its key frames; `nil` when it
    /// has no video.
    ///
    /// - Throws: what ``TransportStreamProbe/probe(_:)`` throws.
    public static func index(transportStream bytes: [UInt8]) throws(MediaProbeError) -> IFrameIndex? {
        IFrameIndex(transportStream: bytes, probe: try TransportStreamProbe.probe(bytes))
    }

    /// Indexes the key frames of `bytes`, a whole transport stream segment, given `probe`, its probe
    /// (ingest has it already, so each segment is parsed for its tables and timing once); `nil` when
    /// the probe found no video.
    public init?(transportStream bytes: [UInt8], probe: SegmentProbe) {
        guard let video = probe.video, let firstPTS = probe.firstPTS,
            let pid = probe.videoPID
        else { return nil }
        let packets = TransportStreamProbe.packetOffsets(bytes)
        let keyFrames = Self.keyFrames(bytes, packets, pid: pid, format: video.format)

        // Each key frame's start from the segment's first PTS, in µs; each EXTINF is the next start
        // minus this one, so that they add up exactly.
        let starts = keyFrames.map { Timestamps.microseconds(ticks: Timestamps.distance(from: firstPTS, to: $0.pts)) }
        var entries: [Entry] = []
        entries.reserveCapacity(keyFrames.count)
        for (index, frame) in keyFrames.enumerated() {
            let end = index + 1 < starts.count ? starts[index + 1] : probe.durationMicroseconds
            entries.append(
                Entry(
                    range: frame.range, pts: frame.pts, durationMicroseconds: max(end - starts[index], 0),
                    kind: frame.kind, randomAccessIndicator: frame.randomAccessIndicator))
        }

        var initializationSection: Range<Int>?
        if let end = Self.programTablesEnd(bytes, packets), end <= entries.first?.range.lowerBound ?? bytes.count {
            initializationSection = 0..<end
        }
        self.init(
            entries: entries, initializationSection: initializationSection, video: video, videoPID: pid,
            firstPTS: firstPTS, durationMicroseconds: probe.durationMicroseconds)
    }

    /// A key frame's PES packet, found in the segment.
    private struct KeyFramePES {
        var range: Range<Int>
        var pts: UInt64
        var kind: KeyFrameKind
        var randomAccessIndicator: Bool
    }

    /// Reassembles every PES packet of `pid` and keeps those holding a key frame. A PES packet
    /// continued from the previous segment (no start in this one), a scrambled one, and one without
    /// a PTS (which cannot be placed in time) are skipped.
    private static func keyFrames(
        _ bytes: [UInt8], _ packets: [Int], pid: UInt16, format: VideoFormat
    ) -> [KeyFramePES] {
        var found: [KeyFramePES] = []
        PESPacket.forEach(in: bytes, packets: packets, pid: pid) { pes in
            guard !pes.scrambled, let header = PESHeader(pes.bytes), let pts = header.pts,
                let kind = KeyFrameKind(accessUnit: pes.bytes, range: header.payload, format: format)
            else { return }
            found.append(
                KeyFramePES(range: pes.range, pts: pts, kind: kind, randomAccessIndicator: pes.randomAccessIndicator))
        }
        return found
    }

    /// The end of the packet that completes the PMT of the first program of the first valid PAT,
    /// counting only a PMT that comes after that PAT (a demuxer reads the PMT's PID from the PAT).
    private static func programTablesEnd(_ bytes: [UInt8], _ packets: [Int]) -> Int? {
        var assembler = SectionAssembler()
        var program: ProgramAssociationTable.Program?
        for offset in packets {
            guard let packet = TransportPacket(bytes, at: offset), !packet.scrambled, let payload = packet.payload
            else { continue }
            if let wanted = program {
                guard packet.pid == wanted.pmtPID else { continue }
                for section in assembler.append(bytes[payload], unitStart: packet.unitStart) {
                    if let pmt = ProgramMapTable(section: section), pmt.programNumber == wanted.number {
                        return offset + TransportStreamProbe.packetSize
                    }
                }
            } else if packet.pid == 0 {
                for section in assembler.append(bytes[payload], unitStart: packet.unitStart) {
                    if let first = ProgramAssociationTable(section: section)?.programs.first {
                        program = first
                        assembler = SectionAssembler()
                        break
                    }
                }
            }
        }
        return nil
    }
}

// MARK: - BANDWIDTH

extension IFrameIndex {
    /// The bit rates of an I-frame playlist, for `EXT-X-I-FRAME-STREAM-INF`.
    ///
    /// RFC 8216bis §4.1 defines them for every Media Playlist, and in an I-frame playlist each
    /// entry is a Media Segment: its size is its byte range's length and its duration its `EXTINF`.
    /// "The segment bit rate of a Media Segment is the size of the Media Segment divided by its EXTINF
    /// duration"; BANDWIDTH (§4.4.6.2, which §4.4.6.3 applies to I-frame streams) is at least the
    /// peak segment bit rate, "the largest bit rate of any contiguous set of segments whose total
    /// duration is between 0.5 and 1.5 times the target duration" (+ 0.5 s in 8216bis; HLS-RULES
    /// E2); AVERAGE-BANDWIDTH is the average segment bit rate, all bits over the playlist's duration.
    /// The Media Initialization Section (``IFrameIndex/initializationSection``) is not a segment and
    /// is not counted. Computed with ``BitrateMeter``: bits per second, rounded up, exact.
    public struct BitRates: Sendable, Hashable {
        /// The peak segment bit rate (BANDWIDTH); `nil` while no contiguous run of entries spans
        /// 0.5 × the target duration.
        public var peak: Int?
        /// The average segment bit rate (AVERAGE-BANDWIDTH); `nil` while the entries last 0 s.
        public var average: Int?
        /// The largest bit rate of a single entry (Bento4's `mp42hls` declares this as BANDWIDTH):
        /// never below ``peak``, since a run's bit rate is an average of its entries'. Entries of 0 s
        /// are left out.
        public var largestEntry: Int?

        /// - Parameters:
        ///   - entries: each entry's byte range length and `EXTINF` in µs, in playlist order.
        ///   - targetDuration: the I-frame playlist's EXT-X-TARGETDURATION, in seconds.
        public init(entries: some Sequence<(byteCount: Int, durationMicroseconds: Int64)>, targetDuration: Int) {
            var meter = BitrateMeter(targetDuration: targetDuration)
            var largest: Int?
            for entry in entries {
                meter.add(byteCount: entry.byteCount, durationMicroseconds: entry.durationMicroseconds)
                guard entry.durationMicroseconds > 0 else { continue }
                let rate = BitrateMeter.bitRate(
                    bytes: Int128(max(entry.byteCount, 0)), microseconds: Int128(entry.durationMicroseconds))
                largest = max(largest ?? rate, rate)
            }
            peak = meter.peakBitRate
            average = meter.averageBitRate
            largestEntry = largest
        }

        /// The bit rates of the entries of `indexes`, in order, with the durations the indexes give.
        public init(indexes: some Sequence<IFrameIndex>, targetDuration: Int) {
            let entries = indexes.lazy.flatMap(\.entries).map {
                (byteCount: $0.range.count, durationMicroseconds: $0.durationMicroseconds)
            }
            self.init(entries: entries, targetDuration: targetDuration)
        }
    }
}
