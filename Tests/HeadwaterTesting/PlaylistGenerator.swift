public import HeadwaterHLS

/// Generates random, valid playlist values for property tests: every value it returns is one the
/// serializer can write and the parser reads back equal (`parse(serialize(p)) == p`).
///
/// It covers every tag the model has, with the awkward values real upstreams produce: microsecond
/// EXTINF, titles with commas and non-ASCII text, byte ranges with and without `@offset`, dates in
/// `Z`, `±hh:mm` and zone-less form, DATERANGE with SCTE-35 hex and `X-` attributes, every ad marker
/// syntax, LL-HLS parts, hints and reports, and unknown tags and attributes in every position.
///
/// The constraints it respects are those of the text format, not arbitrary ones:
/// - durations are ≥ 0 (EXTINF, DURATION) and written with at most six decimals; with
///   `EXT-X-VERSION` < 3 EXTINF is written as an integer, so those playlists get whole seconds;
/// - quoted strings hold no `"`, CR or LF; tokens hold no `"`, `,` or whitespace; no line ends in
///   whitespace; no text holds control characters;
/// - an unknown tag's name is never a modelled tag's name;
/// - dates are whole milliseconds in years 0001–9998, offsets within ±23:59;
/// - unknown tags before the first segment are header tags on the wire, so a segment-level unknown tag
///   on the first segment (or on the trailing tags of an empty playlist) only appears after a modelled
///   segment tag that puts the parser in the segment phase;
/// - a multivariant playlist has at least one tag that only a multivariant playlist can have.
public struct PlaylistGenerator {
    public var random: SeededRandom

    public init(seed: UInt64) { self.random = SeededRandom(seed: seed) }

    /// Every tag name the parser dispatches on; an ``UnknownTag`` must not carry one of these names.
    public static let modelledTagNames: Set<String> = [
        "EXTM3U", "EXTINF", "EXT-X-VERSION", "EXT-X-INDEPENDENT-SEGMENTS", "EXT-X-START", "EXT-X-DEFINE",
        "EXT-X-TARGETDURATION", "EXT-X-MEDIA-SEQUENCE", "EXT-X-DISCONTINUITY-SEQUENCE", "EXT-X-PLAYLIST-TYPE",
        "EXT-X-I-FRAMES-ONLY", "EXT-X-PART-INF", "EXT-X-SERVER-CONTROL", "EXT-X-ENDLIST", "EXT-X-SKIP",
        "EXT-X-PRELOAD-HINT", "EXT-X-RENDITION-REPORT", "EXT-X-DISCONTINUITY", "EXT-X-KEY", "EXT-X-MAP",
        "EXT-X-PROGRAM-DATE-TIME", "EXT-X-BYTERANGE", "EXT-X-DATERANGE", "EXT-X-GAP", "EXT-X-BITRATE",
        "EXT-X-PART", "EXT-X-CUE-OUT", "EXT-X-CUE-OUT-CONT", "EXT-X-CUE-IN", "EXT-OATCLS-SCTE35",
        "EXT-X-SCTE35", "EXT-X-ASSET", "EXT-X-MEDIA", "EXT-X-STREAM-INF", "EXT-X-I-FRAME-STREAM-INF",
        "EXT-X-SESSION-DATA", "EXT-X-SESSION-KEY", "EXT-X-CONTENT-STEERING",
    ]

    // MARK: Media playlist

