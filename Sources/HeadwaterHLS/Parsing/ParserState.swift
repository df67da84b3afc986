/// The single-pass parse of one document: line scanning, tag dispatch, and assembly.
struct ParserState {
    private enum Kind { case undetermined, media, multivariant }

    let bytes: UnsafeBufferPointer<UInt8>
    let limits: PlaylistParser.Limits
    /// Whether to record line numbers (``SourceMap``): only tools that report by line need them, so
    /// the origin's parses skip the per-segment bookkeeping.
    let recordsSourceMap: Bool
    /// Whether to accept the forms ``IngestDeviation/Rule`` names (``PlaylistParser/parseTolerating(_:)``).
    /// Every check of them sits on a path the strict parse leaves by throwing, so it costs that parse nothing.
    let tolerant: Bool
    /// What a tolerant parse accepted, in line order.
    private(set) var deviations: [IngestDeviation] = []
    /// The last `EXT-X-CUE-OUT` seen by a tolerant parse and not yet closed by `EXT-X-CUE-IN`: the index
    /// of the segment it starts and its planned duration, to fill in a bare `EXT-X-CUE-OUT-CONT`.
    private var openBreak: (segment: Int, duration: HLSDuration?)?
    private var lineNumber = 0
    private var kind = Kind.undetermined
    private var kindLine = 0
    var map = SourceMap()

    // Shared header
    private var version: Int?
    private var independentSegments = false
    private var start: StartPoint?
    private var definitions: [VariableDefinition] = []

    // Media
    private var media = MediaPlaylist(targetDuration: 0)
    private var targetDuration: Int?
    private var pending = SegmentTags()
    private var pendingTagCount = 0
    private var pendingFirstLine = 0
    private var pendingEXTINF: (duration: HLSDuration, title: String, line: Int)?
    private var pendingByteRange: (range: ByteRange, line: Int)?
    private var segmentPhase = false  // a segment tag or URI has been seen

    // Multivariant
    private var multivariant = MultivariantPlaylist()
    private var pendingVariant: (variant: VariantStream, line: Int)?

    init(bytes: UnsafeBufferPointer<UInt8>, limits: PlaylistParser.Limits, recordsSourceMap: Bool, tolerant: Bool = false) {
        self.bytes = bytes
        self.limits = limits
        self.recordsSourceMap = recordsSourceMap
        self.tolerant = tolerant
        // A segment takes at least ~20 bytes of playlist text (`#EXTINF:1,\nx\n` and more in practice).
        media.segments.reserveCapacity(min(bytes.count / 48, limits.maxSegments))
    }

    // MARK: Line scanning

    mutating func run() throws(PlaylistParseError) {
        var lineStart = 0
        let count = bytes.count
        if count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            throw PlaylistParseError(.invalidEncoding, line: 1, "byte-order mark before #EXTM3U (playlists MUST NOT have a BOM, §4.1)")
        }
        while lineStart < count || lineNumber == 0 {
            lineNumber += 1
            var lineEnd = lineStart
            var highBit = false
            var carriageReturn = -1
            var tab = false
            while lineEnd < count {
                // Skip 8 plain printable-ASCII bytes at a time (no control byte, DEL or non-ASCII).
                while lineEnd &+ 8 <= count {
                    let word = UnsafeRawPointer(bytes.baseAddress! + lineEnd).loadUnaligned(as: UInt64.self)
                    let belowSpace = (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080
                    let del = word ^ 0x7F7F_7F7F_7F7F_7F7F
                    let isDel = (del &- 0x0101_0101_0101_0101) & ~del & 0x8080_8080_8080_8080
                    let special = belowSpace | isDel | (word & 0x8080_8080_8080_8080)
                    if special != 0 {
                        // The lowest flagged byte is exact (borrows only propagate upwards): jump to it.
                        lineEnd &+= special.trailingZeroBitCount >> 3
                        break
                    }
                    lineEnd &+= 8
                }
                guard lineEnd < count else { break }
                let c = bytes[lineEnd]
                if c < 0x20 || c == 0x7F {
                    if c == 10 { break }
                    if c == 13 {
                        if carriageReturn < 0 { carriageReturn = lineEnd }
                    } else if c == 9 {
                        tab = true
                    } else {
                        throw PlaylistParseError(
                            .invalidEncoding, line: lineNumber,
                            "control character 0x\(String(c, radix: 16, uppercase: true)) (§4.1)")
                    }
                } else if c >= 0x80 {
                    highBit = true
                }
                lineEnd += 1
            }
            let next = lineEnd + 1
            var contentEnd = lineEnd
            if contentEnd > lineStart, bytes[contentEnd - 1] == 13 { contentEnd -= 1 }
            guard contentEnd - lineStart <= limits.maxLineLength else {
                throw PlaylistParseError(
                    .limitExceeded, line: lineNumber, "line is \(contentEnd - lineStart) bytes, limit is \(limits.maxLineLength)")
            }
            if carriageReturn >= 0 && carriageReturn < contentEnd {
                throw PlaylistParseError(.invalidEncoding, line: lineNumber, "carriage return inside a line (§4.1)")
            }
            if highBit { try validateUTF8(lineStart..<contentEnd) }
            if tab, !(tolerant && startsWith(lineStart..<contentEnd, Self.extinfPrefix)) {
                try checkTabs(lineStart..<contentEnd)
            }
            if lineNumber == 1 {
                guard equals(lineStart..<contentEnd, Self.extm3u) else {
                    throw PlaylistParseError(.missingHeader, line: 1, "the first line MUST be #EXTM3U (§4.4.1.1)")
                }
            } else if contentEnd > lineStart {
                try line(lineStart..<contentEnd)
            }
            lineStart = next
            if lineStart > count { break }
        }
    }

