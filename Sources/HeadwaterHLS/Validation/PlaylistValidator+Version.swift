/// A8/A9: the protocol version a playlist's features require (RFC 8216bis §8, §4.4.1.2).
extension PlaylistValidator {
    /// The lowest `EXT-X-VERSION` the features of this media playlist require, and the feature that
    /// sets it. Servers use it to write EXT-X-VERSION; it includes delta updates (EXT-X-SKIP).
    public static func requiredVersion(_ playlist: MediaPlaylist) -> (version: Int, reason: String) {
        var need = Requirement()
        if !playlist.definitions.isEmpty { need.raise(8, "EXT-X-DEFINE") }
        if playlist.definitions.contains(where: { $0.attributes.contains("QUERYPARAM") }) {
            need.raise(11, "EXT-X-DEFINE QUERYPARAM")
        }
        if playlist.iFramesOnly { need.raise(4, "EXT-X-I-FRAMES-ONLY") }
        if let skip = playlist.skip {
            need.raise(9, "EXT-X-SKIP")
            if skip.attributes.contains("RECENTLY-REMOVED-DATERANGES") {
                need.raise(10, "EXT-X-SKIP with RECENTLY-REMOVED-DATERANGES")
            }
        }
        var substitution = false
        for segment in playlist.segments {
            if segment.duration.microseconds % 1_000_000 != 0 { need.raise(3, "non-integer EXTINF") }
            if segment.byteRange != nil { need.raise(4, "EXT-X-BYTERANGE") }
            if !substitution, hasVariableReference(segment.uri) { substitution = true }
            requirements(of: segment.tags, iFramesOnly: playlist.iFramesOnly, into: &need, substitution: &substitution)
        }
        requirements(
            of: playlist.trailingTags, iFramesOnly: playlist.iFramesOnly, into: &need, substitution: &substitution)
        if !substitution {
            substitution =
                playlist.preloadHints.contains { hasVariableReference($0.attributes) }
                || playlist.renditionReports.contains { hasVariableReference($0.attributes) }
        }
        if substitution { need.raise(8, "variable substitution ({$…})") }
        return (need.version, need.reason)
    }

    private static func requirements(
        of tags: SegmentTags, iFramesOnly: Bool, into need: inout Requirement, substitution: inout Bool
    ) {
        for key in tags.keys {
            if key.attributes.contains("IV") { need.raise(2, "EXT-X-KEY IV") }
            if key.method == "SAMPLE-AES" { need.raise(5, "EXT-X-KEY METHOD=SAMPLE-AES") }
            if key.attributes.contains("KEYFORMAT") || key.attributes.contains("KEYFORMATVERSIONS") {
                need.raise(5, "EXT-X-KEY KEYFORMAT/KEYFORMATVERSIONS")
            }
            if hasVariableReference(key.attributes) { substitution = true }
        }
        if let map = tags.map {
            if iFramesOnly {
                need.raise(5, "EXT-X-MAP in an I-frame playlist")
            } else {
                need.raise(6, "EXT-X-MAP")
            }
            if hasVariableReference(map.attributes) { substitution = true }
        }
        if !substitution {
            substitution =
                tags.dateRanges.contains { hasVariableReference($0.attributes) }
                || tags.parts.contains { hasVariableReference($0.attributes) }
        }
    }

    /// The lowest `EXT-X-VERSION` the features of this multivariant playlist require.
    public static func requiredVersion(_ playlist: MultivariantPlaylist) -> (version: Int, reason: String) {
        requiredVersion(playlist, countingInstreamIDOutsideCaptions: true)
    }