    /// A media playlist with up to `maxSegments` segments.
    public mutating func mediaPlaylist(maxSegments: Int = 12) -> MediaPlaylist {
        var p = MediaPlaylist(targetDuration: targetDuration())
        var integerDurations = false
        if random.chance(0.75) {
            if random.chance(0.1) {
                p.version = random.int(1...2)
                integerDurations = true
            } else {
                p.version = random.int(3...13)
            }
        }
        p.independentSegments = random.chance(0.3)
        if random.chance(0.2) { p.start = startPoint() }
        if random.chance(0.15) { p.definitions = (0..<random.int(1...2)).map { _ in definition() } }
        if random.chance(0.7) { p.mediaSequence = bigInteger() }
        if random.chance(0.4) { p.discontinuitySequence = bigInteger() }
        if random.chance(0.2) { p.playlistType = random.chance(0.5) ? .event : .vod }
        p.iFramesOnly = random.chance(0.1)
        let lowLatency = random.chance(0.3)
        if lowLatency || random.chance(0.05) { p.partInformation = partInformation() }
        if lowLatency || random.chance(0.1) { p.serverControl = serverControl() }
        if random.chance(0.3) { p.headerUnknownTags = (0..<random.int(1...3)).map { _ in unknownTag() } }
        if random.chance(0.1) { p.skip = skip() }
        let count = random.int(0...maxSegments)
        for index in 0..<count {
            p.segments.append(segment(first: index == 0, integerDurations: integerDurations, lowLatency: lowLatency))
        }
        if random.chance(lowLatency ? 0.8 : 0.2) {
            p.trailingTags = segmentTags(first: p.segments.isEmpty, lowLatency: lowLatency)
        }
        if lowLatency || random.chance(0.1) { p.preloadHints = (0..<random.int(0...2)).map { _ in preloadHint() } }
        if lowLatency || random.chance(0.1) {
            p.renditionReports = (0..<random.int(0...3)).map { _ in renditionReport() }
        }
        p.endList = random.chance(0.3)
        return p
    }

    /// One media segment. `first` applies the header/segment placement rule for unknown tags.
    public mutating func segment(first: Bool = false, integerDurations: Bool = false, lowLatency: Bool = false)
        -> MediaSegment
    {
        var segment = MediaSegment(
            uri: uri(extension: random.pick(["ts", "m4s", "aac", "mp4", "vtt"])),
            duration: duration(integer: integerDurations)
        )
        if random.chance(0.3) { segment.title = title() }
        if random.chance(0.2) { segment.byteRange = byteRange(offset: random.chance(0.5)) }
        if random.chance(0.6) { segment.tags = segmentTags(first: first, lowLatency: lowLatency) }
        return segment
    }

    /// The tags before a segment's EXTINF (or after the last URI).
    public mutating func segmentTags(first: Bool = false, lowLatency: Bool = false) -> SegmentTags {
        var t = SegmentTags()
        t.discontinuity = random.chance(0.2)
        if random.chance(0.15) { t.keys = (0..<random.int(1...2)).map { _ in key() } }
        if random.chance(0.15) { t.map = mediaInitializationSection() }
        if random.chance(0.3) { t.programDateTime = programDateTime() }
        if random.chance(0.15) { t.dateRanges = (0..<random.int(1...2)).map { _ in dateRange() } }
        if random.chance(0.25) { t.adMarkers = (0..<random.int(1...3)).map { _ in adMarker() } }
        let segmentPhase = !first || t != SegmentTags()
        if segmentPhase && random.chance(0.2) { t.unknownTags = (0..<random.int(1...2)).map { _ in unknownTag() } }
        t.gap = random.chance(0.1)
        if random.chance(0.15) { t.bitrate = UInt64(random.int(0...50_000)) }
        if lowLatency ? random.chance(0.6) : random.chance(0.05) {
            t.parts = (0..<random.int(1...4)).map { _ in partialSegment() }
        }
        return t
    }

    // MARK: Multivariant playlist

    public mutating func multivariantPlaylist() -> MultivariantPlaylist {
        var p = MultivariantPlaylist()
        if random.chance(0.75) { p.version = random.int(1...13) }
        p.independentSegments = random.chance(0.3)
        if random.chance(0.15) { p.start = startPoint() }
        if random.chance(0.15) { p.definitions = (0..<random.int(1...2)).map { _ in definition() } }
        if random.chance(0.3) { p.sessionData = (0..<random.int(1...2)).map { _ in sessionData() } }
        if random.chance(0.2) { p.sessionKeys = [SessionKey(attributes: keyAttributes(allowNone: false))] }
        if random.chance(0.2) { p.contentSteering = contentSteering() }
        if random.chance(0.7) { p.renditions = (0..<random.int(1...5)).map { _ in rendition() } }
        if random.chance(0.9) { p.variants = (0..<random.int(1...6)).map { _ in variantStream() } }
        if random.chance(0.3) { p.iFrameVariants = (0..<random.int(1...3)).map { _ in iFrameVariantStream() } }
        if random.chance(0.3) { p.unknownTags = (0..<random.int(1...3)).map { _ in unknownTag() } }
        let hasMultivariantTag =
            !p.sessionData.isEmpty || !p.sessionKeys.isEmpty || p.contentSteering != nil || !p.renditions.isEmpty
            || !p.variants.isEmpty || !p.iFrameVariants.isEmpty
        if !hasMultivariantTag { p.variants = [variantStream()] }
        return p
    }

