import HeadwaterHLS

/// The low-latency side of one push rendition: what its encoder said about parts, and which parts
/// Headwater lists. Empty (``partTarget`` `nil`) for an encoder that pushes no parts, whose
/// playlists then are exactly what they were before parts existed.
struct RenditionParts: Sendable {
    /// A part as the encoder listed it, reduced to what identifies it: comparing these tells an
    /// encoder that extends its list from one that rewrites it (a contradiction, refused).
    struct EncoderPart: Sendable, Hashable {
        var uri: String
        var duration: HLSDuration
        /// The byte range with its offset made explicit (F3: without one it continues the
        /// previous part of the same parent), `nil` for a whole file.
        var range: ByteRange?
        var independent: Bool
        var gap: Bool
    }

    /// The parts the encoder listed for one of its segments, and whether that segment was complete
    /// (its EXTINF and URI listed) — then the list is final.
    struct EncoderParent: Sendable, Hashable {
        var parts: [EncoderPart]
        var complete: Bool
    }

    /// A part Headwater lists: its served name (below `/live/{channel}/{rendition}/`), the stored
    /// file behind it (`nil` for a GAP=YES part, never served), and the tag as published.
    struct Listed: Sendable, Hashable {
        var name: String
        var file: SegmentFile?
        var tag: PartialSegment
    }

    /// PART-TARGET of the encoder's newest playlist; `nil` when it has no EXT-X-PART-INF.
    var partTarget: HLSDuration?
    /// What the encoder's recent playlists said, by encoder media sequence number.
    var encoder: [UInt64: EncoderParent] = [:]
    /// The encoder's EXT-X-PRELOAD-HINT TYPE=PART: the part `index` of its segment `sequence`.
    var encoderHint: (sequence: UInt64, index: Int, hint: PreloadHint)?
    /// Parts listed, by Headwater's media sequence number: those of listed segments (kept while the
    /// segment is in the window, so they stay fetchable) and of the open one (`lastMSN + 1`).
    var listed: [UInt64: [Listed]] = [:]
    /// The hint published for the next part, if any.
    var hint: PreloadHint?
    /// The part of the open segment that the encoder listed but whose file is not complete, and
    /// since when Headwater waits for it (µs).
    var waiting: (msn: UInt64, index: Int, since: Int64)?
    /// Changes with every change of the listed parts or the hint: with the last MSN, it says
    /// whether the published playlist changed.
    var version: UInt64 = 0
    /// SERVER-CONTROL deviations already reported (each once).
    var reported: Set<String> = []
    /// Parts given up while their segment was open, by MSN: reported then, not again when it completes.
    var gaveUp: [UInt64: Set<Int>] = [:]

    /// Forgets everything but the reports made: the encoder restarted, or stopped sending parts.
    mutating func reset() {
        encoder = [:]
        encoderHint = nil
        waiting = nil
        if hint != nil || !listed.isEmpty { version += 1 }
        hint = nil
    }
}
