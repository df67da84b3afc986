import HeadwaterHLS
import Testing

/// Parses a media playlist written as lines (joined with LF, plus a final LF).
func parseMedia(_ lines: [String]) throws -> MediaPlaylist {
    try PlaylistParser().parseMedia(Array((lines.joined(separator: "\n") + "\n").utf8))
}

func parseMultivariant(_ lines: [String]) throws -> MultivariantPlaylist {
    try PlaylistParser().parseMultivariant(Array((lines.joined(separator: "\n") + "\n").utf8))
}

/// Expects parsing `bytes` to fail with `code` at `line`.
func expectParseError(
    _ bytes: [UInt8], _ code: PlaylistParseError.Code, line: Int, limits: PlaylistParser.Limits = .default,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let error = #expect(throws: PlaylistParseError.self, sourceLocation: sourceLocation) {
        try PlaylistParser(limits: limits).parse(bytes)
    }
    guard let error else { return }
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    #expect(error.line == line, "\(error)", sourceLocation: sourceLocation)
    #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
}

func expectParseError(
    _ lines: [String], _ code: PlaylistParseError.Code, line: Int, limits: PlaylistParser.Limits = .default,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    expectParseError(Array((lines.joined(separator: "\n") + "\n").utf8), code, line: line, limits: limits, sourceLocation: sourceLocation)
}

/// `#EXTM3U` and a target duration.
let mediaHeader = ["#EXTM3U", "#EXT-X-TARGETDURATION:6"]

@Suite("Parser: media playlist tags")
struct MediaTagParserTests {
    @Test("the smallest media playlist")
    func minimal() throws {
        let p = try parseMedia(mediaHeader + ["#EXTINF:6.006,", "seg0.ts"])
        #expect(p.targetDuration == 6)
        #expect(p.segments == [MediaSegment(uri: "seg0.ts", duration: HLSDuration(microseconds: 6_006_000))])
        #expect(p.version == nil && p.mediaSequence == nil && p.discontinuitySequence == nil && !p.endList)
        #expect(p.effectiveMediaSequence == 0 && p.effectiveDiscontinuitySequence == 0)
    }

    @Test("a playlist with no segments is a media playlist")
    func empty() throws {
        let p = try parseMedia(mediaHeader)
        #expect(p.segments.isEmpty && p.trailingTags.isEmpty)
    }

    @Test("header tags")
    func headerTags() throws {
        let p = try parseMedia([
            "#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS", "#EXT-X-START:TIME-OFFSET=-18.5,PRECISE=YES",
            #"#EXT-X-DEFINE:NAME="token",VALUE="abc""#, #"#EXT-X-DEFINE:QUERYPARAM="session""#, "#EXT-X-TARGETDURATION:10",
            "#EXT-X-MEDIA-SEQUENCE:18446744073709551615", "#EXT-X-DISCONTINUITY-SEQUENCE:3", "#EXT-X-PLAYLIST-TYPE:EVENT",
            "#EXT-X-I-FRAMES-ONLY", "#EXT-X-PART-INF:PART-TARGET=1.002",
            "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=36.0,CAN-SKIP-DATERANGES=YES,HOLD-BACK=18,PART-HOLD-BACK=3.006",
        ])
        #expect(p.version == 7)
        #expect(p.independentSegments)
        #expect(p.start?.timeOffset == HLSDuration(microseconds: -18_500_000))
        #expect(p.start?.isPrecise == true)
        #expect(p.definitions.map { $0.attributes.names } == [["NAME", "VALUE"], ["QUERYPARAM"]])
        #expect(p.targetDuration == 10)
        #expect(p.mediaSequence == UInt64.max)
        #expect(p.discontinuitySequence == 3)
        #expect(p.playlistType == .event)
        #expect(p.iFramesOnly)
        #expect(p.partInformation?.partTarget == HLSDuration(microseconds: 1_002_000))
        let control = try #require(p.serverControl)
        #expect(control.canBlockReload && control.canSkipDateRanges)
        #expect(control.canSkipUntil == .seconds(36))
        #expect(control.holdBack == .seconds(18))
        #expect(control.partHoldBack == HLSDuration(microseconds: 3_006_000))
        #expect(p.start?.attributes.names == ["TIME-OFFSET", "PRECISE"])
    }

    @Test("PLAYLIST-TYPE VOD and ENDLIST")
    func vod() throws {
        let p = try parseMedia(mediaHeader + ["#EXT-X-PLAYLIST-TYPE:VOD", "#EXTINF:6,", "a.ts", "#EXT-X-ENDLIST"])
        #expect(p.playlistType == .vod && p.endList)
    }