    public mutating func rendition() -> Rendition {
        let type = random.pick(["AUDIO", "VIDEO", "SUBTITLES", "CLOSED-CAPTIONS"])
        var list: AttributeList = [
            Attribute("TYPE", .token(type)),
            Attribute("GROUP-ID", .quoted(random.pick(["aud", "audio-aac", "subs", "cc", "vid"]) + "\(random.int(0...9))")),
            Attribute("NAME", .quoted(quotedText(maxLength: 20))),
        ]
        if type == "CLOSED-CAPTIONS" {
            list["INSTREAM-ID"] = .quoted(random.pick(["CC1", "CC2", "SERVICE1", "SERVICE63"]))
        } else if random.chance(0.8) {
            list["URI"] = .quoted(uri(extension: "m3u8"))
        }
        if random.chance(0.6) { list["LANGUAGE"] = .quoted(random.pick(["en", "de", "fr-CA", "ja", "und"])) }
        if random.chance(0.1) { list["ASSOC-LANGUAGE"] = .quoted("en") }
        if random.chance(0.1) { list["STABLE-RENDITION-ID"] = .quoted(identifier()) }
        if random.chance(0.5) { list["DEFAULT"] = .yesNo(random.chance(0.5)) }
        if random.chance(0.5) { list["AUTOSELECT"] = .yesNo(random.chance(0.5)) }
        if random.chance(0.1) { list["FORCED"] = .yesNo(random.chance(0.5)) }
        if random.chance(0.1) { list["BIT-DEPTH"] = .integer(random.pick([8, 16, 24])) }
        if random.chance(0.1) { list["SAMPLE-RATE"] = .integer(random.pick([44_100, 48_000])) }
        if random.chance(0.2) {
            list["CHARACTERISTICS"] = .quoted("public.accessibility.describes-video,public.easy-to-read")
        }
        if random.chance(0.3) { list["CHANNELS"] = .quoted(random.pick(["2", "6", "16/JOC"])) }
        return Rendition(attributes: decorate(list, schema: Rendition.schema))
    }

    public mutating func variantStream() -> VariantStream {
        var list = variantAttributes()
        if random.chance(0.5) { list["FRAME-RATE"] = .decimal(duration(maxSeconds: 120)) }
        if random.chance(0.5) { list["AUDIO"] = .quoted("aud\(random.int(0...9))") }
        if random.chance(0.2) { list["SUBTITLES"] = .quoted("subs\(random.int(0...9))") }
        if random.chance(0.3) { list["CLOSED-CAPTIONS"] = random.chance(0.5) ? .token("NONE") : .quoted("cc1") }
        return VariantStream(attributes: decorate(list, schema: VariantStream.schema), uri: uri(extension: "m3u8"))
    }

    public mutating func iFrameVariantStream() -> IFrameVariantStream {
        var list = variantAttributes()
        list["URI"] = .quoted(uri(extension: "m3u8"))
        return IFrameVariantStream(attributes: decorate(list, schema: IFrameVariantStream.schema))
    }

    private mutating func variantAttributes() -> AttributeList {
        var list: AttributeList = [Attribute("BANDWIDTH", .integer(random.int(0...40_000_000)))]
        if random.chance(0.5) { list["AVERAGE-BANDWIDTH"] = .integer(random.int(0...40_000_000)) }
        if random.chance(0.1) { list["SCORE"] = .decimal(duration(maxSeconds: 10)) }
        if random.chance(0.7) {
            list["CODECS"] = .quoted(random.pick(["avc1.64001f,mp4a.40.2", "hvc1.2.4.L123.B0", "mp4a.40.2", "ec-3"]))
        }
        if random.chance(0.05) { list["SUPPLEMENTAL-CODECS"] = .quoted("dvh1.08.07/db4h") }
        if random.chance(0.6) { list["RESOLUTION"] = .token("\(random.int(0...7680))x\(random.int(0...4320))") }
        if random.chance(0.2) { list["HDCP-LEVEL"] = .token(random.pick(["NONE", "TYPE-0", "TYPE-1"])) }
        if random.chance(0.05) { list["ALLOWED-CPC"] = .quoted("com.example.drm1:SMART-TV/PC") }
        if random.chance(0.2) { list["VIDEO-RANGE"] = .token(random.pick(["SDR", "HLG", "PQ"])) }
        if random.chance(0.05) { list["REQ-VIDEO-LAYOUT"] = .quoted("CH-STEREO,CH-MONO") }
        if random.chance(0.1) { list["STABLE-VARIANT-ID"] = .quoted(identifier()) }
        if random.chance(0.1) { list["VIDEO"] = .quoted("vid\(random.int(0...9))") }
        if random.chance(0.1) { list["PATHWAY-ID"] = .quoted(random.pick(["CDN-A", "CDN-B"])) }
        if random.chance(0.1) { list["PROGRAM-ID"] = .integer(random.int(0...9)) }
        return list
    }

