public import HeadwaterHLS

/// Generates consecutive versions of one correct live media playlist, the way a well-behaved origin
/// publishes them: segments are appended at the tail and slid off the head with
/// ``MediaPlaylist/removingSegmentsFromHead(_:)`` while at least 3×TD (plus a margin) remains.
///
/// Everything comes from one seed, so a failing property test names its seed and the seed replays it.
/// Along the way it exercises what SSAI origins get wrong: random EXTINF ≤ TD, ad breaks with
/// DISCONTINUITY on both edges, PROGRAM-DATE-TIME on every discontinuity, a DATERANGE opened at the
/// splice (START-DATE, PLANNED-DURATION, SCTE35-OUT) and closed later under the same ID (DURATION,
/// SCTE35-IN), METHOD=NONE around clear ads with the content key re-emitted after them, key
/// rotation, init sections changing at discontinuities, byte-range sub-segments, GAP and BITRATE.
public struct LiveSimulator: Sendable {
    /// What a channel looks like; ``random(using:)`` draws one per seed.
    public struct Options: Sendable, Hashable {
        public var targetDuration: Int = 6
        /// `.m4s` segments with EXT-X-MAP instead of `.ts`.
        public var fragmentedMP4 = false
        /// Content segments as EXT-X-BYTERANGE sub-ranges of larger files.
        public var byteRanges = false
        /// AES-128 content with clear ads (METHOD=NONE).
        public var encrypted = false
        /// A PROGRAM-DATE-TIME on every segment, not only on the first and on discontinuities.
        public var datesOnEverySegment = false
        /// Target durations kept beyond the 3×TD minimum.
        public var extraWindow = 1
        /// SERVER-CONTROL with CAN-SKIP-UNTIL (6×TD) and a window long enough to skip, so that
        /// ``deltaUpdate(of:)`` has something to leave out.
        public var deltaUpdates = false
        public var firstMediaSequence: UInt64 = 1
        public var firstDiscontinuitySequence: UInt64? = nil

        public init() {}

        public static func random(using random: inout SeededRandom) -> Options {
            var options = Options()
            options.targetDuration = random.pick([2, 4, 6, 6, 10])
            options.fragmentedMP4 = random.chance(0.5)
            options.byteRanges = random.chance(0.3)
            options.encrypted = random.chance(0.4)
            options.datesOnEverySegment = random.chance(0.3)
            options.extraWindow = random.int(0...3)
            options.deltaUpdates = random.chance(0.3)
            options.firstMediaSequence = UInt64(random.int(1...100_000))
            options.firstDiscontinuitySequence = random.chance(0.5) ? UInt64(random.int(0...50)) : nil
            return options
        }
    }

    public let options: Options
    /// The version most recently published.
    public private(set) var playlist: MediaPlaylist
    private var random: SeededRandom

    // Timeline state.
    private var nextDate: ProgramDateTime
    private var segmentNumber = 0
    private var contentKey: Key?
    private var contentKeyNumber = 0
    private var contentMap: MediaInitializationSection?
    private var contentMapNumber = 0
    private var chunk: (number: Int, offset: UInt64, segments: Int)?
    private var chunkNumber = 0
    private var segmentsUntilBreak: Int
    private var breakNumber = 0
    private var adBreak: AdBreak?
    private var pendingClose: AdBreak?

    private struct AdBreak: Sendable {
        var id: String
        var eventID: UInt32
        var durations: [HLSDuration]
        var played: Int = 0
        var splicePTS: UInt64
        var actual: HLSDuration { durations.reduce(.zero, +) }
    }

    public init(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        self.init(options: .random(using: &random), random: random)
    }

    public init(seed: UInt64, options: Options) {
        self.init(options: options, random: SeededRandom(seed: seed))
    }