    @Test(
        "EXTINF durations and titles",
        arguments: [
            ("#EXTINF:10,", 10_000_000, ""), ("#EXTINF:10", 10_000_000, ""), ("#EXTINF:9.97667,", 9_976_670, ""),
            ("#EXTINF:6.0060061,", 6_006_006, ""), ("#EXTINF:6.0060065,", 6_006_007, ""), ("#EXTINF:0,", 0, ""),
            ("#EXTINF:10.0,Title, with, commas", 10_000_000, "Title, with, commas"),
            ("#EXTINF:4.000, spaced title", 4_000_000, " spaced title"), ("#EXTINF:4.000,日本語 🎬", 4_000_000, "日本語 🎬"),
            (#"#EXTINF:-1 tvg-id="x",Channel"#, nil, nil),
        ] as [(String, Int64?, String?)]
    )
    func extinf(_ line: String, _ microseconds: Int64?, _ title: String?) throws {
        guard let microseconds, let title else {
            expectParseError(mediaHeader + [line, "a.ts"], .invalidTagValue, line: 3)
            return
        }
        let segment = try #require(try parseMedia(mediaHeader + [line, "a.ts"]).segments.first)
        #expect(segment.duration.microseconds == microseconds)
        #expect(segment.title == title)
    }

    @Test("BYTERANGE with and without offset")
    func byteRange() throws {
        let p = try parseMedia(
            mediaHeader + ["#EXTINF:6,", "#EXT-X-BYTERANGE:1000@0", "all.ts", "#EXT-X-BYTERANGE:500", "#EXTINF:6,", "all.ts"])
        #expect(p.segments.map(\.byteRange) == [ByteRange(length: 1000, offset: 0), ByteRange(length: 500)])
    }

    @Test("DISCONTINUITY, GAP and BITRATE apply to the next segment only")
    func flags() throws {
        let p = try parseMedia(
            mediaHeader + ["#EXT-X-DISCONTINUITY", "#EXT-X-GAP", "#EXT-X-BITRATE:1500", "#EXTINF:6,", "a.ts", "#EXTINF:6,", "b.ts"])
        #expect(p.segments[0].discontinuity && p.segments[0].gap && p.segments[0].bitrate == 1500)
        #expect(p.segments[1].tags.isEmpty)
    }

    @Test("KEY: method, URI, IV, KEYFORMAT, several keys for one segment, METHOD=NONE")
    func keys() throws {
        let p = try parseMedia(
            mediaHeader + [
                #"#EXT-X-KEY:METHOD=AES-128,URI="https://keys.example/k1",IV=0x000102030405060708090A0B0C0D0E0F"#,
                #"#EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://k1",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1""#,
                "#EXTINF:6,", "a.ts", "#EXT-X-KEY:METHOD=NONE", "#EXTINF:6,", "b.ts",
            ])
        let keys = p.segments[0].keys
        #expect(keys.count == 2)
        #expect(keys[0].method == "AES-128")
        #expect(keys[0].uri == "https://keys.example/k1")
        #expect(keys[0].iv == (0...15).map { UInt8($0) })
        #expect(keys[0].keyFormat == "identity")
        #expect(keys[1].keyFormat == "com.apple.streamingkeydelivery")
        #expect(p.segments[1].keys == [Key.none])
    }

    @Test("MAP with BYTERANGE")
    func map() throws {
        let p = try parseMedia(mediaHeader + [#"#EXT-X-MAP:URI="init.mp4",BYTERANGE="720@0""#, "#EXTINF:6,", "a.m4s"])
        #expect(p.segments[0].map == MediaInitializationSection(uri: "init.mp4", byteRange: ByteRange(length: 720, offset: 0)))
        #expect(p.segments[0].map?.byteRange == ByteRange(length: 720, offset: 0))
    }

    @Test("PROGRAM-DATE-TIME with Z, an offset, and no zone")
    func programDateTime() throws {
        let p = try parseMedia(
            mediaHeader + [
                "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00.000Z", "#EXTINF:6,", "a.ts",
                "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T18:36:06.000+01:00", "#EXTINF:6,", "b.ts",
                "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:12.000", "#EXTINF:6,", "c.ts",
            ])
        let dates = p.segments.map(\.programDateTime)
        #expect(dates.map { $0?.millisecondsSinceEpoch } == [1_795_282_560_000, 1_795_282_566_000, 1_795_282_572_000])
        #expect(dates.map { $0?.zone } == [.utc, .offset(minutes: 60), .unspecified])
    }

    @Test("DATERANGE: typed attributes and X- client attributes in order")
    func dateRange() throws {
        let p = try parseMedia(
            mediaHeader + [
                #"#EXT-X-DATERANGE:ID="splice-6FFFFFF0",CLASS="com.example.ad",START-DATE="2026-11-21T17:36:00.000Z","#
                    + #"PLANNED-DURATION=59.993,SCTE35-OUT=0xFC302000,CUE="PRE,ONCE",X-COM-EXAMPLE-AD-ID="XYZ123","#
                    + #"X-NUM=-12.5,X-HEX=0xAB,END-ON-NEXT=YES,DURATION=60,END-DATE="2026-11-21T17:37:00Z""#,
                "#EXTINF:6,", "a.ts",
            ])
        let range = try #require(p.segments[0].dateRanges.first)
        #expect(range.id == "splice-6FFFFFF0")
        #expect(range.class == "com.example.ad")
        #expect(range.startDate?.millisecondsSinceEpoch == 1_795_282_560_000)
        #expect(range.endDate?.millisecondsSinceEpoch == 1_795_282_620_000)
        #expect(range.plannedDuration == HLSDuration(microseconds: 59_993_000))
        #expect(range.duration == .seconds(60))
        #expect(range.scte35Out == [0xFC, 0x30, 0x20, 0x00])
        #expect(range.scte35In == nil && range.scte35Cmd == nil)
        #expect(range.cue == ["PRE", "ONCE"])
        #expect(range.endOnNext)
        #expect(range.clientAttributes.map(\.name) == ["X-COM-EXAMPLE-AD-ID", "X-NUM", "X-HEX"])
        #expect(range.clientAttributes.map(\.value) == [.quoted("XYZ123"), .token("-12.5"), .token("0xAB")])
    }

    @Test("DATERANGE: an X- attribute must be a quoted-string, hex sequence or signed decimal (§4.4.5.1)")
    func dateRangeClientAttributeType() {
        expectParseError(mediaHeader + [#"#EXT-X-DATERANGE:ID="a",X-FLAG=YES"#], .invalidAttributeValue, line: 3)
    }

    @Test("ad markers: the three EXT-X-CUE-OUT syntaxes")
    func cueOut() throws {
        let p = try parseMedia(
            mediaHeader + [
                "#EXT-X-CUE-OUT", "#EXTINF:6,", "a.ts", "#EXT-X-CUE-OUT:30.000", "#EXTINF:6,", "b.ts", "#EXT-X-CUE-OUT:DURATION=30",
                "#EXTINF:6,", "c.ts", "#EXT-X-CUE-OUT:DURATION=120.5,BREAKID=\"b1\"", "#EXTINF:6,", "d.ts", "#EXT-X-CUE-OUT:30",
                "#EXTINF:6,", "e.ts",
            ])
        let cues = p.segments.map { segment -> CueOut? in
            guard case .cueOut(let cue)? = segment.adMarkers.first else { return nil }
            return cue
        }
        #expect(cues.map { $0?.syntax } == [.bare, .plain, .attributes, .attributes, .plain])
        #expect(cues.map { $0?.duration } == [nil, .seconds(30), .seconds(30), HLSDuration(microseconds: 120_500_000), .seconds(30)])
        #expect(cues.map { $0?.value } == [nil, "30.000", "DURATION=30", "DURATION=120.5,BREAKID=\"b1\"", "30"])
    }

    @Test("ad markers: a CUE-OUT value that is neither a duration nor an attribute list is an error")
    func cueOutInvalid() {
        expectParseError(mediaHeader + ["#EXT-X-CUE-OUT:thirty"], .invalidTagValue, line: 3)
    }

    @Test("ad markers: EXT-X-CUE-OUT-CONT in both forms")
    func cueOutContinuation() throws {
        let base64 = "/DAlAAAAAAAAAP/wFAUAAAABf+/+AAAAAH4AUmXAAAAAAAA="
        let p = try parseMedia(
            mediaHeader + [
                "#EXT-X-CUE-OUT-CONT:2.000/30", "#EXTINF:6,", "a.ts",
                "#EXT-X-CUE-OUT-CONT:ElapsedTime=8.008,Duration=30,SCTE35=\(base64)", "#EXTINF:6,", "b.ts",
            ])
        guard case .cueOutContinuation(let plain)? = p.segments[0].adMarkers.first,
            case .cueOutContinuation(let aws)? = p.segments[1].adMarkers.first
        else {
            Issue.record("expected CUE-OUT-CONT markers, got \(p.segments.map(\.adMarkers))")
            return
        }
        #expect(plain.elapsed == .seconds(2) && plain.duration == .seconds(30) && plain.scte35Base64 == nil)
        #expect(aws.elapsed == HLSDuration(microseconds: 8_008_000) && aws.duration == .seconds(30))
        #expect(aws.scte35Base64 == base64)
        #expect(aws.value == "ElapsedTime=8.008,Duration=30,SCTE35=\(base64)")
    }

    @Test("ad markers: a CUE-OUT-CONT without elapsed, duration or SCTE35 is an error", arguments: ["#EXT-X-CUE-OUT-CONT", "#EXT-X-CUE-OUT-CONT:x/y", "#EXT-X-CUE-OUT-CONT:FOO=1"])
    func cueOutContinuationInvalid(_ line: String) {
        expectParseError(mediaHeader + [line], .invalidTagValue, line: 3)
    }

    @Test("ad markers: CUE-IN, OATCLS, EXT-X-SCTE35, EXT-X-ASSET, in the order written")
    func otherMarkers() throws {
        let p = try parseMedia(
            mediaHeader + [
                "#EXT-X-ASSET:GENRE=CV,CAID=12345678,EPISODE=\"Episode%20Name%20Date\"", "#EXT-OATCLS-SCTE35:/DAlAAAAAAAAAP/wFA==",
                #"#EXT-X-SCTE35:CUE="/DAlAAAA",CUE-OUT=YES,Duration=30"#, "#EXT-X-CUE-IN", "#EXT-X-CUE-IN:OVERRIDE", "#EXTINF:6,", "a.ts",
            ])
        let scte35: AttributeList = [Attribute("CUE", .quoted("/DAlAAAA")), Attribute("CUE-OUT", .token("YES")), Attribute("Duration", .token("30"))]
        #expect(
            p.segments[0].adMarkers == [
                .asset(value: "GENRE=CV,CAID=12345678,EPISODE=\"Episode%20Name%20Date\""),
                .oatclsSCTE35(base64: "/DAlAAAAAAAAAP/wFA=="), .scte35(scte35), .cueIn(value: nil), .cueIn(value: "OVERRIDE"),
            ])
    }

    @Test(
        "ad markers: malformed values",
        arguments: [
            "#EXT-OATCLS-SCTE35", "#EXT-OATCLS-SCTE35:not base64!", "#EXT-X-SCTE35", "#EXT-X-SCTE35:CUE", "#EXT-X-ASSET",
        ]
    )
    func malformedMarkers(_ line: String) throws {
        let error = #expect(throws: PlaylistParseError.self) { try parseMedia(mediaHeader + [line, "#EXTINF:6,", "a.ts"]) }
        #expect(error?.line == 3)
        if let code = error?.code { #expect(code == .invalidTagValue || code == .malformedAttributeList, "\(code)") }
    }

    @Test("LL-HLS: parts belong to their parent segment; parts after the last URI are trailing tags")
    func parts() throws {
        let p = try parseMedia(
            mediaHeader + [
                "#EXT-X-PART-INF:PART-TARGET=1.0", #"#EXT-X-PART:DURATION=1.0,URI="a.0.mp4",INDEPENDENT=YES"#,
                #"#EXT-X-PART:DURATION=1.0,URI="a.mp4",BYTERANGE="1000@0""#, "#EXTINF:2.0,", "a.mp4",
                #"#EXT-X-PART:DURATION=0.5,URI="b.0.mp4",GAP=YES"#,
                #"#EXT-X-PRELOAD-HINT:TYPE=PART,URI="b.1.mp4",BYTERANGE-START=0,BYTERANGE-LENGTH=5000"#,
                #"#EXT-X-RENDITION-REPORT:URI="../720p/live.m3u8",LAST-MSN=273,LAST-PART=2"#,
                #"#EXT-X-RENDITION-REPORT:URI="../480p/live.m3u8""#,
            ])
        let parts = p.segments[0].parts
        #expect(parts.map(\.uri) == ["a.0.mp4", "a.mp4"])
        #expect(parts.map(\.duration) == [.seconds(1), .seconds(1)])
        #expect(parts[0].isIndependent && !parts[1].isIndependent)
        #expect(parts[1].byteRange == ByteRange(length: 1000, offset: 0))
        #expect(p.trailingTags.parts.map(\.uri) == ["b.0.mp4"])
        #expect(p.trailingTags.parts[0].isGap)
        #expect(p.preloadHints.map(\.type) == ["PART"])
        #expect(p.preloadHints[0].uri == "b.1.mp4")
        #expect(p.renditionReports.map(\.uri) == ["../720p/live.m3u8", "../480p/live.m3u8"])
        #expect(p.renditionReports[0].lastMediaSequence == 273 && p.renditionReports[0].lastPart == 2)
        #expect(p.renditionReports[1].lastMediaSequence == nil)
    }

    @Test("LL-HLS: a part without URI or DURATION is missing an attribute")
    func partRequiredAttributes() {
        expectParseError(mediaHeader + ["#EXT-X-PART:DURATION=1.0"], .missingAttribute, line: 3)
        expectParseError(mediaHeader + [#"#EXT-X-PART:URI="a.mp4""#], .missingAttribute, line: 3)
        expectParseError(mediaHeader + [#"#EXT-X-PRELOAD-HINT:URI="a.mp4""#], .missingAttribute, line: 3)
    }

    @Test("EXT-X-SKIP of a delta update, with tab-separated removed date ranges")
    func skip() throws {
        let p = try parseMedia(
            mediaHeader + ["#EXT-X-SKIP:SKIPPED-SEGMENTS=12,RECENTLY-REMOVED-DATERANGES=\"a\tb\"", "#EXTINF:6,", "a.ts"])
        #expect(p.skip?.skippedSegments == 12)
        #expect(p.skip?.recentlyRemovedDateRanges == ["a", "b"])
        expectParseError(mediaHeader + ["#EXTINF:6,", "a.ts", "#EXT-X-SKIP:SKIPPED-SEGMENTS=1"], .misplacedTag, line: 5)
        expectParseError(mediaHeader + ["#EXTINF:6,", "#EXT-X-SKIP:SKIPPED-SEGMENTS=1", "a.ts"], .misplacedTag, line: 4)
    }
}

@Suite("Parser: multivariant playlist tags")
struct MultivariantParserTests {
    @Test("MEDIA, STREAM-INF with its URI, I-FRAME-STREAM-INF, SESSION-DATA, SESSION-KEY, CONTENT-STEERING")
    func tags() throws {
        let p = try parseMultivariant([
            "#EXTM3U", "#EXT-X-VERSION:6", "#EXT-X-INDEPENDENT-SEGMENTS",
            #"#EXT-X-SESSION-DATA:DATA-ID="com.example.title",VALUE="Live""#, #"#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI="skd://k""#,
            #"#EXT-X-CONTENT-STEERING:SERVER-URI="/steer.json",PATHWAY-ID="CDN-A""#,
            #"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,URI="en/live.m3u8""#,
            #"#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC1",INSTREAM-ID="CC1""#,
            #"#EXT-X-STREAM-INF:BANDWIDTH=2800000,AVERAGE-BANDWIDTH=2500000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=29.97,AUDIO="aac",CLOSED-CAPTIONS=NONE"#,
            "720p/live.m3u8",
            #"#EXT-X-STREAM-INF:BANDWIDTH=800000,CLOSED-CAPTIONS="cc""#, "https://cdn.example.com/360p/live.m3u8?token=a%20b",
            #"#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=200000,URI="720p/iframes.m3u8""#,
        ])
        #expect(p.version == 6 && p.independentSegments)
        #expect(p.sessionData.map(\.dataID) == ["com.example.title"])
        #expect(p.sessionKeys.map(\.method) == ["SAMPLE-AES"])
        #expect(p.sessionKeys.first?.uri == "skd://k")
        #expect(p.contentSteering?.serverURI == "/steer.json")
        #expect(p.renditions.map(\.type) == ["AUDIO", "CLOSED-CAPTIONS"])
        #expect(p.renditions[0].groupID == "aac" && p.renditions[0].name == "English" && p.renditions[0].language == "en")
        #expect(p.renditions[0].isDefault && p.renditions[0].autoselect && p.renditions[0].uri == "en/live.m3u8")
        #expect(p.renditions[1].uri == nil)
        #expect(p.variants.map(\.uri) == ["720p/live.m3u8", "https://cdn.example.com/360p/live.m3u8?token=a%20b"])
        let v = p.variants[0]
        #expect(v.bandwidth == 2_800_000 && v.averageBandwidth == 2_500_000)
        #expect(v.codecs == ["avc1.64001f", "mp4a.40.2"])
        #expect(v.resolution == Resolution(width: 1280, height: 720))
        #expect(v.frameRate == HLSDuration(microseconds: 29_970_000))
        #expect(v.audioGroup == "aac" && v.subtitlesGroup == nil)
        #expect(v.attributes["CLOSED-CAPTIONS"] == .token("NONE"))
        #expect(p.variants[1].attributes["CLOSED-CAPTIONS"] == .quoted("cc"))
        #expect(p.iFrameVariants.map(\.uri) == ["720p/iframes.m3u8"])
        #expect(p.iFrameVariants.first?.bandwidth == 200_000)
    }

    @Test("unknown tags of a multivariant playlist are kept in order, wherever they were")
    func unknownTags() throws {
        let p = try parseMultivariant([
            "#EXTM3U", "#EXT-X-VENDOR-A:1", "#EXT-X-STREAM-INF:BANDWIDTH=1", "## a comment", "low.m3u8", "#EXT-X-VENDOR-B",
        ])
        #expect(p.unknownTags == [UnknownTag("EXT-X-VENDOR-A:1"), UnknownTag("# a comment"), UnknownTag("EXT-X-VENDOR-B")])
        #expect(p.variants.map(\.uri) == ["low.m3u8"])
    }

    @Test("CLOSED-CAPTIONS must be quoted or NONE; BANDWIDTH is required and an integer")
    func variantTypes() {
        let base = ["#EXTM3U"]
        expectParseError(base + ["#EXT-X-STREAM-INF:BANDWIDTH=1,CLOSED-CAPTIONS=cc", "a.m3u8"], .invalidAttributeValue, line: 2)
        expectParseError(base + ["#EXT-X-STREAM-INF:BANDWIDTH=abc", "a.m3u8"], .invalidAttributeValue, line: 2)
        expectParseError(base + ["#EXT-X-STREAM-INF:RESOLUTION=1x1", "a.m3u8"], .missingAttribute, line: 2)
        expectParseError(base + [#"#EXT-X-MEDIA:TYPE=AUDIO,NAME="a""#], .missingAttribute, line: 2)
        expectParseError(base + ["#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1"], .missingAttribute, line: 2)
    }

    @Test("a STREAM-INF must be followed by a URI, and a URI must follow a STREAM-INF (E1)")
    func variantURI() {
        expectParseError(["#EXTM3U", "#EXT-X-STREAM-INF:BANDWIDTH=1"], .missingVariantURI, line: 2)
        expectParseError(["#EXTM3U", "#EXT-X-STREAM-INF:BANDWIDTH=1", "#EXT-X-STREAM-INF:BANDWIDTH=2", "b.m3u8"], .missingVariantURI, line: 2)
        expectParseError(["#EXTM3U", "#EXT-X-STREAM-INF:BANDWIDTH=1", "a.m3u8", "b.m3u8"], .missingVariantURI, line: 4)
        expectParseError(["#EXTM3U", #"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="a""#, "a.m3u8"], .missingVariantURI, line: 3)
    }

    @Test("media and multivariant tags in one document fail (A5)")
    func mixedKinds() {
        expectParseError(["#EXTM3U", "#EXT-X-STREAM-INF:BANDWIDTH=1", "a.m3u8", "#EXTINF:6,", "a.ts"], .mixedPlaylistKinds, line: 4)
        expectParseError(mediaHeader + ["#EXT-X-STREAM-INF:BANDWIDTH=1", "a.m3u8"], .mixedPlaylistKinds, line: 3)
        expectParseError(mediaHeader + [#"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="a""#], .mixedPlaylistKinds, line: 3)
        expectParseError(["#EXTM3U", #"#EXT-X-SESSION-DATA:DATA-ID="a",VALUE="b""#, "#EXT-X-TARGETDURATION:6"], .mixedPlaylistKinds, line: 3)
        expectParseError(["#EXTM3U", #"#EXT-X-CONTENT-STEERING:SERVER-URI="s""#, "#EXT-X-ENDLIST"], .mixedPlaylistKinds, line: 3)
        expectParseError(["#EXTM3U", "#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1,URI=\"i\"", "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00Z"], .mixedPlaylistKinds, line: 3)
    }

    @Test("parseMedia and parseMultivariant reject the other kind")
    func kindSpecificEntryPoints() {
        #expect(throws: PlaylistParseError.self) { try parseMedia(["#EXTM3U", "#EXT-X-STREAM-INF:BANDWIDTH=1", "a.m3u8"]) }
        #expect(throws: PlaylistParseError.self) { try parseMultivariant(mediaHeader) }
    }
}

@Suite("Parser: lines, unknown tags and errors")
struct LineParserTests {
    @Test("unknown tags and comments are kept in order: header ones in the header, others on their segment")
    func unknownTagPlacement() throws {
        let p = try parseMedia([
            "#EXTM3U", "#EXT-X-VENDOR-HEADER:1", "# a comment", "#EXT-X-TARGETDURATION:6", "#EXT-X-ALLOW-CACHE:NO",
            "#EXT-X-DISCONTINUITY", "#EXT-X-VENDOR-SEG:a", "#EXTINF:6,", "#ANOTHER comment", "a.ts", "#EXT-X-VENDOR-SEG:b",
            "#EXTINF:6,", "b.ts", "#EXT-X-VENDOR-TRAILING", "#",
        ])
        #expect(p.headerUnknownTags == [UnknownTag("EXT-X-VENDOR-HEADER:1"), UnknownTag(" a comment"), UnknownTag("EXT-X-ALLOW-CACHE:NO")])
        #expect(p.segments[0].unknownTags == [UnknownTag("EXT-X-VENDOR-SEG:a"), UnknownTag("ANOTHER comment")])
        #expect(p.segments[1].unknownTags == [UnknownTag("EXT-X-VENDOR-SEG:b")])
        #expect(p.trailingTags.unknownTags == [UnknownTag("EXT-X-VENDOR-TRAILING"), UnknownTag("")])
        #expect(UnknownTag("EXT-X-ALLOW-CACHE:NO").name == "EXT-X-ALLOW-CACHE")
        #expect(UnknownTag("EXT-X-VENDOR-TRAILING").name == "EXT-X-VENDOR-TRAILING")
    }

    @Test("an unknown tag before the first segment tag is a header tag")
    func unknownBeforeFirstSegment() throws {
        let p = try parseMedia(mediaHeader + ["#EXT-X-VENDOR", "#EXTINF:6,", "a.ts"])
        #expect(p.headerUnknownTags == [UnknownTag("EXT-X-VENDOR")])
        #expect(p.segments[0].tags.isEmpty)
    }

    @Test("unknown attributes of modelled tags are kept, in order")
    func unknownAttributes() throws {
        let p = try parseMedia(mediaHeader + [#"#EXT-X-KEY:VENDOR-A=1,METHOD=AES-128,URI="k",VENDOR-B="x""#, "#EXTINF:6,", "a.ts"])
        #expect(p.segments[0].keys[0].attributes.names == ["VENDOR-A", "METHOD", "URI", "VENDOR-B"])
        #expect(p.segments[0].keys[0].attributes["VENDOR-B"] == .quoted("x"))
    }

    @Test("CRLF line endings give the same playlist as LF")
    func crlf() throws {
        let lines = mediaHeader + ["#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00Z", "#EXTINF:6,title", "a.ts", "#EXT-X-ENDLIST"]
        let lf = try PlaylistParser().parse(lines.joined(separator: "\n") + "\n")
        let crlf = try PlaylistParser().parse(lines.joined(separator: "\r\n") + "\r\n")
        let mixed = try PlaylistParser().parse(lines.joined(separator: "\r\n"))
        #expect(crlf == lf)
        #expect(mixed == lf)
    }

    @Test("blank lines are ignored; a missing final newline is fine")
    func blankLines() throws {
        let text = "#EXTM3U\n\n#EXT-X-TARGETDURATION:6\n\r\n\n#EXTINF:6,\n\na.ts"
        let p = try PlaylistParser().parseMedia(Array(text.utf8))
        #expect(p.segments.map(\.uri) == ["a.ts"])
        #expect(p.headerUnknownTags.isEmpty && p.segments[0].tags.isEmpty)
    }

    @Test("the first line must be exactly #EXTM3U (A1)")
    func firstLine() {
        expectParseError([UInt8](), .missingHeader, line: 1)
        expectParseError(Array("\n#EXTM3U\n".utf8), .missingHeader, line: 1)
        expectParseError(Array("#EXTM3U8\n".utf8), .missingHeader, line: 1)
        expectParseError(Array("#EXTM3U \n".utf8), .missingHeader, line: 1)
        expectParseError(Array(" #EXTM3U\n".utf8), .missingHeader, line: 1)
        expectParseError(Array("#extm3u\n".utf8), .missingHeader, line: 1)
        expectParseError(Array("#EXT-X-TARGETDURATION:6\n".utf8), .missingHeader, line: 1)
        expectParseError(mediaHeader + ["#EXTM3U"], .duplicateTag, line: 3)
    }

    @Test("encoding: BOM, control characters, invalid UTF-8, C1 controls, bare CR (A2)")
    func encoding() {
        expectParseError([0xEF, 0xBB, 0xBF] + Array("#EXTM3U\n".utf8), .invalidEncoding, line: 1)
        let prefix = Array("#EXTM3U\n#EXT-X-TARGETDURATION:6\n".utf8)
        expectParseError(prefix + Array("#EXTINF:6,a\u{01}b\na.ts\n".utf8), .invalidEncoding, line: 3)
        expectParseError(prefix + Array("#EXTINF:6,a".utf8) + [0x00] + Array("\na.ts\n".utf8), .invalidEncoding, line: 3)
        expectParseError(prefix + Array("#EXTINF:6,a\u{7F}\na.ts\n".utf8), .invalidEncoding, line: 3)
        expectParseError(prefix + Array("#EXTINF:6,a".utf8) + [0xFF] + Array("\na.ts\n".utf8), .invalidEncoding, line: 3)
        expectParseError(prefix + Array("#EXTINF:6,a".utf8) + [0xC3] + Array("\na.ts\n".utf8), .invalidEncoding, line: 3)
        expectParseError(prefix + Array("#EXTINF:6,a".utf8) + [0xC2, 0x85] + Array("\na.ts\n".utf8), .invalidEncoding, line: 3)
        expectParseError(prefix + Array("#EXTINF:6,a\u{FEFF}\na.ts\n".utf8), .invalidEncoding, line: 3)
        expectParseError(prefix + Array("#EXTINF:6,a\rb\na.ts\n".utf8), .invalidEncoding, line: 3)
        expectParseError(prefix + Array("#EXTINF:6,\na.ts\r\r\n".utf8), .invalidEncoding, line: 4)
        expectParseError(prefix + Array("#EXTINF:6,\r#EXT-X-ENDLIST\n".utf8), .invalidEncoding, line: 3)
    }

    @Test("valid UTF-8 outside ASCII is accepted")
    func utf8() throws {
        let p = try parseMedia(mediaHeader + ["#EXTINF:6,Ünïcödé – 日本 🎬", "séguement-ü.ts"])
        #expect(p.segments[0].title == "Ünïcödé – 日本 🎬")
        #expect(p.segments[0].uri == "séguement-ü.ts")
    }

    @Test("leading or trailing whitespace on a line (A3)", arguments: [" a.ts", "a.ts ", "\ta.ts", "a.ts\t", "#EXTINF:6, "])
    func whitespace(_ line: String) {
        expectParseError(mediaHeader + ["#EXTINF:6,", line, "a.ts"], .unexpectedWhitespace, line: 4)
    }

    @Test(
        "attribute-list errors",
        arguments: [
            ("#EXT-X-KEY", PlaylistParseError.Code.malformedAttributeList), ("#EXT-X-KEY:", .malformedAttributeList),
            ("#EXT-X-KEY:METHOD=AES-128,", .malformedAttributeList), ("#EXT-X-KEY:METHOD=AES-128, URI=\"k\"", .malformedAttributeList),
            ("#EXT-X-KEY:method=NONE", .malformedAttributeList), ("#EXT-X-KEY:METHOD=NONE,METHOD=NONE", .duplicateAttribute),
            ("#EXT-X-KEY:METHOD=\"NONE\"", .invalidAttributeValue), ("#EXT-X-KEY:METHOD=AES-128,IV=12", .invalidAttributeValue),
            ("#EXT-X-KEY:URI=\"k\"", .missingAttribute), ("#EXT-X-MAP:BYTERANGE=\"1@0\"", .missingAttribute),
            ("#EXT-X-MAP:URI=\"i\",BYTERANGE=1@0", .invalidAttributeValue), ("#EXT-X-DATERANGE:CLASS=\"c\"", .missingAttribute),
            ("#EXT-X-DATERANGE:ID=\"a\",START-DATE=\"soon\"", .invalidAttributeValue),
            ("#EXT-X-DATERANGE:ID=\"a\",DURATION=-1", .invalidAttributeValue),
            ("#EXT-X-DATERANGE:ID=\"a\",SCTE35-OUT=FC30", .invalidAttributeValue),
            ("#EXT-X-PART-INF:PART-TARGET=abc", .invalidAttributeValue), ("#EXT-X-START:PRECISE=YES", .missingAttribute),
        ] as [(String, PlaylistParseError.Code)]
    )
    func attributeListErrors(_ line: String, _ code: PlaylistParseError.Code) {
        expectParseError(mediaHeader + [line, "#EXTINF:6,", "a.ts"], code, line: 3)
    }

    @Test(
        "tag value errors",
        arguments: [
            "#EXTINF:abc,", "#EXTINF:-1,", "#EXTINF:,", "#EXTINF", "#EXT-X-PROGRAM-DATE-TIME:2026-11-21",
            "#EXT-X-PROGRAM-DATE-TIME", "#EXT-X-BYTERANGE:10@", "#EXT-X-BYTERANGE:-10", "#EXT-X-BYTERANGE",
            "#EXT-X-DISCONTINUITY:1", "#EXT-X-GAP:YES", "#EXT-X-BITRATE:1.5", "#EXT-X-BITRATE",
        ]
    )
    func segmentTagValueErrors(_ line: String) {
        expectParseError(mediaHeader + [line, "#EXTINF:6,", "a.ts"], .invalidTagValue, line: 3)
    }

    @Test(
        "header tag value errors",
        arguments: [
            "#EXT-X-TARGETDURATION:0", "#EXT-X-TARGETDURATION:-1", "#EXT-X-TARGETDURATION:6.5", "#EXT-X-TARGETDURATION:86401",
            "#EXT-X-TARGETDURATION", "#EXT-X-VERSION:0", "#EXT-X-VERSION:x", "#EXT-X-MEDIA-SEQUENCE:-1",
            "#EXT-X-MEDIA-SEQUENCE:18446744073709551616", "#EXT-X-DISCONTINUITY-SEQUENCE:a", "#EXT-X-PLAYLIST-TYPE:LIVE",
            "#EXT-X-PLAYLIST-TYPE:vod", "#EXT-X-I-FRAMES-ONLY:YES", "#EXT-X-INDEPENDENT-SEGMENTS:YES", "#EXT-X-ENDLIST:NOW",
        ]
    )
    func headerTagValueErrors(_ line: String) {
        let rest = line.hasPrefix("#EXT-X-TARGETDURATION") ? [] : ["#EXT-X-TARGETDURATION:6"]
        expectParseError(["#EXTM3U", line] + rest, .invalidTagValue, line: 2)
    }

    @Test(
        "tags that may appear once per playlist (A10, A11)",
        arguments: [
            "#EXT-X-TARGETDURATION:6", "#EXT-X-VERSION:3", "#EXT-X-MEDIA-SEQUENCE:1", "#EXT-X-DISCONTINUITY-SEQUENCE:1",
            "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-I-FRAMES-ONLY", "#EXT-X-INDEPENDENT-SEGMENTS", "#EXT-X-START:TIME-OFFSET=0",
            "#EXT-X-PART-INF:PART-TARGET=1", "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES",
        ]
    )
    func oncePerPlaylist(_ line: String) {
        let rest = line.hasPrefix("#EXT-X-TARGETDURATION") ? [] : ["#EXT-X-TARGETDURATION:6"]
        expectParseError(["#EXTM3U", line, line] + rest, .duplicateTag, line: 3)
    }

    @Test(
        "tags that may appear once per segment",
        arguments: [
            "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00Z", "#EXT-X-BYTERANGE:10@0", "#EXT-X-DISCONTINUITY", "#EXT-X-GAP",
            "#EXT-X-BITRATE:100", #"#EXT-X-MAP:URI="i.mp4""#,
        ]
    )
    func oncePerSegment(_ line: String) throws {
        expectParseError(mediaHeader + [line, line, "#EXTINF:6,", "a.ts"], .duplicateTag, line: 4)
        // …but once for each segment is fine.
        let p = try parseMedia(mediaHeader + [line, "#EXTINF:6,", "a.ts", line, "#EXTINF:6,", "b.ts"])
        #expect(p.segments.count == 2)
    }

    @Test("ENDLIST and CONTENT-STEERING may appear only once")
    func oncePerPlaylistElsewhere() {
        expectParseError(mediaHeader + ["#EXTINF:6,", "a.ts", "#EXT-X-ENDLIST", "#EXT-X-ENDLIST"], .duplicateTag, line: 6)
        expectParseError(["#EXTM3U", #"#EXT-X-CONTENT-STEERING:SERVER-URI="a""#, #"#EXT-X-CONTENT-STEERING:SERVER-URI="a""#], .duplicateTag, line: 3)
        expectParseError(mediaHeader + ["#EXT-X-SKIP:SKIPPED-SEGMENTS=1", "#EXT-X-SKIP:SKIPPED-SEGMENTS=1"], .duplicateTag, line: 4)
    }

    @Test("segment structure: EXTINF needs a URI, a URI needs an EXTINF (§4.4.4.1)")
    func segmentStructure() {
        expectParseError(mediaHeader + ["#EXTINF:6,", "#EXTINF:6,", "a.ts"], .missingURI, line: 3)
        expectParseError(mediaHeader + ["#EXTINF:6,", "a.ts", "#EXTINF:6,"], .missingURI, line: 5)
        expectParseError(mediaHeader + ["#EXTINF:6,", "a.ts", "#EXT-X-BYTERANGE:100@0"], .missingURI, line: 5)
        expectParseError(mediaHeader + ["a.ts"], .missingEXTINF, line: 3)
        expectParseError(mediaHeader + ["#EXTINF:6,", "a.ts", "#EXT-X-DISCONTINUITY", "b.ts"], .missingEXTINF, line: 6)
    }

    @Test("a media playlist needs EXT-X-TARGETDURATION (B1)")
    func targetDurationRequired() {
        expectParseError(["#EXTM3U", "#EXTINF:6,", "a.ts"], .missingTargetDuration, line: 1)
        expectParseError(["#EXTM3U"], .missingTargetDuration, line: 1)
    }

    @Test(
        "media playlist tags after the first segment are misplaced (B4, B5)",
        arguments: [
            "#EXT-X-TARGETDURATION:6", "#EXT-X-MEDIA-SEQUENCE:1", "#EXT-X-DISCONTINUITY-SEQUENCE:1", "#EXT-X-PLAYLIST-TYPE:EVENT",
            "#EXT-X-I-FRAMES-ONLY", "#EXT-X-PART-INF:PART-TARGET=1", "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES",
        ]
    )
    func misplaced(_ line: String) {
        let first = line.hasPrefix("#EXT-X-TARGETDURATION") ? ["#EXTM3U", "#EXT-X-VERSION:3"] : mediaHeader
        expectParseError(first + ["#EXTINF:6,", "a.ts", line], .misplacedTag, line: 5)
        expectParseError(first + ["#EXT-X-DISCONTINUITY", line, "#EXTINF:6,", "a.ts"], .misplacedTag, line: 4)
    }

    @Test("error descriptions name the line and the code")
    func errorDescription() {
        let error = PlaylistParseError(.invalidTagValue, line: 12, "bad")
        #expect(error.description == "line 12: invalid-tag-value: bad")
        #expect(PlaylistParseError.Code.missingEXTINF.description == "missing-extinf")
    }
}