    public mutating func sessionData() -> SessionData {
        var list: AttributeList = [Attribute("DATA-ID", .quoted("com.example." + identifier()))]
        if random.chance(0.5) {
            list["VALUE"] = .quoted(quotedText(maxLength: 30))
        } else {
            list["URI"] = .quoted(uri(extension: "json"))
            if random.chance(0.5) { list["FORMAT"] = .token(random.pick(["JSON", "RAW"])) }
        }
        if random.chance(0.3) { list["LANGUAGE"] = .quoted("en") }
        return SessionData(attributes: decorate(list, schema: SessionData.schema))
    }

    public mutating func contentSteering() -> ContentSteering {
        var list: AttributeList = [Attribute("SERVER-URI", .quoted(uri(extension: "json")))]
        if random.chance(0.5) { list["PATHWAY-ID"] = .quoted(random.pick(["CDN-A", "CDN-B"])) }
        return ContentSteering(attributes: decorate(list, schema: ContentSteering.schema))
    }

    // MARK: Header tags

    public mutating func targetDuration() -> Int {
        random.chance(0.9) ? random.int(1...12) : random.int(1...86_400)
    }

    public mutating func startPoint() -> StartPoint {
        var list: AttributeList = [Attribute("TIME-OFFSET", .decimal(signedDuration()))]
        if random.chance(0.5) { list["PRECISE"] = .yesNo(random.chance(0.5)) }
        return StartPoint(attributes: decorate(list, schema: StartPoint.schema))
    }

    public mutating func definition() -> VariableDefinition {
        let list: AttributeList
        switch random.int(0...2) {
        case 0: list = [Attribute("NAME", .quoted(identifier())), Attribute("VALUE", .quoted(quotedText(maxLength: 20)))]
        case 1: list = [Attribute("IMPORT", .quoted(identifier()))]
        default: list = [Attribute("QUERYPARAM", .quoted(identifier()))]
        }
        return VariableDefinition(attributes: list)
    }

    public mutating func partInformation() -> PartInformation {
        PartInformation(attributes: decorate([Attribute("PART-TARGET", .decimal(duration(maxSeconds: 3)))], schema: PartInformation.schema))
    }

    public mutating func serverControl() -> ServerControl {
        var list = AttributeList()
        if random.chance(0.5) { list["CAN-SKIP-UNTIL"] = .decimal(duration(maxSeconds: 60)) }
        if random.chance(0.3) { list["CAN-SKIP-DATERANGES"] = .yesNo(random.chance(0.7)) }
        if random.chance(0.5) { list["HOLD-BACK"] = .decimal(duration(maxSeconds: 30)) }
        if random.chance(0.5) { list["PART-HOLD-BACK"] = .decimal(duration(maxSeconds: 10)) }
        if random.chance(0.6) || list.isEmpty { list["CAN-BLOCK-RELOAD"] = .yesNo(random.chance(0.8)) }
        return ServerControl(attributes: decorate(list, schema: ServerControl.schema))
    }

    public mutating func skip() -> Skip {
        var list: AttributeList = [Attribute("SKIPPED-SEGMENTS", .integer(random.int(0...10_000)))]
        if random.chance(0.4) {
            // Tab-separated IDs (§4.4.5.2); possibly empty.
            list["RECENTLY-REMOVED-DATERANGES"] = .quoted((0..<random.int(0...3)).map { _ in identifier() }.joined(separator: "\t"))
        }
        return Skip(attributes: decorate(list, schema: Skip.schema))
    }

