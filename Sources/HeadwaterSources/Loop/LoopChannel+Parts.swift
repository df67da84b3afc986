import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterMedia

/// Low-latency HLS on a loop channel: parts published as the wall clock reaches their end, with
/// PART-INF, SERVER-CONTROL, a preload hint and rendition reports (HLS-RULES F1–F6, F17).
///
/// Parts are byte ranges of the segment files (``LoopPackage/cuttingParts(every:)``), listed under
/// the segment's own URI, so a CDN caches one object per segment and a player fetches each part with
/// a `Range` request.
extension LoopChannel {
    /// Whether playlists carry parts: the package was cut into parts and the channel is clear (an
    /// AES-128 segment cannot be decrypted from a byte range in its middle).
    public var lowLatency: Bool { package.partTarget != nil && keying == nil }

    /// How many parts of segment `g` of `rendition` have ended by `now` (µs since the epoch).
    func publishedParts(of g: UInt64, rendition: LoopPackage.Rendition, at now: Int64) -> Int {
        let parts = rendition.parts[timeline.fileIndex(of: g)]
        var end = timeline.start(of: g)
        var count = 0
        for part in parts {
            end += part.durationMicroseconds
            guard end <= now else { break }
            count += 1
        }
        return count
    }

    /// When the channel next changes after `now`: a part of the open segment ends in some rendition,
    /// or (without parts) the next segment completes.
    public func nextPublication(after now: Int64) -> Int64 {
        let last = timeline.lastPublished(at: now)
        let segmentEnd = timeline.nextPublication(after: last)
        guard lowLatency else { return segmentEnd }
        var next = segmentEnd
        let open = last + 1
        for rendition in package.renditions {
            var end = timeline.start(of: open)
            for part in rendition.parts[timeline.fileIndex(of: open)] {
                end += part.durationMicroseconds
                if end > now {
                    next = min(next, end)
                    break
                }
            }
        }
        return next
    }

    /// PART-INF, SERVER-CONTROL, the parts of the segments in the last three target durations and of
    /// the open segment `last + 1` (its DISCONTINUITY and date before its first part, F3), and the hint
    /// for the next part (F4, F17).
    func addParts(to playlist: inout MediaPlaylist, rendition: LoopPackage.Rendition, last: UInt64, openParts: Int) {
        guard let partTarget = package.partTarget else { return }
        playlist.partInformation = PartInformation(partTarget: partTarget)
        playlist.serverControl = Self.serverControl(partTarget: partTarget, targetDuration: package.targetDuration)
        let open = last + 1
        let liveEnd = timeline.start(of: open)
            + rendition.parts[timeline.fileIndex(of: open)].prefix(openParts).reduce(0) { $0 + $1.durationMicroseconds }
        for index in playlist.segments.indices.reversed() {
            let g = playlist.mediaSequenceNumber(at: index)
            guard LowLatencyPolicy.listsParts(age: liveEnd - timeline.start(of: g), targetDuration: package.targetDuration)
            else { break }
            playlist.segments[index].tags.parts = parts(of: g, rendition: rendition, count: nil)
        }
        let openIndex = timeline.fileIndex(of: open)
        playlist.trailingTags.parts = parts(of: open, rendition: rendition, count: openParts)
        if openIndex == 0 {
            // Before its first part (F3) — and already before it has one: a player numbers the open
            // segment's discontinuity from the playlist that hints its first part (hls.js's fragment
            // hint), and must not see that number change when the part arrives.
            playlist.trailingTags.discontinuity = true
            playlist.trailingTags.programDateTime = ProgramDateTime(millisecondsSinceEpoch: timeline.start(of: open) / 1000)
        }
        // The next part: of the open segment, or the first of the one after when it is complete.
        let (hinted, hintedIndex) =
            openParts < rendition.parts[openIndex].count ? (open, openParts) : (open + 1, 0)
        let next = rendition.parts[timeline.fileIndex(of: hinted)][hintedIndex]
        playlist.preloadHints = [
            PreloadHint(attributes: [
                Attribute("TYPE", .token("PART")), Attribute("URI", .quoted("\(rendition.name)/\(hinted).ts")),
                Attribute("BYTERANGE-START", .integer(next.offset)), Attribute("BYTERANGE-LENGTH", .integer(next.length)),
            ])
        ]
    }

    /// The first `count` parts (all when `nil`) of segment `g` of `rendition`.
    private func parts(of g: UInt64, rendition: LoopPackage.Rendition, count: Int?) -> [PartialSegment] {
        let all = rendition.parts[timeline.fileIndex(of: g)]
        return all.prefix(count ?? all.count).map { part in
            PartialSegment(
                uri: "\(rendition.name)/\(g).ts", duration: HLSDuration(microseconds: part.durationMicroseconds),
                independent: part.independent,
                byteRange: ByteRange(length: UInt64(part.length), offset: UInt64(part.offset)))
        }
    }

    /// Headwater's SERVER-CONTROL (``LowLatencyPolicy/serverControl(partTarget:targetDuration:skipsDateRanges:)``),
    /// with CAN-SKIP-DATERANGES: these playlists carry no date range, so none is ever old or removed;
    /// the same in every rendition (C14).
    static func serverControl(partTarget: HLSDuration, targetDuration: Int) -> ServerControl {
        LowLatencyPolicy.serverControl(partTarget: partTarget, targetDuration: targetDuration, skipsDateRanges: true)
    }

    /// One report for every other rendition (F6): ``LowLatencyPolicy/renditionReports(for:edges:)``.
    static func renditionReports(
        for rendition: String, edges: [(name: String, lastMSN: UInt64, lastPart: Int?)]
    ) -> [RenditionReport] {
        LowLatencyPolicy.renditionReports(for: rendition, edges: edges)
    }
}
