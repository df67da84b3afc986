public import HeadwaterHLS

/// The low-latency rules Headwater applies to every playlist it publishes with parts, whatever
/// produced them (the loop channel cuts its own parts; a push encoder uploads them): one
/// implementation of each, so the channels cannot drift apart (HLS-RULES F1, F3).
public enum LowLatencyPolicy {
    /// Headwater's own `EXT-X-SERVER-CONTROL` (F1), never an encoder's passed through: it is what
    /// Headwater serves that the client relies on.
    /// - `CAN-BLOCK-RELOAD=YES`: every live media playlist answers `_HLS_msn`/`_HLS_part`.
    /// - `PART-HOLD-BACK` of three part targets (F1: at least two, should be three).
    /// - `CAN-SKIP-UNTIL` of six target durations (F1's minimum): delta updates.
    /// - `CAN-SKIP-DATERANGES=YES` only when asked (`skipsDateRanges`): a producer whose playlists
    ///   carry no date range loses nothing by it; one that relays an encoder's date ranges would
    ///   have to track removed ones (F15), which the delta renderer does not.
    /// - No `HOLD-BACK`: its default is three target durations, the minimum F1 allows.
    public static func serverControl(partTarget: HLSDuration, targetDuration: Int, skipsDateRanges: Bool)
        -> ServerControl
    {
        var attributes: AttributeList = [Attribute("CAN-SKIP-UNTIL", .decimal(.seconds(6 * Int64(targetDuration))))]
        if skipsDateRanges { attributes["CAN-SKIP-DATERANGES"] = .token("YES") }
        attributes["CAN-BLOCK-RELOAD"] = .token("YES")
        attributes["PART-HOLD-BACK"] = .decimal(HLSDuration(microseconds: 3 * partTarget.microseconds))
        return ServerControl(attributes: attributes)
    }

    /// Whether a segment that started `age` µs before the live edge (the end of the newest listed
    /// part) still lists its parts: those of the last three target durations do (a client joining
    /// at PART-HOLD-BACK finds every part it needs; older parts only lengthen the playlist).
    public static func listsParts(age: Int64, targetDuration: Int) -> Bool {
        age <= 3 * Int64(targetDuration) * 1_000_000
    }

    /// One report for every other rendition (F6, App. B.1): its last segment and part at the same
    /// instant, under the URI of its playlist relative to this one (`{rendition}.m3u8`).
    public static func renditionReports(
        for rendition: String, edges: [(name: String, lastMSN: UInt64, lastPart: Int?)]
    ) -> [RenditionReport] {
        edges.filter { $0.name != rendition }.map { edge in
            var attributes: AttributeList = [
                Attribute("URI", .quoted("\(edge.name).m3u8")), Attribute("LAST-MSN", .integer(edge.lastMSN)),
            ]
            if let part = edge.lastPart { attributes["LAST-PART"] = .integer(part) }
            return RenditionReport(attributes: attributes)
        }
    }

    /// Where `playlist` ends, as a rendition report gives it: the segment of its newest part (the
    /// open one when it has parts) and that part's index; the last segment and no part without parts.
    public static func reportedEdge(of playlist: MediaPlaylist) -> (lastMSN: UInt64, lastPart: Int?)? {
        guard let edge = PlaylistEdge(playlist) else { return nil }
        if edge.openParts > 0 { return (edge.lastSegment &+ 1, edge.openParts - 1) }
        return (edge.lastSegment, edge.lastSegmentParts > 0 ? edge.lastSegmentParts - 1 : nil)
    }

    /// What an encoder's `EXT-X-SERVER-CONTROL` gets wrong by F1, one line each (empty when
    /// nothing): Headwater serves its own (``serverControl(partTarget:targetDuration:skipsDateRanges:)``),
    /// but an encoder that a player would reject when pulled directly is worth telling.
    public static func deviations(of control: ServerControl?, partTarget: HLSDuration, targetDuration: Int) -> [String] {
        guard let control else { return ["no EXT-X-SERVER-CONTROL with EXT-X-PART-INF (F1: PART-HOLD-BACK is required)"] }
        var found: [String] = []
        let td = Int64(targetDuration) * 1_000_000
        if !control.canBlockReload { found.append("no CAN-BLOCK-RELOAD=YES") }
        if let hold = control.partHoldBack {
            if hold.microseconds < 3 * partTarget.microseconds {
                found.append("PART-HOLD-BACK \(hold) is under 3×PART-TARGET (\(HLSDuration(microseconds: 3 * partTarget.microseconds)))")
            }
        } else {
            found.append("no PART-HOLD-BACK")
        }
        if let hold = control.holdBack, hold.microseconds < 3 * td {
            found.append("HOLD-BACK \(hold) is under 3×TD (\(HLSDuration(microseconds: 3 * td)))")
        }
        if let skip = control.canSkipUntil, skip.microseconds < 6 * td {
            found.append("CAN-SKIP-UNTIL \(skip) is under 6×TD (\(HLSDuration(microseconds: 6 * td)))")
        }
        return found
    }
}