    // MARK: Segment tags

    public mutating func key() -> Key { Key(attributes: keyAttributes(allowNone: true)) }

    private mutating func keyAttributes(allowNone: Bool) -> AttributeList {
        let method = allowNone && random.chance(0.25) ? "NONE" : random.pick(["AES-128", "SAMPLE-AES", "SAMPLE-AES-CTR"])
        var list: AttributeList = [Attribute("METHOD", .token(method))]
        if method == "NONE" { return list }
        list["URI"] = .quoted(random.chance(0.5) ? uri(extension: "key") : "skd://" + identifier())
        if random.chance(0.5) { list["IV"] = hex(count: 16) }
        if random.chance(0.4) {
            list["KEYFORMAT"] = .quoted(random.pick(["identity", "com.apple.streamingkeydelivery", "urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"]))
        }
        if random.chance(0.3) { list["KEYFORMATVERSIONS"] = .quoted(random.pick(["1", "1/2/5"])) }
        return decorate(list, schema: Key.schema)
    }

    public mutating func mediaInitializationSection() -> MediaInitializationSection {
        var list: AttributeList = [Attribute("URI", .quoted(uri(extension: "mp4")))]
        if random.chance(0.4) { list["BYTERANGE"] = .quoted(byteRange(offset: true).description) }
        return MediaInitializationSection(attributes: decorate(list, schema: MediaInitializationSection.schema))
    }

    public mutating func dateRange() -> DateRange {
        var list: AttributeList = [Attribute("ID", .quoted(random.chance(0.8) ? identifier() : quotedText(maxLength: 24)))]
        if random.chance(0.5) {
            list["CLASS"] = .quoted(random.pick(["com.apple.hls.interstitial", "com.example.ad", "urn:scte:scte35:2013:bin", ""]))
        }
        if random.chance(0.9) { list["START-DATE"] = .quoted(dateText()) }
        if random.chance(0.2) { list["CUE"] = .quoted(random.pick(["PRE", "POST", "ONCE", "PRE,ONCE", "POST,ONCE"])) }
        if random.chance(0.2) { list["END-DATE"] = .quoted(dateText()) }
        if random.chance(0.4) { list["DURATION"] = .decimal(duration(maxSeconds: 600)) }
        if random.chance(0.3) { list["PLANNED-DURATION"] = .decimal(duration(maxSeconds: 600)) }
        if random.chance(0.1) { list["SCTE35-CMD"] = hex(count: random.int(1...40)) }
        if random.chance(0.4) { list["SCTE35-OUT"] = hex(count: random.int(1...60)) }
        if random.chance(0.2) { list["SCTE35-IN"] = hex(count: random.int(1...60)) }
        if random.chance(0.1) { list["END-ON-NEXT"] = .token("YES") }
        for _ in 0..<random.int(0...3) where random.chance(0.5) {
            let name = "X-" + attributeName()
            guard !list.contains(name) else { continue }
            switch random.int(0...3) {
            case 0: list[name] = .quoted(random.chance(0.5) ? uri(extension: "m3u8") : quotedText(maxLength: 20))
            case 1: list[name] = hex(count: random.int(1...8))
            case 2: list[name] = .decimal(signedDuration())
            default: list[name] = .token(String(random.int(0...600)))
            }
        }
        return DateRange(attributes: decorate(list, schema: DateRange.schema))
    }

