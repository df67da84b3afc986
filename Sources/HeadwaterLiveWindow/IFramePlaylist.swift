public import HeadwaterHLS
import HeadwaterMedia

/// I-frame playlists (`EXT-X-I-FRAMES-ONLY`, RFC 8216bis §4.4.3.6), made from a media playlist and
/// the key frames found when its segments were stored: one rule for every channel kind and for
/// stitched sessions.
///
/// An I-frame playlist lists **one entry per media segment**: the segment's first key frame. So it
/// shares the media playlist's numbering exactly (MEDIA-SEQUENCE, DISCONTINUITY-SEQUENCE, the
/// discontinuities, PROGRAM-DATE-TIME) and every rule the media playlist keeps (C1–C6 on reload,
/// the stitching invariants of DESIGN.md) holds for it by construction; an entry's `EXTINF` is its
/// segment's, so both playlists put each picture at the same media time. A segment with several key
/// frames gives scrubbing one picture per segment.
///
/// Each entry is `EXT-X-MAP` (the segment's PAT and PMT), `EXTINF`, `EXT-X-BYTERANGE` (the key
/// frame's packets, without the tables: B19) and the segment's URI; a segment without a key frame
/// (audio, fMP4, media that did not index) is listed as `EXT-X-GAP` so the numbering stays.
public enum IFramePlaylist {
    /// Whether `media` can have an I-frame playlist: not when a segment is encrypted, since a byte
    /// range of a whole-segment AES-128-CBC file cannot be decrypted on its own.
    public static func isOffered(for media: MediaPlaylist) -> Bool {
        !media.segments.contains { segment in segment.tags.keys.contains { $0.method != "NONE" } }
    }

    /// The I-frame playlist of `media`, whose segments' key frames `keyFrame` gives (called with each
    /// segment's index in `media.segments` and the segment).
    public static func make(
        from media: MediaPlaylist, keyFrame: (Int, MediaSegment) -> KeyFrameLocation?
    ) -> MediaPlaylist {
        var playlist = MediaPlaylist(targetDuration: media.targetDuration, mediaSequence: media.mediaSequence)
        playlist.discontinuitySequence = media.discontinuitySequence
        playlist.iFramesOnly = true
        playlist.endList = media.endList
        playlist.playlistType = media.playlistType
        playlist.segments.reserveCapacity(media.segments.count)
        for (index, segment) in media.segments.enumerated() {
            var entry = MediaSegment(uri: segment.uri, duration: segment.duration)
            entry.discontinuity = segment.discontinuity
            entry.programDateTime = segment.programDateTime
            if !segment.gap, let location = keyFrame(index, segment) {
                entry.tags.map = MediaInitializationSection(
                    uri: segment.uri,
                    byteRange: ByteRange(
                        length: UInt64(location.initialization.count), offset: UInt64(location.initialization.lowerBound)))
                entry.byteRange = ByteRange(length: UInt64(location.frame.count), offset: UInt64(location.frame.lowerBound))
            } else {
                entry.gap = true
            }
            playlist.segments.append(entry)
        }
        playlist.version = PlaylistValidator.requiredVersion(playlist).version
        return playlist
    }

    /// The `EXT-X-I-FRAME-STREAM-INF` of an I-frame playlist at `uri` whose entries are `keyFrames`
    /// (each with its segment's duration): BANDWIDTH the peak and AVERAGE-BANDWIDTH the average
    /// segment bit rate of what a player fetches per entry (tables and frame), never below
    /// `atLeast` (so a live channel's advertised value only rises, E2); CODECS the video codec alone
    /// and RESOLUTION; no FRAME-RATE (E9). `nil` without key frames.
    public static func variant(
        uri: String, keyFrames: [(location: KeyFrameLocation, duration: HLSDuration)], targetDuration: Int,
        atLeast: Int = 0
    ) -> IFrameVariantStream? {
        guard let video = keyFrames.last?.location.video else { return nil }
        let rates = IFrameIndex.BitRates(
            entries: keyFrames.map { (byteCount: $0.location.byteCount, durationMicroseconds: $0.duration.microseconds) },
            targetDuration: targetDuration)
        let average = rates.average ?? 1
        let peak = max(rates.peak ?? rates.largestEntry ?? average, average, atLeast)
        let attributes: AttributeList = [
            Attribute("BANDWIDTH", .integer(peak)), Attribute("AVERAGE-BANDWIDTH", .integer(average)),
            Attribute("CODECS", .quoted(video.codec)), Attribute("RESOLUTION", .token(video.resolution)),
            Attribute("URI", .quoted(uri)),
        ]
        return IFrameVariantStream(attributes: attributes)
    }

    /// The I-frame playlist's name beside a rendition's media playlist: `v0` → `v0.iframes.m3u8`
    /// (a rendition name has no dots, so it never collides with one).
    public static func uri(forRendition rendition: String) -> String { "\(rendition).iframes.m3u8" }
}