    private init(options: Options, random: SeededRandom) {
        self.options = options
        self.random = random
        // Somewhere in 2026, at a whole millisecond.
        nextDate = ProgramDateTime(
            millisecondsSinceEpoch: 1_767_225_600_000 + Int64(self.random.int(0...31_000_000)) * 1000)
        segmentsUntilBreak = self.random.int(1...6)
        var playlist = MediaPlaylist(targetDuration: options.targetDuration, mediaSequence: options.firstMediaSequence)
        playlist.discontinuitySequence = options.firstDiscontinuitySequence
        playlist.version = options.fragmentedMP4 ? 6 : options.byteRanges ? 4 : 3
        if options.deltaUpdates {
            playlist.serverControl = ServerControl(attributes: [
                Attribute("CAN-SKIP-UNTIL", .decimal(.seconds(6 * Int64(options.targetDuration)))),
                Attribute("CAN-BLOCK-RELOAD", .token("YES")),
            ])
        }
        self.playlist = playlist
        while self.playlist.duration < minimumWindow { append() }
    }

    /// The shortest window the simulator keeps after sliding.
    public var minimumWindow: HLSDuration {
        let targetDurations = options.deltaUpdates ? 7 + options.extraWindow : 3 + options.extraWindow
        return .seconds(Int64(targetDurations * options.targetDuration))
    }

    /// Publishes the next version: one or two new segments, then the head slides.
    @discardableResult
    public mutating func step() -> MediaPlaylist {
        append()
        if random.chance(0.2) { append() }
        var removable = 0
        var remaining = playlist.duration
        while removable < playlist.segments.count - 1,
            remaining - playlist.segments[removable].duration >= minimumWindow
        {
            remaining -= playlist.segments[removable].duration
            removable += 1
        }
        playlist = playlist.removingSegmentsFromHead(removable)
        return playlist
    }

    /// The first version and `steps` more.
    public static func snapshots(seed: UInt64, steps: Int) -> [MediaPlaylist] {
        var simulator = LiveSimulator(seed: seed)
        var result = [simulator.playlist]
        for _ in 0..<steps { result.append(simulator.step()) }
        return result
    }

    /// The Playlist Delta Update (`_HLS_skip=YES`) a server would send for `playlist`: segments whose
    /// start is further from the end than CAN-SKIP-UNTIL become one EXT-X-SKIP; the KEY, MAP, date
    /// and byte-range offset in effect are re-emitted on the first listed segment; every DATERANGE
    /// stays; MEDIA-SEQUENCE and DISCONTINUITY-SEQUENCE are those of the full playlist. `nil` when
    /// the playlist does not allow skipping or nothing is far enough to skip.
    public static func deltaUpdate(of playlist: MediaPlaylist) -> MediaPlaylist? {
        guard let boundary = playlist.serverControl?.canSkipUntil, !playlist.endList else { return nil }
        // Skip each segment whose start is further than the boundary from the end; list at least one.
        var startFromEnd = playlist.duration
        var skipped = 0
        while skipped < playlist.segments.count - 1, startFromEnd > boundary {
            startFromEnd -= playlist.segments[skipped].duration
            skipped += 1
        }
        guard skipped > 0 else { return nil }
        var delta = playlist.removingSegmentsFromHead(skipped)
        delta.mediaSequence = playlist.effectiveMediaSequence
        delta.discontinuitySequence = playlist.discontinuitySequence
        delta.segments[0].tags.dateRanges =
            playlist.segments[..<skipped].flatMap(\.tags.dateRanges) + playlist.segments[skipped].tags.dateRanges
        delta.skip = Skip(attributes: [Attribute("SKIPPED-SEGMENTS", .integer(skipped))])
        delta.version = max(delta.version ?? 1, 9)
        return delta
    }

    // MARK: Building segments

    private mutating func append() {
        if adBreak == nil, segmentsUntilBreak == 0 { startBreak() }
        if var current = adBreak {
            appendAdSegment(&current)
            adBreak = current.played == current.durations.count ? nil : current
            if adBreak == nil {
                pendingClose = current
                segmentsUntilBreak = random.int(2...8)
            }
        } else {
            appendContentSegment()
            segmentsUntilBreak -= 1
        }
    }

    private mutating func duration() -> HLSDuration {
        let td = Int64(options.targetDuration) * 1000
        return .milliseconds(Int64(random.int(Int(td / 2)...Int(td + 499))))
    }