    public mutating func adMarker() -> AdMarker {
        switch random.int(0...5) {
        case 0:
            switch random.int(0...4) {
            case 0: return .cueOut(CueOut(value: nil))
            case 1: return .cueOut(CueOut(value: ""))
            case 2: return .cueOut(CueOut(duration: duration(maxSeconds: 300)))
            case 3: return .cueOut(CueOut(value: String(random.int(0...300))))
            default:
                var list: AttributeList = [Attribute("DURATION", .decimal(duration(maxSeconds: 300)))]
                if random.chance(0.3) { list["BREAKID"] = .quoted(identifier()) }
                if random.chance(0.2) { list["CUE"] = .quoted(base64()) }
                return .cueOut(CueOut(value: attributeText(list)))
            }
        case 1:
            let elapsed = duration(maxSeconds: 120)
            let total = duration(maxSeconds: 120)
            switch random.int(0...2) {
            case 0: return .cueOutContinuation(CueOutContinuation(elapsed: elapsed, duration: total))
            case 1: return .cueOutContinuation(CueOutContinuation(value: "\(elapsed)/\(random.int(0...300))"))
            default:
                var list: AttributeList = [
                    Attribute("ElapsedTime", .decimal(elapsed)), Attribute("Duration", .token(String(random.int(0...300)))),
                ]
                if random.chance(0.7) { list["SCTE35"] = .token(base64()) }
                return .cueOutContinuation(CueOutContinuation(value: attributeText(list)))
            }
        case 2:
            switch random.int(0...2) {
            case 0: return .cueIn(value: nil)
            case 1: return .cueIn(value: "")
            default: return .cueIn(value: token())
            }
        case 3:
            return .oatclsSCTE35(base64: base64())
        case 4:
            var list: AttributeList = [Attribute("CUE", .quoted(base64()))]
            switch random.int(0...3) {
            case 0: list["CUE-OUT"] = .token("YES")
            case 1: list["CUE-IN"] = .token("YES")
            case 2: list["CUE-OUT"] = .token("CONT")
            default: list["TYPE"] = .token("OUT")
            }
            if random.chance(0.3) { list["DURATION"] = .decimal(duration(maxSeconds: 120)) }
            if random.chance(0.2) { list["vendor_id"] = .token(String(random.int(0...99))) }
            return .scte35(list)
        default:
            var list: AttributeList = [Attribute("CAID", .token(String(random.int(0...99_999_999))))]
            if random.chance(0.5) { list["GENRE"] = .token(random.pick(["CV", "NEWS", "SPORTS"])) }
            if random.chance(0.5) { list["EPISODE"] = .quoted("Episode%20Name%20" + identifier()) }
            return .asset(value: attributeText(list))
        }
    }

    public mutating func partialSegment() -> PartialSegment {
        var list: AttributeList = [
            Attribute("DURATION", .decimal(duration(maxSeconds: 2))), Attribute("URI", .quoted(uri(extension: "mp4"))),
        ]
        if random.chance(0.4) { list["INDEPENDENT"] = .yesNo(random.chance(0.8)) }
        if random.chance(0.3) { list["BYTERANGE"] = .quoted(byteRange(offset: random.chance(0.5)).description) }
        if random.chance(0.1) { list["GAP"] = .token("YES") }
        return PartialSegment(attributes: decorate(list, schema: PartialSegment.schema))
    }

    public mutating func preloadHint() -> PreloadHint {
        var list: AttributeList = [
            Attribute("TYPE", .token(random.pick(["PART", "MAP"]))), Attribute("URI", .quoted(uri(extension: "mp4"))),
        ]
        if random.chance(0.3) { list["BYTERANGE-START"] = .integer(bigInteger()) }
        if random.chance(0.3) { list["BYTERANGE-LENGTH"] = .integer(bigInteger()) }
        return PreloadHint(attributes: decorate(list, schema: PreloadHint.schema))
    }

    public mutating func renditionReport() -> RenditionReport {
        var list: AttributeList = [Attribute("URI", .quoted(uri(extension: "m3u8")))]
        if random.chance(0.8) { list["LAST-MSN"] = .integer(bigInteger()) }
        if random.chance(0.6) { list["LAST-PART"] = .integer(random.int(0...20)) }
        return RenditionReport(attributes: decorate(list, schema: RenditionReport.schema))
    }

    /// A tag the parser does not model: a vendor `#EXT-…` tag or a comment.
    public mutating func unknownTag() -> UnknownTag {
        while true {
            let text: String
            switch random.int(0...4) {
            case 0: text = "EXT-X-" + attributeName()
            case 1: text = "EXT-X-" + attributeName() + ":" + token()
            case 2: text = random.pick(["EXT-X-CUE", "EXT-X-PROGRAM-ID", "EXT-X-ALLOW-CACHE", "EXT-X-SPLICEPOINT-SCTE35"]) + ":" + token()
            case 3: text = random.pick([" ", "", "#", "-"]) + title()
            default: text = "EXT-X-" + attributeName() + ":" + attributeText(unknownAttributes())
            }
            let tag = UnknownTag(text)
            if !Self.modelledTagNames.contains(String(tag.name)) && !text.hasSuffix(" ") { return tag }
        }
    }

