/// A departure from RFC 8216bis that players accept and Headwater tolerates on ingest, or an
/// ad-marker dialect it reads as the canonical marker that means the same.
///
/// ``PlaylistParser/parseTolerating(_:)`` reads these forms into the same model the strict parse
/// builds, normalised, so what Headwater serves is canonical: a deviation is never re-emitted.
/// The strict ``PlaylistParser/parse(_:)-([UInt8])``, which checks output, refuses them, except
/// three it reads as they are: lower-case hex (which the validator reports as A7) and the Adobe and
/// threefive ad-marker tags (legal unknown tags, kept verbatim).
public struct IngestDeviation: Sendable, Hashable, CustomStringConvertible {
    /// One tolerated form. The raw value is a stable id: it is a metric label
    /// (`headwater_ingest_deviations_total{rule=…}`) and the rule `lint` prints with its warning.
    public enum Rule: String, Sendable, Hashable, CaseIterable {
        /// Whitespace after a comma in an attribute list (`PROGRAM-ID=1, BANDWIDTH=…`, `…key.bin", IV=…`):
        /// §4.2 allows none. Read as if absent.
        case attributeWhitespace = "tolerate.attribute-whitespace"
        /// An `EXTINF` title that is whitespace (`#EXTINF:10,<TAB>`), has a TAB, or ends in whitespace:
        /// §4.1 allows no TAB there and no trailing whitespace. The title is trimmed, TABs become spaces.
        case extinfTitleWhitespace = "tolerate.extinf-title-whitespace"
        /// Leading or trailing whitespace on any other line (§4.1): trimmed.
        case lineWhitespace = "tolerate.line-whitespace"
        /// `EXT-X-TARGETDURATION`, `EXT-X-SERVER-CONTROL`, `EXT-X-PART-INF`, `EXT-X-PLAYLIST-TYPE` or
        /// `EXT-X-I-FRAMES-ONLY` after a segment tag: applied to the whole playlist, written in the header.
        case lateHeaderTag = "tolerate.late-header-tag"
        /// `EXT-X-MEDIA-SEQUENCE` or `EXT-X-DISCONTINUITY-SEQUENCE` after a segment tag (`EXT-X-KEY`,
        /// `EXT-X-MAP`, `EXT-X-PROGRAM-DATE-TIME`, …) but before the first URI (§4.4.3.2 wants it before
        /// the first segment). After a URI it still changes the numbering of listed segments: refused.
        case lateSequenceTag = "tolerate.late-sequence-tag"
        /// A variable reference in an enumerated-string (`TYPE={$type}`): §4.3 substitutes only in URI
        /// lines, quoted-strings and hexadecimal-sequences. Substituted when an earlier `EXT-X-DEFINE`
        /// gives the value. (References in hexadecimal-sequences are standard, not a deviation.)
        case variableInEnumeratedString = "tolerate.variable-in-enumerated-string"
        /// Lower-case digits in a hexadecimal-sequence (`IV=0x1a2b…`, as ffmpeg writes): §4.2 says
        /// `[0-9A-F]`. Upper-cased.
        case lowercaseHex = "tolerate.lowercase-hex"
        /// `#EXT-X-CUE-OUT-CONT` with no value: elapsed (and duration) are computed from the playlist's
        /// `EXT-X-CUE-OUT`; without one in the playlist the marker still says "inside a break" to
        /// ``AdMarker/role`` but is not re-emitted.
        case bareCueOutContinuation = "tolerate.cue-out-cont-bare"
        /// `#EXT-X-CUE-OUT:30,SpliceType=…` (a duration, then parameters): read as
        /// `#EXT-X-CUE-OUT:DURATION=30,SpliceType=…`.
        case cueOutTrailingParameters = "tolerate.cue-out-parameters"
        /// Adobe Primetime's `#EXT-X-CUE:TYPE=SpliceOut|SpliceIn,…` and `#EXT-X-CUE-CONT:…` (also
        /// MediaLive's "Adobe" style): legal unknown tags, read as the `EXT-X-CUE-OUT`/`-CONT`/`-IN`
        /// that mean the same and written that way (see ``AdMarker``).
        case adobeCue = "tolerate.adobe-cue"
        /// threefive's `#EXT-X-SPLICEPOINT-SCTE35:<base64>`: read and written as `#EXT-OATCLS-SCTE35:<base64>`.
        case splicePoint = "tolerate.splicepoint-scte35"
    }

    public var rule: Rule
    /// 1-based line of the tolerated form.
    public var line: Int
    /// What was tolerated and how it was read, in one line.
    public var message: String

    public init(rule: Rule, line: Int, message: String) {
        self.rule = rule
        self.line = line
        self.message = message
    }

    /// `line 7: tolerate.attribute-whitespace: …`
    public var description: String { "line \(line): \(rule.rawValue): \(message)" }
}
