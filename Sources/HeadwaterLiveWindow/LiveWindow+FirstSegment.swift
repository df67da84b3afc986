import HeadwaterHLS

/// The first segment of a new timeline may be longer than the target duration: an encoder that
/// (re)starts cuts its first segment at the first key frame after `hls_time`, often later. Listing
/// it would break B1 (every EXTINF rounds to at most EXT-X-TARGETDURATION, which never changes,
/// B2), and players that check it (AVPlayer, Apple's validator) stop there. So when a segment that
/// opens a timeline (the window's first, or the first after a discontinuity) is too long and the
/// segment after it fits, it is left out: the discontinuity that opens the timeline already marks
/// the cut, so leaving it out loses a few seconds of a stream that was interrupted anyway, and the
/// next segment takes its number. When the next segment is too long as well, the encoder's GOP is
/// longer than the target duration: both are listed and reported (refusing them would stop the
/// channel).
extension LiveWindow {
    enum LongFirstSegment: Equatable {
        /// Wait for the segment after it, to decide.
        case wait
        case list
        case skip
    }

    /// Whether `candidate` would start the window or carry a discontinuity: the first segment of a
    /// timeline (what is skipped there is not missed by a player).
    func opensTimeline(_ rendition: RenditionWindow, _ candidate: Candidate) -> Bool {
        guard candidate.missing == nil, !candidate.segment.tags.gap else { return false }
        guard let tail = rendition.entries.last else { return true }
        return candidate.encoderDiscontinuity &+ rendition.discontinuityOffset > tail.dsn
    }

    /// What to do with the source's segment `index`, which opens a timeline and is longer than the
    /// target duration. It is skipped only when nothing is listed in its numbering epoch yet, so the
    /// epoch's numbers can shift by one for every rendition alike (C14).
    func longFirstSegment(
        _ rendition: RenditionWindow, _ playlist: MediaPlaylist, at index: Int, _ context: EncoderContext
    ) -> LongFirstSegment {
        let epoch = numbering.epochs[rendition.epoch]
        let untouched = rendition.epoch == numbering.current && (numbering.highest.map { $0 < epoch.start } ?? true)
        guard untouched else { return .list }
        guard index + 1 < playlist.segments.count else { return .wait }
        let next = candidate(playlist, index + 1, context, rendition)
        guard next.missing == nil else { return .wait }
        return next.segment.duration.roundedSeconds <= Int64(configuration.targetDuration) ? .skip : .list
    }

    /// Leaves the current epoch's first source segment out: the epoch's numbers (and those of every
    /// rendition in it, none of which listed anything in it yet) shift down by one.
    mutating func skipFirstSegment(of rendition: inout RenditionWindow) {
        let current = numbering.current
        numbering.epochs[current].offset &-= 1
        numbering.epochs[current].skipped &+= 1
        let offset = numbering.epochs[current].offset
        rendition.offset = offset
        for name in renditions.keys where name != rendition.name && renditions[name]!.epoch == current {
            renditions[name]!.offset = offset
        }
    }
}