    // MARK: Values

    /// A non-negative duration with at most `maxSeconds` whole seconds, in one of the precisions
    /// encoders write: whole seconds, milliseconds, and microseconds (six decimals) most often.
    public mutating func duration(maxSeconds: Int = 12, integer: Bool = false) -> HLSDuration {
        let seconds = Int64(random.int(0...maxSeconds))
        if integer { return .seconds(seconds) }
        switch random.int(0...9) {
        case 0: return .seconds(seconds)
        case 1: return .zero
        case 2, 3, 4: return HLSDuration(microseconds: seconds * 1_000_000 + Int64(random.int(0...999)) * 1000)
        case 5: return HLSDuration(microseconds: seconds * 1_000_000 + Int64(random.int(0...99)) * 10)
        case 6: return HLSDuration(microseconds: Int64(random.int(0...999_999_999_999)) * 1_000_000 + Int64(random.int(0...999_999)))
        default: return HLSDuration(microseconds: seconds * 1_000_000 + Int64(random.int(0...999_999)))
        }
    }

    /// A duration that may be negative (`TIME-OFFSET`, `X-` client attributes).
    public mutating func signedDuration() -> HLSDuration {
        let d = duration(maxSeconds: 600)
        return random.chance(0.5) ? HLSDuration(microseconds: -d.microseconds) : d
    }

    /// A date in years 0001–9998 with millisecond precision and a random zone.
    public mutating func programDateTime() -> ProgramDateTime {
        let ms: Int64
        if random.chance(0.8) {
            ms = Int64(random.int(1_700_000_000_000...1_900_000_000_000))  // 2023–2030
        } else {
            ms = Int64(random.int(-62_135_596_800_000...253_370_764_800_000 - 1))  // 0001-01-01 … 9998-12-31
        }
        let zone: ProgramDateTime.Zone
        switch random.int(0...5) {
        case 0, 1, 2: zone = .utc
        case 3: zone = .unspecified
        case 4: zone = .offset(minutes: random.pick([-480, -300, 0, 60, 330, 345, 540, -210]))
        default: zone = .offset(minutes: random.int(-(23 * 60 + 59)...(23 * 60 + 59)))
        }
        return ProgramDateTime(millisecondsSinceEpoch: ms, zone: zone)
    }

    /// The text of a quoted date attribute: canonical, or another spelling the parser accepts
    /// (kept verbatim inside the quotes).
    private mutating func dateText() -> String {
        let canonical = programDateTime().description
        switch random.int(0...4) {
        case 0: return canonical.replacingFirst(".000Z", with: "Z")
        case 1: return canonical.replacingFirst("Z", with: "+00:00")
        default: return canonical
        }
    }

    public mutating func byteRange(offset: Bool) -> ByteRange {
        ByteRange(length: bigInteger(), offset: offset ? bigInteger() : nil)
    }

    /// Mostly small, sometimes anything up to 2^64 − 1.
    public mutating func bigInteger() -> UInt64 {
        switch random.int(0...9) {
        case 0: return random.next()
        case 1: return UInt64.max
        case 2: return 0
        default: return UInt64(random.int(0...2_000_000))
        }
    }

    /// A hexadecimal-sequence, upper case as the spec's character set says, sometimes `0X` or lower case.
    public mutating func hex(count: Int) -> AttributeValue {
        let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let upper = HexSequence.encode(bytes)
        switch random.int(0...9) {
        case 0: return .token("0X" + upper.dropFirst(2))
        case 1: return .token(upper.lowercased())
        default: return .token(upper)
        }
    }