    private func validateUTF8(_ range: Range<Int>) throws(PlaylistParseError) {
        var iterator = bytes[range].makeIterator()
        var decoder = UTF8()
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                if scalar.value >= 0x80 && scalar.value <= 0x9F {
                    throw PlaylistParseError(.invalidEncoding, line: lineNumber, "C1 control character U+00\(String(scalar.value, radix: 16, uppercase: true)) (§4.1)")
                }
                if scalar.value == 0xFEFF {
                    throw PlaylistParseError(.invalidEncoding, line: lineNumber, "byte-order mark inside the playlist (§4.1)")
                }
            case .emptyInput: break loop
            case .error: throw PlaylistParseError(.invalidEncoding, line: lineNumber, "invalid UTF-8 (§4.1)")
            }
        }
    }

    /// A TAB is allowed only inside a quoted-string (RECENTLY-REMOVED-DATERANGES separates IDs with
    /// tabs, §4.4.5.2); anywhere else it is a control character (§4.1).
    private func checkTabs(_ range: Range<Int>) throws(PlaylistParseError) {
        var quoted = false
        for index in range {
            let c = bytes[index]
            if c == UInt8(ascii: "\"") {
                quoted.toggle()
            } else if c == 9 && !quoted && index != range.lowerBound && index != range.upperBound - 1 {
                // (Leading and trailing tabs are reported as unexpected whitespace instead.)
                throw PlaylistParseError(.invalidEncoding, line: lineNumber, "TAB outside a quoted-string (§4.1)")
            }
        }
    }

    private static let extm3u: [UInt8] = Array("#EXTM3U".utf8)
    private static let extinfPrefix: [UInt8] = Array("#EXTINF:".utf8)

    private mutating func line(_ untrimmed: Range<Int>) throws(PlaylistParseError) {
        var range = untrimmed
        let first = bytes[range.lowerBound]
        let last = bytes[range.upperBound - 1]
        if first == 32 || first == 9 || last == 32 || last == 9 {
            guard tolerant else {
                throw PlaylistParseError(.unexpectedWhitespace, line: lineNumber, "leading or trailing whitespace (§4.1)")
            }
            range = trimmingWhitespace(range)
            guard !range.isEmpty else {
                tolerate(.lineWhitespace, "a line of whitespace, read as a blank line")
                return
            }
            if startsWith(range, Self.extinfPrefix), last == 32 || last == 9 {
                tolerate(.extinfTitleWhitespace, "EXTINF title ends in whitespace; trimmed")
            }
            if first == 32 || first == 9 || !startsWith(range, Self.extinfPrefix) {
                tolerate(.lineWhitespace, "leading or trailing whitespace; trimmed")
            }
        }
        if bytes[range.lowerBound] != UInt8(ascii: "#") {
            try uri(range)
            return
        }
        let base = range.lowerBound
        guard range.count >= 4, bytes[base + 1] == UInt8(ascii: "E"), bytes[base + 2] == UInt8(ascii: "X"),
            bytes[base + 3] == UInt8(ascii: "T")
        else {
            // A comment: kept so that nothing is lost.
            try unknown(range)
            return
        }
        var nameEnd = range.lowerBound + 1
        while nameEnd < range.upperBound, bytes[nameEnd] != UInt8(ascii: ":") { nameEnd += 1 }
        let nameRange = (range.lowerBound + 1)..<nameEnd
        let valueRange: Range<Int>? = nameEnd < range.upperBound ? (nameEnd + 1)..<range.upperBound : nil
        try tag(nameRange, valueRange, whole: range)
    }

    private func trimmingWhitespace(_ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, bytes[lower] == 32 || bytes[lower] == 9 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 32 || bytes[upper - 1] == 9 { upper -= 1 }
        return lower..<upper
    }

    private func startsWith(_ range: Range<Int>, _ prefix: [UInt8]) -> Bool {
        range.count >= prefix.count && equals(range.lowerBound..<(range.lowerBound + prefix.count), prefix)
    }

    /// Records a tolerated form (once per rule and line).
    private mutating func tolerate(_ rule: IngestDeviation.Rule, _ message: String) {
        if let previous = deviations.last, previous.rule == rule, previous.line == lineNumber { return }
        deviations.append(IngestDeviation(rule: rule, line: lineNumber, message: message))
    }

    // MARK: Tags

    @inline(__always)
    private func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    @inline(__always)
    private func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[range]) }

    @inline(__always)
    private func equals(_ range: Range<Int>, _ expected: [UInt8]) -> Bool {
        guard range.count == expected.count else { return false }
        return expected.withUnsafeBufferPointer { e in
            memcmpEqual(bytes.baseAddress! + range.lowerBound, e.baseAddress!, range.count)
        }
    }


    private mutating func tag(_ nameRange: Range<Int>, _ valueRange: Range<Int>?, whole: Range<Int>) throws(PlaylistParseError) {
        guard let known = KnownTag.lookup(slice(nameRange)) else {
            try unknown(whole)
            return
        }
        let tagName = known.rawValue
        switch known {
        case .extinf:
            try extinf(valueRange)
        case .programDateTime:
            try segmentTag(tagName)
            guard pending.programDateTime == nil else { throw duplicate(tagName, "for one segment") }
            guard let valueRange, let date = ProgramDateTime.parse(slice(valueRange)) else {
                throw invalid(tagName, "needs an ISO 8601 date with time, e.g. 2026-11-21T17:36:00.000Z", valueRange)
            }
            pending.programDateTime = date
        case .byteRange:
            try segmentTag(tagName)
            guard pendingByteRange == nil else { throw duplicate(tagName, "for one segment") }
            guard let valueRange, let range = ByteRange(parsing: slice(valueRange)) else {
                throw invalid(tagName, "must be <n>[@<o>] decimal-integers", valueRange)
            }
            pendingByteRange = (range, lineNumber)
        // Basic / shared
        case .extm3u:
            throw PlaylistParseError(.duplicateTag, line: lineNumber, "#EXTM3U appears again")
        case .version:
            guard version == nil else { throw duplicate(tagName) }
            guard let valueRange, let v = UInt64.strictDecimal(text(valueRange)), v >= 1, v <= 1000 else {
                throw invalid(tagName, "must be a decimal-integer ≥ 1", valueRange)
            }
            version = Int(v)
            if recordsSourceMap { map.tags[tagName] = lineNumber }
        case .independentSegments:
            try noValue(tagName, valueRange)
            guard !independentSegments else { throw duplicate(tagName) }
            independentSegments = true
            if recordsSourceMap { map.tags[tagName] = lineNumber }
        case .start:
            guard start == nil else { throw duplicate(tagName) }
            start = try attributeTag(StartPoint.self, valueRange)
            if recordsSourceMap { map.tags[tagName] = lineNumber }
        case .define:
            definitions.append(try attributeTag(VariableDefinition.self, valueRange))

        // Media playlist tags
        case .targetDuration:
            try headerTag(tagName)
            guard targetDuration == nil else { throw duplicate(tagName) }
            guard let valueRange, let v = UInt64.strictDecimal(text(valueRange)), v >= 1, v <= 86_400 else {
                throw invalid(tagName, "must be a decimal-integer number of seconds ≥ 1 (§4.4.3.1)", valueRange)
            }
            targetDuration = Int(v)
        case .mediaSequence:
            try headerTag(tagName)
            guard media.mediaSequence == nil else { throw duplicate(tagName) }
            media.mediaSequence = try integer(tagName, valueRange)
        case .discontinuitySequence:
            try headerTag(tagName)
            guard media.discontinuitySequence == nil else { throw duplicate(tagName) }
            media.discontinuitySequence = try integer(tagName, valueRange)
        case .playlistType:
            try headerTag(tagName)
            guard media.playlistType == nil else { throw duplicate(tagName) }
            guard let valueRange, let type = PlaylistType(rawValue: text(valueRange)) else {
                throw invalid(tagName, "must be EVENT or VOD (§4.4.3.5)", valueRange)
            }
            media.playlistType = type
        case .iFramesOnly:
            try headerTag(tagName)
            try noValue(tagName, valueRange)
            guard !media.iFramesOnly else { throw duplicate(tagName) }
            media.iFramesOnly = true
        case .partInf:
            try headerTag(tagName)
            guard media.partInformation == nil else { throw duplicate(tagName) }
            media.partInformation = try attributeTag(PartInformation.self, valueRange)
        case .serverControl:
            try headerTag(tagName)
            guard media.serverControl == nil else { throw duplicate(tagName) }
            media.serverControl = try attributeTag(ServerControl.self, valueRange)
        case .endList:
            try kindIs(.media, tagName)
            try noValue(tagName, valueRange)
            guard !media.endList else { throw duplicate(tagName) }
            media.endList = true
            if recordsSourceMap { map.tags[tagName] = lineNumber }
        case .skip:
            try kindIs(.media, tagName)
            guard media.skip == nil else { throw duplicate(tagName) }
            guard media.segments.isEmpty, pendingEXTINF == nil else {
                throw PlaylistParseError(.misplacedTag, line: lineNumber, "\(tagName) must come before the first listed segment (§4.4.5.2)")
            }
            media.skip = try attributeTag(Skip.self, valueRange)
            if recordsSourceMap { map.tags[tagName] = lineNumber }
        case .preloadHint:
            try kindIs(.media, tagName)
            media.preloadHints.append(try attributeTag(PreloadHint.self, valueRange))
        case .renditionReport:
            try kindIs(.media, tagName)
            media.renditionReports.append(try attributeTag(RenditionReport.self, valueRange))

        // Media segment tags
        case .discontinuity:
            try segmentTag(tagName)
            try noValue(tagName, valueRange)
            guard !pending.discontinuity else { throw duplicate(tagName, "for one segment") }
            pending.discontinuity = true
        case .key:
            try segmentTag(tagName)
            pending.keys.append(try attributeTag(Key.self, valueRange))
        case .map:
            try segmentTag(tagName)
            guard pending.map == nil else { throw duplicate(tagName, "for one segment") }
            pending.map = try attributeTag(MediaInitializationSection.self, valueRange)
        case .dateRange:
            try segmentTag(tagName)
            let range = try attributeTag(DateRange.self, valueRange)
            if recordsSourceMap, map.dateRanges[range.id] == nil { map.dateRanges[range.id] = lineNumber }
            pending.dateRanges.append(range)
        case .gap:
            try segmentTag(tagName)
            try noValue(tagName, valueRange)
            guard !pending.gap else { throw duplicate(tagName, "for one segment") }
            pending.gap = true
        case .bitrate:
            try segmentTag(tagName)
            guard pending.bitrate == nil else { throw duplicate(tagName, "for one segment") }
            pending.bitrate = try integer(tagName, valueRange)
        case .part:
            try segmentTag(tagName)
            pending.parts.append(try attributeTag(PartialSegment.self, valueRange))

        // De-facto ad markers
        case .cueOut:
            try segmentTag(tagName)
            var marker = CueOut(value: valueRange.map(text))
            if let value = marker.value, marker.syntax == .attributes {
                do throws(AttributeListParser.Failure) {
                    _ = try AttributeListParser.parse(value, strictNames: false)
                } catch {
                    guard tolerant, let rewritten = CueOut(durationThenParameters: value) else {
                        throw invalid(tagName, "must be a duration, DURATION=<seconds>, or empty (\(error.message))", valueRange)
                    }
                    marker = rewritten
                    tolerate(.cueOutTrailingParameters, "EXT-X-CUE-OUT:\(value) read as EXT-X-CUE-OUT:\(rewritten.value ?? "")")
                }
            }
            if tolerant { openBreak = (media.segments.count, marker.duration) }
            pending.adMarkers.append(.cueOut(marker))
        case .cueOutCont:
            try segmentTag(tagName)
            guard let valueRange, !valueRange.isEmpty else {
                guard tolerant else { throw invalid(tagName, "needs <elapsed>/<duration> or ElapsedTime=…,Duration=…", nil) }
                let marker = bareContinuation()
                pending.adMarkers.append(.cueOutContinuation(marker))
                tolerate(
                    .bareCueOutContinuation,
                    marker.value.isEmpty
                        ? "EXT-X-CUE-OUT-CONT with no value and no EXT-X-CUE-OUT above: read as inside a break, not re-emitted"
                        : "EXT-X-CUE-OUT-CONT with no value read as EXT-X-CUE-OUT-CONT:\(marker.value)")
                break
            }
            let marker = CueOutContinuation(value: text(valueRange))
            let parts = marker.parts
            guard parts.elapsed != nil || parts.duration != nil || parts.scte35 != nil else {
                throw invalid(tagName, "needs <elapsed>/<duration> or ElapsedTime=…,Duration=…", valueRange)
            }
            pending.adMarkers.append(.cueOutContinuation(marker))
        case .cueIn:
            try segmentTag(tagName)
            if tolerant { openBreak = nil }
            pending.adMarkers.append(.cueIn(value: valueRange.map(text)))
        case .oatcls:
            try segmentTag(tagName)
            guard let valueRange, Self.isBase64(slice(valueRange)) else {
                throw invalid(tagName, "must be a base64 splice_info_section", valueRange)
            }
            pending.adMarkers.append(.oatclsSCTE35(base64: text(valueRange)))
        case .scte35:
            try segmentTag(tagName)
            guard let valueRange else { throw invalid(tagName, "needs an attribute list (CUE=\"…\")", nil) }
            do throws(AttributeListParser.Failure) {
                let list = try AttributeListParser.parse(slice(valueRange), strictNames: false, maxAttributes: limits.maxAttributes)
                pending.adMarkers.append(.scte35(list))
            } catch {
                throw attributeFailure(tagName, error)
            }
        case .asset:
            try segmentTag(tagName)
            guard let valueRange else { throw invalid(tagName, "needs KEY=value pairs", nil) }
            pending.adMarkers.append(.asset(value: text(valueRange)))

        // Multivariant tags
        case .media:
            try kindIs(.multivariant, tagName)
            multivariant.renditions.append(try attributeTag(Rendition.self, valueRange))
            if recordsSourceMap { map.renditions.append(lineNumber) }
            try checkCount(multivariant.renditions.count + multivariant.variants.count)
        case .streamInf:
            try kindIs(.multivariant, tagName)
            if let pendingVariant { throw missingVariantURI(pendingVariant.line) }
            pendingVariant = (try attributeTag(VariantStream.self, valueRange), lineNumber)
        case .iFrameStreamInf:
            try kindIs(.multivariant, tagName)
            multivariant.iFrameVariants.append(try attributeTag(IFrameVariantStream.self, valueRange))
        case .sessionData:
            try kindIs(.multivariant, tagName)
            multivariant.sessionData.append(try attributeTag(SessionData.self, valueRange))
        case .sessionKey:
            try kindIs(.multivariant, tagName)
            multivariant.sessionKeys.append(try attributeTag(SessionKey.self, valueRange))
        case .contentSteering:
            try kindIs(.multivariant, tagName)
            guard multivariant.contentSteering == nil else { throw duplicate(tagName) }
            multivariant.contentSteering = try attributeTag(ContentSteering.self, valueRange)
        }
    }

    private mutating func unknown(_ whole: Range<Int>) throws(PlaylistParseError) {
        let tag = UnknownTag(text((whole.lowerBound + 1)..<whole.upperBound))
        if tolerant, kind != .multivariant, try dialectAdMarker(tag) { return }
        switch kind {
        case .multivariant:
            multivariant.unknownTags.append(tag)
        case .undetermined where !segmentPhase, .media where !segmentPhase:
            media.headerUnknownTags.append(tag)
        case .undetermined, .media:
            try countPendingTag()
            pending.unknownTags.append(tag)
        }
    }

    private mutating func extinf(_ valueRange: Range<Int>?) throws(PlaylistParseError) {
        try segmentTag("EXTINF")
        if let pendingEXTINF {
            throw PlaylistParseError(.missingURI, line: pendingEXTINF.line, "EXTINF is not followed by a URI line (§4.4.4.1)")
        }
        guard let valueRange else { throw invalid("EXTINF", "needs <duration>,[<title>]", nil) }
        var comma = valueRange.lowerBound
        while comma < valueRange.upperBound, bytes[comma] != UInt8(ascii: ",") { comma += 1 }
        guard let micros = HLSDuration.parse(buffer: slice(valueRange.lowerBound..<comma), allowNegative: false) else {
            throw invalid("EXTINF", "duration must be a non-negative decimal number of seconds", valueRange)
        }
        var title = comma + 1 < valueRange.upperBound ? text((comma + 1)..<valueRange.upperBound) : ""
        if tolerant, title.utf8.contains(9) {
            let spaced = title.map { $0 == "\t" ? " " : $0 }
            title = String(spaced.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
            tolerate(.extinfTitleWhitespace, "EXTINF title has a TAB; read as \"\(title)\"")
        }
        pendingEXTINF = (HLSDuration(microseconds: micros), title, lineNumber)
    }

    private mutating func uri(_ range: Range<Int>) throws(PlaylistParseError) {
        switch kind {
        case .multivariant:
            guard let pendingVariant else {
                throw PlaylistParseError(.missingVariantURI, line: lineNumber, "URI line without a preceding EXT-X-STREAM-INF (§4.4.6.2)")
            }
            var variant = pendingVariant.variant
            variant.uri = text(range)
            multivariant.variants.append(variant)
            if recordsSourceMap { map.variants.append(pendingVariant.line) }
            self.pendingVariant = nil
            try checkCount(multivariant.renditions.count + multivariant.variants.count)
        case .undetermined, .media:
            guard let extinf = pendingEXTINF else {
                throw PlaylistParseError(.missingEXTINF, line: lineNumber, "URI line without a preceding EXTINF (§4.4.4.1)")
            }
            if kind == .undetermined { setKind(.media) }
            segmentPhase = true
            var segment = MediaSegment(uri: text(range), duration: extinf.duration, title: extinf.title)
            segment.byteRange = pendingByteRange?.range
            swap(&segment.tags, &pending)  // leaves `pending` empty without copying the tags
            media.segments.append(consume segment)
            if recordsSourceMap {
                map.segments.append((pendingFirstLine == 0 ? extinf.line : pendingFirstLine, extinf.line, lineNumber))
            }
            pendingTagCount = 0
            pendingFirstLine = 0
            pendingEXTINF = nil
            pendingByteRange = nil
            try checkCount(media.segments.count)
        }
    }

    // MARK: Kind and position rules

    private mutating func setKind(_ newKind: Kind) {
        kind = newKind
        kindLine = lineNumber
    }

    private mutating func kindIs(_ expected: Kind, _ tagName: String) throws(PlaylistParseError) {
        if kind == .undetermined {
            setKind(expected)
            if expected == .multivariant, !media.headerUnknownTags.isEmpty {
                multivariant.unknownTags = media.headerUnknownTags
                media.headerUnknownTags = []
            }
        } else if kind != expected {
            let what = expected == .media ? "a media playlist tag" : "a multivariant playlist tag"
            throw PlaylistParseError(
                .mixedPlaylistKinds, line: lineNumber,
                "\(tagName) is \(what), but line \(kindLine) made this the other kind of playlist (§4.1)")
        }
    }

    private mutating func headerTag(_ tagName: String) throws(PlaylistParseError) {
        try kindIs(.media, tagName)
        if segmentPhase {
            let misplaced = PlaylistParseError(.misplacedTag, line: lineNumber, "\(tagName) must appear before the first media segment (§4.4.3)")
            guard tolerant else { throw misplaced }
            if tagName == KnownTag.mediaSequence.rawValue || tagName == KnownTag.discontinuitySequence.rawValue {
                // After a URI it would renumber segments already listed: that is not a placement slip.
                guard media.segments.isEmpty else { throw misplaced }
                tolerate(.lateSequenceTag, "\(tagName) after a segment tag but before the first URI; applied to the playlist")
            } else {
                tolerate(.lateHeaderTag, "\(tagName) after a segment tag; applied to the playlist")
            }
        }
        if recordsSourceMap { map.tags[tagName] = lineNumber }
    }

    private mutating func segmentTag(_ tagName: String) throws(PlaylistParseError) {
        try kindIs(.media, tagName)
        segmentPhase = true
        if pendingFirstLine == 0 { pendingFirstLine = lineNumber }
        try countPendingTag()
    }

    private mutating func countPendingTag() throws(PlaylistParseError) {
        pendingTagCount += 1
        if pendingTagCount > limits.maxTagsPerSegment {
            throw PlaylistParseError(.limitExceeded, line: lineNumber, "more than \(limits.maxTagsPerSegment) tags for one segment")
        }
    }

    @inline(__always)
    private func checkCount(_ count: Int) throws(PlaylistParseError) {
        if count > limits.maxSegments { throw tooMany() }
    }

    private func tooMany() -> PlaylistParseError {
        PlaylistParseError(.limitExceeded, line: lineNumber, "more than \(limits.maxSegments) entries")
    }

    // MARK: Values

    private mutating func attributeTag<T: AttributeListTag>(_ type: T.Type, _ valueRange: Range<Int>?) throws(PlaylistParseError) -> T {
        guard let valueRange else {
            throw PlaylistParseError(.malformedAttributeList, line: lineNumber, "\(T.tagName) needs an attribute list")
        }
        var list: AttributeList
        do throws(AttributeListParser.Failure) {
            list = try AttributeListParser.parse(slice(valueRange), strictNames: true, maxAttributes: limits.maxAttributes)
        } catch {
            guard tolerant, let spaced = attributesAfterSpacedCommas(valueRange) else { throw attributeFailure(T.tagName, error) }
            list = spaced
            tolerate(.attributeWhitespace, "\(T.tagName) has whitespace after a comma in its attribute list; ignored")
        }
        for spec in T.schema {
            if var value = list[spec.name] {
                if tolerant {
                    value = try toleratedValue(value, of: spec, in: T.tagName)
                    list[spec.name] = value
                }
                guard spec.type.accepts(value) else {
                    throw PlaylistParseError(
                        .invalidAttributeValue, line: lineNumber,
                        "\(T.tagName) \(spec.name) must be a \(spec.type.specName), got \(Self.show(value))")
                }
            } else if spec.isRequired {
                throw PlaylistParseError(.missingAttribute, line: lineNumber, "\(T.tagName) requires \(spec.name)")
            }
        }
        if T.allowsClientAttributes {
            for attribute in list.attributes where attribute.name.hasPrefix("X-") {
                var value = attribute.value
                if tolerant, case .token(let token) = value, HexSequence.isValid(Array(token.utf8)[...]) {
                    value = try toleratedValue(value, of: AttributeSpec(attribute.name, .hexadecimalSequence), in: T.tagName)
                    list[attribute.name] = value
                }
                guard AttributeType.clientValue.accepts(value) else {
                    throw PlaylistParseError(
                        .invalidAttributeValue, line: lineNumber,
                        "\(T.tagName) \(attribute.name) must be a \(AttributeType.clientValue.specName), got \(Self.show(value)) (§4.4.5.1)")
                }
            }
        }
        return T(attributes: list)
    }

    /// The attribute list at `range` read with whitespace after its commas skipped, if that is what
    /// kept it from parsing.
    private func attributesAfterSpacedCommas(_ range: Range<Int>) -> AttributeList? {
        try? AttributeListParser.parse(slice(range), strictNames: true, maxAttributes: limits.maxAttributes, skipsSpaceAfterComma: true)
    }

    /// A value of a tolerant parse, normalised: lower-case hex digits upper-cased, variable references
    /// in an enumerated-string substituted from the `EXT-X-DEFINE`s above.
    private mutating func toleratedValue(_ value: AttributeValue, of spec: AttributeSpec, in tagName: String)
        throws(PlaylistParseError) -> AttributeValue
    {
        guard case .token(let token) = value else { return value }
        switch spec.type {
        case .hexadecimalSequence:
            guard let upper = HexSequence.uppercased(token) else { return value }
            tolerate(.lowercaseHex, "\(tagName) \(spec.name) has lower-case hex digits; read as \(upper)")
            return .token(upper)
        case .enumeratedString:
            guard VariableReference.contains(token) else { return value }
            let values = definedValues()
            guard let substituted = VariableReference.substitute(token, values), !substituted.isEmpty,
                !VariableReference.contains(substituted)
            else {
                throw PlaylistParseError(
                    .invalidAttributeValue, line: lineNumber,
                    "\(tagName) \(spec.name) \(token) refers to a variable no EXT-X-DEFINE above gives a VALUE (§4.3)")
            }
            tolerate(.variableInEnumeratedString, "\(tagName) \(spec.name) \(token) has a variable reference; read as \(substituted)")
            return .token(substituted)
        default:
            return value
        }
    }

    /// Reads an Adobe or threefive ad-marker tag as its canonical marker (``AdMarker/init(dialect:openDuration:)``);
    /// returns whether `tag` was one.
    private mutating func dialectAdMarker(_ tag: UnknownTag) throws(PlaylistParseError) -> Bool {
        let text = tag.text
        guard text.hasPrefix(AdMarker.adobeCueTag) || text.hasPrefix(AdMarker.splicePointTag),
            var marker = AdMarker(dialect: tag, openDuration: openBreak?.duration)
        else { return false }
        try segmentTag(String(tag.name))
        switch marker.role {
        case .start: openBreak = (media.segments.count, marker.plannedDuration)
        case .end: openBreak = nil
        case .continuation:
            if case .cueOutContinuation(let cont) = marker, cont.value.isEmpty { marker = .cueOutContinuation(bareContinuation()) }
        case .cue, .metadata: break
        }
        pending.adMarkers.append(marker)
        let canonical = PlaylistSerializer.line(marker)
        let rule: IngestDeviation.Rule = tag.name == AdMarker.splicePointTag ? .splicePoint : .adobeCue
        tolerate(rule, "#\(text) read as \(canonical.isEmpty ? "inside a break (not re-emitted)" : canonical)")
        return true
    }

    /// A bare `EXT-X-CUE-OUT-CONT` given the value the canonical form would have: the time since the
    /// open `EXT-X-CUE-OUT` (the segments listed since it) and its duration; an empty value when the
    /// break opened before this playlist's window.
    private func bareContinuation() -> CueOutContinuation {
        guard let openBreak else { return CueOutContinuation(value: "") }
        var elapsed: Int64 = 0
        if openBreak.segment < media.segments.count {
            for segment in media.segments[openBreak.segment...] { elapsed += segment.duration.microseconds }
        }
        let since = HLSDuration(microseconds: elapsed)
        guard let duration = openBreak.duration else { return CueOutContinuation(value: "ElapsedTime=\(since)") }
        return CueOutContinuation(elapsed: since, duration: duration)
    }

    /// NAME → VALUE of the `EXT-X-DEFINE`s parsed so far (IMPORT and QUERYPARAM are resolved by the client).
    private func definedValues() -> [String: String] {
        var values: [String: String] = [:]
        for definition in definitions {
            if let name = definition.attributes.string("NAME"), let value = definition.attributes.string("VALUE") {
                values[name] = value
            }
        }
        return values
    }

    private func attributeFailure(_ tagName: String, _ failure: AttributeListParser.Failure) -> PlaylistParseError {
        let code: PlaylistParseError.Code =
            failure.isLimit ? .limitExceeded : failure.isDuplicate ? .duplicateAttribute : .malformedAttributeList
        return PlaylistParseError(code, line: lineNumber, "\(tagName): \(failure.message)")
    }

    private static func show(_ value: AttributeValue) -> String {
        let raw: String
        switch value {
        case .quoted(let q): raw = "\"\(q)\""
        case .token(let t): raw = t
        }
        return raw.utf8.count > 60 ? String(raw.prefix(57)) + "..." : raw
    }

    private func integer(_ tagName: String, _ valueRange: Range<Int>?) throws(PlaylistParseError) -> UInt64 {
        guard let valueRange, let value = UInt64.strictDecimal(text(valueRange)) else {
            throw invalid(tagName, "must be a decimal-integer", valueRange)
        }
        return value
    }

    private func noValue(_ tagName: String, _ valueRange: Range<Int>?) throws(PlaylistParseError) {
        if let valueRange { throw invalid(tagName, "takes no value", valueRange) }
    }

    private func invalid(_ tagName: String, _ rule: String, _ valueRange: Range<Int>?) -> PlaylistParseError {
        var message = "#\(tagName) \(rule)"
        if let valueRange {
            var shown = text(valueRange)
            if shown.utf8.count > 60 { shown = String(shown.prefix(57)) + "..." }
            message += ", got \"\(shown)\""
        }
        return PlaylistParseError(.invalidTagValue, line: lineNumber, message)
    }

    private func duplicate(_ tagName: String, _ scope: String = "in a playlist") -> PlaylistParseError {
        PlaylistParseError(.duplicateTag, line: lineNumber, "#\(tagName) may appear only once \(scope)")
    }

    private func missingVariantURI(_ line: Int) -> PlaylistParseError {
        PlaylistParseError(.missingVariantURI, line: line, "EXT-X-STREAM-INF is not followed by a URI line (§4.4.6.2)")
    }

    private static func isBase64(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        !b.isEmpty
            && b.allSatisfy { c in
                (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 43 || c == 47 || c == 61
                    || c == 45 || c == 95
            }
    }

    // MARK: Assembly

    mutating func finish() throws(PlaylistParseError) -> (playlist: Playlist, sourceMap: SourceMap) {
        switch kind {
        case .multivariant:
            if let pendingVariant { throw missingVariantURI(pendingVariant.line) }
            multivariant.version = version
            multivariant.independentSegments = independentSegments
            multivariant.start = start
            multivariant.definitions = definitions
            return (.multivariant(multivariant), map)
        case .undetermined, .media:
            if let pendingEXTINF {
                throw PlaylistParseError(.missingURI, line: pendingEXTINF.line, "EXTINF is not followed by a URI line (§4.4.4.1)")
            }
            if let pendingByteRange {
                throw PlaylistParseError(.missingURI, line: pendingByteRange.line, "EXT-X-BYTERANGE is not followed by a segment (§4.4.4.2)")
            }
            guard let targetDuration else {
                throw PlaylistParseError(.missingTargetDuration, line: 1, "a media playlist MUST contain EXT-X-TARGETDURATION (§4.4.3.1)")
            }
            media.targetDuration = targetDuration
            media.version = version
            media.independentSegments = independentSegments
            media.start = start
            media.definitions = definitions
            media.trailingTags = pending
            return (.media(media), map)
        }
    }
}