    private mutating func startBreak() {
        breakNumber += 1
        let eventID = UInt32(truncatingIfNeeded: random.next())
        let count = random.int(2...6)
        adBreak = AdBreak(
            id: "splice-\(String(eventID, radix: 16, uppercase: true))-\(breakNumber)", eventID: eventID,
            durations: (0..<count).map { _ in duration() }, splicePTS: random.next() & 0x1_FFFF_FFFF)
    }

    private mutating func appendAdSegment(_ ad: inout AdBreak) {
        var tags = SegmentTags()
        let duration = ad.durations[ad.played]
        let ext = options.fragmentedMP4 ? "m4s" : "ts"
        if ad.played == 0 {
            tags.discontinuity = true
            tags.programDateTime = nextDate
            if options.encrypted { tags.keys = [Key.none] }
            if options.fragmentedMP4 { tags.map = MediaInitializationSection(uri: "ads/\(breakNumber)/init.mp4") }
            // Planned in whole milliseconds so that 90 kHz ticks are exact; an early return makes
            // the actual break shorter than planned.
            let planned = ad.actual + (random.chance(0.3) ? .milliseconds(Int64(random.int(1...9_000))) : .zero)
            let ticks = UInt64(planned.microseconds / 1000) * 90
            var extra: [Attribute] = []
            if random.chance(0.5) { extra.append(Attribute("X-AD-ID", .quoted("creative-\(breakNumber)"))) }
            tags.dateRanges.append(
                DateRange(
                    id: ad.id, class: random.chance(0.5) ? "com.headwater.ad" : nil, startDate: nextDate,
                    plannedDuration: planned,
                    scte35Out: Self.spliceInsert(eventID: ad.eventID, out: true, pts: ad.splicePTS, breakTicks: ticks),
                    clientAttributes: extra))
        } else if options.datesOnEverySegment {
            tags.programDateTime = nextDate
        }
        ad.played += 1
        append(MediaSegment(uri: "ads/\(breakNumber)/\(ad.played).\(ext)", duration: duration, tags: tags))
    }

    private mutating func appendContentSegment() {
        var tags = SegmentTags()
        segmentNumber += 1
        let isFirst = playlist.segments.isEmpty && segmentNumber == 1
        var newChunk = isFirst
        if let closing = pendingClose {
            // Back from the break: new discontinuity, the content key and init section again, and the
            // end of the break on the same DATERANGE ID.
            pendingClose = nil
            tags.discontinuity = true
            if let contentKey { tags.keys = [contentKey] }
            tags.map = contentMap
            let inTicks = (closing.splicePTS + UInt64(closing.actual.microseconds / 1000) * 90) & 0x1_FFFF_FFFF
            tags.dateRanges.append(
                DateRange(
                    id: closing.id, startDate: nil, duration: closing.actual,
                    scte35In: Self.spliceInsert(eventID: closing.eventID, out: false, pts: inTicks, breakTicks: nil)))
            newChunk = true
        } else if !isFirst, random.chance(0.05) {
            // An encoder restart: a discontinuity, a later date, a new init section.
            tags.discontinuity = true
            nextDate = nextDate.adding(.milliseconds(Int64(random.int(0...5_000))))
            if options.fragmentedMP4 {
                contentMapNumber += 1
                contentMap = MediaInitializationSection(uri: "content/init-\(contentMapNumber).mp4")
                tags.map = contentMap
            }
            newChunk = true
        }
        if isFirst, options.fragmentedMP4 {
            contentMap = MediaInitializationSection(uri: "content/init-\(contentMapNumber).mp4")
            tags.map = contentMap
        }
        if options.encrypted, isFirst || random.chance(0.1) {
            contentKeyNumber += 1
            var iv: [UInt8] = []
            for _ in 0..<16 { iv.append(UInt8(truncatingIfNeeded: random.next())) }
            contentKey = Key(method: "AES-128", uri: "keys/content-\(contentKeyNumber).key", iv: iv)
            tags.keys = [contentKey!]
        }
        if isFirst || tags.discontinuity || options.datesOnEverySegment { tags.programDateTime = nextDate }
        if random.chance(0.03) { tags.gap = true }
        if !options.byteRanges, random.chance(0.1) { tags.bitrate = UInt64(random.int(800...8_000)) }
        if random.chance(0.05) {
            // A program marker: a closed range with both DURATION and END-DATE.
            let start = nextDate
            let length = HLSDuration.milliseconds(Int64(random.int(1_000...120_000)))
            tags.dateRanges.append(
                DateRange(
                    id: "program-\(segmentNumber)", class: "com.headwater.program", startDate: start,
                    endDate: start.adding(length), duration: length,
                    clientAttributes: [Attribute("X-TITLE", .quoted("Show \(segmentNumber)"))]))
        }

        let ext = options.fragmentedMP4 ? "m4s" : "ts"
        var segment = MediaSegment(uri: "content/\(segmentNumber).\(ext)", duration: duration(), tags: tags)
        if options.byteRanges {
            if newChunk || chunk == nil || chunk!.segments >= 5 {
                chunkNumber += 1
                chunk = (chunkNumber, 0, 0)
            }
            let length = UInt64(random.int(50_000...500_000))
            let explicit = chunk!.segments == 0 || random.chance(0.3)
            segment.uri = "content/chunk-\(chunk!.number).\(ext)"
            segment.byteRange = ByteRange(length: length, offset: explicit ? chunk!.offset : nil)
            chunk!.offset += length
            chunk!.segments += 1
        }
        append(segment)
    }