    public mutating func base64() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var text = String((0..<(4 * random.int(1...20))).map { _ in random.pick(alphabet) })
        let padding = random.int(0...2)
        if padding > 0 { text = String(text.dropLast(padding)) + String(repeating: "=", count: padding) }
        return text
    }

    /// A segment or playlist URI, relative or absolute, sometimes with a query string.
    public mutating func uri(extension ext: String) -> String {
        var text: String
        switch random.int(0...3) {
        case 0: text = "https://cdn\(random.int(0...9)).example.com/live/\(identifier())/"
        case 1: text = "../" + identifier() + "/"
        case 2: text = "/" + identifier() + "/"
        default: text = ""
        }
        text += identifier() + "_\(random.int(0...999_999)).\(ext)"
        if random.chance(0.2) { text += "?token=\(identifier())&exp=\(random.int(0...Int(Int32.max)))%20x" }
        return text
    }

    /// An EXTINF title: may hold spaces, commas and non-ASCII text, but does not end in whitespace.
    public mutating func title() -> String {
        var text = quotedText(maxLength: 24)
        while text.last == " " { text.removeLast() }
        return text
    }

    /// The content of a quoted-string: anything but `"`, CR, LF and other control characters.
    public mutating func quotedText(maxLength: Int) -> String {
        let pool: [Character] = Array("abcXYZ019 ,=#:/.-_@%+'()[]{}") + ["é", "ß", "日", "本", "🎬", "\u{00A0}"]
        return String((0..<random.int(0...maxLength)).map { _ in random.pick(pool) })
    }

    /// An unquoted value: no `"`, `,`, whitespace; not empty.
    public mutating func token() -> String {
        let pool = Array("abcXYZ0123456789.-_/:@=#+")
        return String((0..<random.int(1...16)).map { _ in random.pick(pool) })
    }

    public mutating func identifier() -> String {
        let pool = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
        return String(random.pick(Array("abcdefghijklmnopqrstuvwxyz"))) + String((0..<random.int(0...11)).map { _ in random.pick(pool) })
    }

    /// An attribute name: `[A-Z0-9-]`, starting with a letter.
    public mutating func attributeName() -> String {
        let pool = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
        return String(random.pick(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))) + String((0..<random.int(1...10)).map { _ in random.pick(pool) })
    }

    private mutating func unknownAttributes() -> AttributeList {
        var list = AttributeList()
        for _ in 0..<random.int(1...4) {
            let name = attributeName()
            if !list.contains(name) { list[name] = random.chance(0.5) ? .quoted(quotedText(maxLength: 16)) : .token(token()) }
        }
        return list
    }

    /// Adds unknown attributes (names outside `schema`, never `X-`) and sometimes shuffles the order:
    /// the parser keeps both.
    private mutating func decorate(_ list: AttributeList, schema: [AttributeSpec]) -> AttributeList {
        var list = list
        if random.chance(0.15) {
            for _ in 0..<random.int(1...2) {
                let name = attributeName()
                guard !name.hasPrefix("X-"), !list.contains(name), !schema.contains(where: { $0.name == name }) else { continue }
                list[name] = random.chance(0.5) ? .quoted(quotedText(maxLength: 16)) : .token(token())
            }
        }
        if random.chance(0.2) { list.attributes.shuffle(using: &random) }
        return list
    }

    private func attributeText(_ list: AttributeList) -> String {
        var bytes: [UInt8] = []
        PlaylistSerializer.writeAttributes(list, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    /// The string with the first occurrence of `target` replaced (no Foundation in this target).
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        var index = startIndex
        while index < endIndex {
            if self[index...].hasPrefix(target) {
                var copy = self
                copy.replaceSubrange(index..<self.index(index, offsetBy: target.count), with: replacement)
                return copy
            }
            index = self.index(after: index)
        }
        return self
    }
}

/// Failure messages for round-trip tests: where two texts or two values first differ.
public enum PlaylistDiff {
    /// `line N: expected … / actual …` for the first differing line, or `nil` when equal.
    public static func firstDifference(expected: String, actual: String) -> String? {
        guard expected != actual else { return nil }
        let e = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let a = actual.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(e.count, a.count) {
            let el = index < e.count ? String(e[index]) : "<end of text>"
            let al = index < a.count ? String(a[index]) : "<end of text>"
            if el != al { return "line \(index + 1):\n  expected: \(el.debugDescription)\n  actual:   \(al.debugDescription)" }
        }
        return "the texts differ only in line endings"
    }

    /// The first differing line of the `dump` of two values (a field path and both values).
    public static func describe<T>(expected: T, actual: T) -> String {
        var e = ""
        var a = ""
        dump(expected, to: &e)
        dump(actual, to: &a)
        return firstDifference(expected: e, actual: a) ?? "values differ but dump the same"
    }
}