    private static func requiredVersion(
        _ playlist: MultivariantPlaylist, countingInstreamIDOutsideCaptions: Bool
    ) -> (version: Int, reason: String) {
        var need = Requirement()
        if !playlist.definitions.isEmpty { need.raise(8, "EXT-X-DEFINE") }
        if playlist.definitions.contains(where: { $0.attributes.contains("QUERYPARAM") }) {
            need.raise(11, "EXT-X-DEFINE QUERYPARAM")
        }
        var lists: [AttributeList] = playlist.variants.map(\.attributes) + playlist.iFrameVariants.map(\.attributes)
        lists += playlist.sessionData.map(\.attributes) + playlist.sessionKeys.map(\.attributes)
        if let steering = playlist.contentSteering { lists.append(steering.attributes) }
        for rendition in playlist.renditions {
            lists.append(rendition.attributes)
            guard let instream = rendition.attributes.string("INSTREAM-ID") else { continue }
            if rendition.type != "CLOSED-CAPTIONS" {
                guard countingInstreamIDOutsideCaptions else { continue }
                need.raise(13, "INSTREAM-ID on a \(rendition.type) EXT-X-MEDIA")
            } else if instream.hasPrefix("SERVICE") {
                need.raise(7, "INSTREAM-ID=\"\(instream)\"")
            }
        }
        for list in lists where list.names.contains(where: { $0.hasPrefix("REQ-") }) {
            need.raise(12, "a REQ- attribute")
            break
        }
        if lists.contains(where: hasVariableReference)
            || playlist.variants.contains(where: { hasVariableReference($0.uri) })
        {
            need.raise(8, "variable substitution ({$…})")
        }
        return (need.version, need.reason)
    }

    static func checkVersion(_ playlist: MediaPlaylist, into report: inout IssueReport) {
        let (required, reason) = requiredVersion(playlist)
        compare(declared: playlist.version, required: required, reason: reason, warnIfHigher: false, into: &report)
        // "Higher than needed" is judged against version 3 at least: at version 3 and above, EXTINF is
        // written in decimal form (`6.000`), which itself needs version 3, so a version-3 playlist of
        // whole-second segments is not declaring more than it uses.
        let floor = playlist.segments.isEmpty || (playlist.version ?? 0) < 3 ? required : max(required, 3)
        if let declared = playlist.version, declared > floor {
            let why = required > 1 ? " (\(reason))" : ""
            report.warning(
                "A8", "EXT-X-VERSION \(declared) is above the \(floor) this playlist needs\(why); it should not be higher",
                at: .tag("EXT-X-VERSION"))
        }
    }

    static func checkVersion(_ playlist: MultivariantPlaylist, into report: inout IssueReport) {
        // INSTREAM-ID outside CLOSED-CAPTIONS below version 13 is reported once, by E7.
        let (required, reason) = requiredVersion(playlist, countingInstreamIDOutsideCaptions: false)
        // E15: a multivariant playlist MAY declare a version above what it needs.
        compare(declared: playlist.version, required: required, reason: reason, warnIfHigher: false, into: &report)
    }

    private static func compare(
        declared: Int?, required: Int, reason: String, warnIfHigher: Bool, into report: inout IssueReport
    ) {
        switch declared {
        case nil where required > 1:
            report.error(
                "A8", "EXT-X-VERSION is missing but \(reason) requires version \(required)", at: .playlist)
        case let declared? where declared < required:
            report.error(
                "A8", "EXT-X-VERSION \(declared) is below the \(required) that \(reason) requires",
                at: .tag("EXT-X-VERSION"))
        case let declared? where declared > required && warnIfHigher:
            let why = required > 1 ? " (\(reason))" : ""
            report.warning(
                "A8",
                "EXT-X-VERSION \(declared) is above the \(required) this playlist needs\(why); it should not be higher",
                at: .tag("EXT-X-VERSION"))
        default:
            break
        }
    }
}

/// The highest version requirement seen so far and the first feature that set it.
private struct Requirement {
    var version = 1
    var reason = "nothing"

    mutating func raise(_ version: Int, _ reason: @autoclosure () -> String) {
        guard version > self.version else { return }
        self.version = version
        self.reason = reason()
    }
}