    private mutating func append(_ segment: MediaSegment) {
        // The window started mid-stream (MEDIA-SEQUENCE > 0), so discontinuities need the sequence (C6).
        if segment.tags.discontinuity, playlist.discontinuitySequence == nil { playlist.discontinuitySequence = 0 }
        playlist.segments.append(segment)
        nextDate = nextDate.adding(segment.duration)
    }

    // MARK: SCTE-35

    /// A splice_info_section with a splice_insert() (HLS-RULES I1, I2), CRC included.
    static func spliceInsert(eventID: UInt32, out: Bool, pts: UInt64, breakTicks: UInt64?) -> [UInt8] {
        var command: [UInt8] = []
        command += [
            UInt8(eventID >> 24), UInt8(eventID >> 16 & 0xFF), UInt8(eventID >> 8 & 0xFF), UInt8(eventID & 0xFF),
        ]
        command.append(0x7F)  // not cancelled
        // out_of_network, program_splice=1, duration_flag, splice_immediate=0, event_id_compliance=1, reserved
        command.append((out ? 0x80 : 0) | 0x40 | (breakTicks != nil ? 0x20 : 0) | 0x0F)
        command += fortyBits(0xFE, pts)  // splice_time: time_specified=1
        if let breakTicks { command += fortyBits(0xFE, breakTicks) }  // break_duration: auto_return=1
        command += [0x00, 0x00, 0x00, 0x00]  // unique_program_id, avail_num, avails_expected

        var section: [UInt8] = [0xFC, 0, 0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF]
        section += [0xFF, 0xF0 | UInt8(command.count >> 8), UInt8(command.count & 0xFF), 0x05]
        section += command
        section += [0x00, 0x00]  // descriptor_loop_length
        let sectionLength = section.count + 4 - 3
        section[1] = 0x30 | UInt8(sectionLength >> 8)
        section[2] = UInt8(sectionLength & 0xFF)
        let crc = crc32MPEG2(section)
        section += [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
        return section
    }

    /// A 33-bit value behind 7 marker bits, as splice_time() and break_duration() write it.
    private static func fortyBits(_ marker: UInt8, _ value: UInt64) -> [UInt8] {
        [
            marker | UInt8(value >> 32 & 1), UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF),
            UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF),
        ]
    }

    /// CRC-32/MPEG-2: polynomial 0x04C11DB7, initial 0xFFFFFFFF, MSB first, no final XOR (HLS-RULES I5).
    static func crc32MPEG2(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? crc << 1 ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }
}
