import HeadwaterHLS
import HeadwaterTesting
import Testing

/// `serialize(parse(text))` as text.
func format(_ text: String) throws -> String {
    PlaylistSerializer.string(try PlaylistParser().parse(text))
}

func lines(_ lines: [String]) -> String { lines.joined(separator: "\n") + "\n" }

@Suite("Serializer: the canonical form")
struct SerializerTests {
    @Test("media header tags are written in the canonical order, whatever the input order")
    func mediaHeaderOrder() throws {
        let input = lines([
            "#EXTM3U", "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES", "#EXT-X-VENDOR:1", "#EXT-X-PART-INF:PART-TARGET=1.0",
            "#EXT-X-I-FRAMES-ONLY", "#EXT-X-PLAYLIST-TYPE:EVENT", "#EXT-X-DISCONTINUITY-SEQUENCE:2", "#EXT-X-MEDIA-SEQUENCE:7",
            "#EXT-X-TARGETDURATION:6", #"#EXT-X-DEFINE:NAME="a",VALUE="b""#, "#EXT-X-START:TIME-OFFSET=-12", "#EXT-X-INDEPENDENT-SEGMENTS",
            "#EXT-X-VERSION:9", "#EXT-X-SKIP:SKIPPED-SEGMENTS=3", "#EXTINF:6,", "a.ts",
        ])
        #expect(
            try format(input)
                == lines([
                    "#EXTM3U", "#EXT-X-VERSION:9", "#EXT-X-INDEPENDENT-SEGMENTS", "#EXT-X-START:TIME-OFFSET=-12",
                    #"#EXT-X-DEFINE:NAME="a",VALUE="b""#, "#EXT-X-TARGETDURATION:6", "#EXT-X-MEDIA-SEQUENCE:7",
                    "#EXT-X-DISCONTINUITY-SEQUENCE:2", "#EXT-X-PLAYLIST-TYPE:EVENT", "#EXT-X-I-FRAMES-ONLY",
                    "#EXT-X-PART-INF:PART-TARGET=1.0", "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES", "#EXT-X-VENDOR:1",
                    "#EXT-X-SKIP:SKIPPED-SEGMENTS=3", "#EXTINF:6.000,", "a.ts",
                ]))
    }

    @Test("segment tags are written in the order of SegmentTags, then EXTINF, BYTERANGE, unknown tags and the URI")
    func segmentTagOrder() throws {
        let input = lines([
            "#EXTM3U", "#EXT-X-TARGETDURATION:6", #"#EXT-X-PART:DURATION=1,URI="p.mp4""#, "#EXT-X-BITRATE:800", "#EXT-X-GAP",
            "#EXT-X-BYTERANGE:100@0", "#EXT-X-CUE-IN", "#EXT-X-CUE-OUT:30", #"#EXT-X-DATERANGE:ID="d",START-DATE="2026-11-21T17:36:00Z""#,
            "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00Z", #"#EXT-X-MAP:URI="i.mp4""#, "#EXT-X-KEY:METHOD=NONE",
            "#EXT-X-DISCONTINUITY", "#EXTINF:6,t", "#EXT-X-VENDOR", "a.mp4",
        ])
        #expect(
            try format(input)
                == lines([
                    "#EXTM3U", "#EXT-X-TARGETDURATION:6", "#EXT-X-DISCONTINUITY", "#EXT-X-KEY:METHOD=NONE", #"#EXT-X-MAP:URI="i.mp4""#,
                    "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00.000Z", #"#EXT-X-DATERANGE:ID="d",START-DATE="2026-11-21T17:36:00Z""#,
                    "#EXT-X-CUE-IN", "#EXT-X-CUE-OUT:30", "#EXT-X-GAP", "#EXT-X-BITRATE:800",
                    #"#EXT-X-PART:DURATION=1,URI="p.mp4""#, "#EXTINF:6.000,t", "#EXT-X-BYTERANGE:100@0", "#EXT-X-VENDOR", "a.mp4",
                ]))
    }

    @Test("the footer: trailing tags, then PRELOAD-HINT, RENDITION-REPORT, ENDLIST")
    func footerOrder() throws {
        let input = lines([
            "#EXTM3U", "#EXT-X-TARGETDURATION:2", "#EXT-X-ENDLIST", #"#EXT-X-RENDITION-REPORT:URI="b.m3u8",LAST-MSN=1"#,
            #"#EXT-X-PRELOAD-HINT:TYPE=PART,URI="a.1.mp4""#, "#EXTINF:2,", "a.mp4", #"#EXT-X-PART:DURATION=1,URI="a.0.mp4""#,
            "#EXT-X-VENDOR-LAST",
        ])
        #expect(
            try format(input)
                == lines([
                    "#EXTM3U", "#EXT-X-TARGETDURATION:2", "#EXTINF:2.000,", "a.mp4",
                    #"#EXT-X-PART:DURATION=1,URI="a.0.mp4""#, "#EXT-X-VENDOR-LAST", #"#EXT-X-PRELOAD-HINT:TYPE=PART,URI="a.1.mp4""#,
                    #"#EXT-X-RENDITION-REPORT:URI="b.m3u8",LAST-MSN=1"#, "#EXT-X-ENDLIST",
                ]))
    }

    @Test(
        "EXTINF is written with 3 to 6 decimals",
        arguments: [
            ("10", "10.000"), ("10.01", "10.010"), ("6.006006", "6.006006"), ("4.80", "4.800"), ("2.0000", "2.000"),
            ("9.9766666666", "9.976667"), ("0.5", "0.500"), ("3.1415", "3.1415"),
        ]
    )
    func extinfDecimals(_ input: String, _ output: String) throws {
        #expect(try format(lines(["#EXTM3U", "#EXT-X-TARGETDURATION:10", "#EXTINF:\(input),", "a.ts"])).contains("\n#EXTINF:\(output),\n"))
    }

    @Test("below version 3 EXTINF is written as an integer (B3); at 3 and without a version, as a decimal")
    func integerExtinf() {
        var p = MediaPlaylist(targetDuration: 10, segments: [MediaSegment(uri: "a.ts", duration: .seconds(10))])
        p.version = 2
        #expect(PlaylistSerializer.string(p).contains("\n#EXTINF:10,\n"))
        p.version = 3
        #expect(PlaylistSerializer.string(p).contains("\n#EXTINF:10.000,\n"))
        p.version = nil
        #expect(PlaylistSerializer.string(p).contains("\n#EXTINF:10.000,\n"))
    }

    /// The serializer promises that serialize → parse gives back an equal value. Below version 3 it
    /// rounds EXTINF to an integer, so a fractional duration (which such a playlist should not have,
    /// B3, but the parser accepts) comes back changed.
    @Test("a fractional EXTINF in a version 2 playlist survives serialize → parse")
    func fractionalExtinfBelowVersion3() throws {
        let text = lines(["#EXTM3U", "#EXT-X-VERSION:2", "#EXT-X-TARGETDURATION:10", "#EXTINF:9.5,", "a.ts"])
        let parsed = try PlaylistParser().parseMedia(Array(text.utf8))
        let reparsed = try PlaylistParser().parseMedia(PlaylistSerializer.serialize(parsed))
        #expect(reparsed.segments.map(\.duration) == [HLSDuration(microseconds: 9_500_000)])
    }

    @Test("attribute lists keep their order, unknown attributes, and quoting")
    func attributeOrder() throws {
        let tag = #"#EXT-X-KEY:URI="k",VENDOR=v,METHOD=AES-128,IV=0xabcdef,KEYFORMAT="identity""#
        #expect(try format(lines(["#EXTM3U", "#EXT-X-TARGETDURATION:6", tag, "#EXTINF:6,", "a.ts"])).contains("\n\(tag)\n"))
    }

    @Test("dates are written with milliseconds (microseconds when written with them) in the zone they were written in")
    func dates() throws {
        let text = try format(
            lines([
                "#EXTM3U", "#EXT-X-TARGETDURATION:6", "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00Z", "#EXTINF:6,", "a.ts",
                "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T18:36:06.1+0100", "#EXTINF:6,", "b.ts",
                "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:12.123456", "#EXTINF:6,", "c.ts",
            ]))
        #expect(text.contains("#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:00.000Z\n"))
        #expect(text.contains("#EXT-X-PROGRAM-DATE-TIME:2026-11-21T18:36:06.100+01:00\n"))
        // fmt never changes meaning: sub-millisecond precision in, the same precision out (issue 13).
        #expect(text.contains("#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:36:12.123456\n"))
    }

    @Test("CRLF input is written with LF, blank lines are dropped, a final newline is added")
    func lineEndings() throws {
        let text = try format("#EXTM3U\r\n\r\n#EXT-X-TARGETDURATION:6\r\n#EXTINF:6,\r\na.ts")
        #expect(text == "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.000,\na.ts\n")
    }

    @Test("ad markers are written in the syntax they were read or built in")
    func adMarkers() {
        var tags = SegmentTags()
        tags.adMarkers = [
            .cueOut(CueOut(value: nil)), .cueOut(CueOut(value: "")), .cueOut(CueOut(duration: .seconds(30))),
            .cueOut(CueOut(value: "DURATION=30")),
            .cueOutContinuation(CueOutContinuation(elapsed: .seconds(2), duration: .seconds(30))),
            .cueOutContinuation(CueOutContinuation(value: "ElapsedTime=2.0,Duration=30,SCTE35=/DA=")), .cueIn(value: nil),
            .cueIn(value: ""), .oatclsSCTE35(base64: "/DAlAA=="), .scte35([Attribute("CUE", .quoted("/DA=")), Attribute("CUE-IN", .token("YES"))]),
            .asset(value: "CAID=1"),
        ]
        let p = MediaPlaylist(targetDuration: 6, segments: [MediaSegment(uri: "a.ts", duration: .seconds(6), tags: tags)])
        #expect(
            PlaylistSerializer.string(p)
                == lines([
                    "#EXTM3U", "#EXT-X-TARGETDURATION:6", "#EXT-X-CUE-OUT", "#EXT-X-CUE-OUT:", "#EXT-X-CUE-OUT:30.000",
                    "#EXT-X-CUE-OUT:DURATION=30", "#EXT-X-CUE-OUT-CONT:2.000/30.000",
                    "#EXT-X-CUE-OUT-CONT:ElapsedTime=2.0,Duration=30,SCTE35=/DA=", "#EXT-X-CUE-IN", "#EXT-X-CUE-IN:",
                    "#EXT-OATCLS-SCTE35:/DAlAA==", #"#EXT-X-SCTE35:CUE="/DA=",CUE-IN=YES"#, "#EXT-X-ASSET:CAID=1", "#EXTINF:6.000,",
                    "a.ts",
                ]))
    }

    @Test("typed builders write attributes in the spec's order")
    func builders() {
        var tags = SegmentTags()
        tags.keys = [Key(method: "AES-128", uri: "k.key", iv: [0, 0xFF], keyFormat: "identity"), .none]
        tags.map = MediaInitializationSection(uri: "init.mp4", byteRange: ByteRange(length: 720, offset: 0))
        tags.dateRanges = [
            DateRange(
                id: "ad-1", class: "com.example", startDate: ProgramDateTime(millisecondsSinceEpoch: 1_795_282_560_000),
                endDate: ProgramDateTime(millisecondsSinceEpoch: 1_795_282_590_000), duration: .seconds(30),
                plannedDuration: .seconds(30), scte35Out: [0xFC], scte35In: [0xFD], scte35Cmd: [0xFE],
                clientAttributes: [Attribute("X-AD", .quoted("a"))])
        ]
        tags.parts = [PartialSegment(uri: "a.0.mp4", duration: .milliseconds(1_001), independent: true, byteRange: ByteRange(length: 10))]
        var out: [UInt8] = []
        PlaylistSerializer.writeSegment(MediaSegment(uri: "a.mp4", duration: .milliseconds(2_002), title: "x", tags: tags), into: &out)
        #expect(
            String(decoding: out, as: UTF8.self)
                == lines([
                    #"#EXT-X-KEY:METHOD=AES-128,URI="k.key",IV=0x00FF,KEYFORMAT="identity""#, "#EXT-X-KEY:METHOD=NONE",
                    #"#EXT-X-MAP:URI="init.mp4",BYTERANGE="720@0""#,
                    #"#EXT-X-DATERANGE:ID="ad-1",CLASS="com.example",START-DATE="2026-11-21T17:36:00.000Z",END-DATE="2026-11-21T17:36:30.000Z","#
                        + #"DURATION=30.000,PLANNED-DURATION=30.000,SCTE35-CMD=0xFE,SCTE35-OUT=0xFC,SCTE35-IN=0xFD,X-AD="a""#,
                    #"#EXT-X-PART:DURATION=1.001,URI="a.0.mp4",INDEPENDENT=YES,BYTERANGE="10""#, "#EXTINF:2.002,x", "a.mp4",
                ]))
    }

    @Test("writeSegment writes exactly the segment's part of the playlist")
    func writeSegmentMatchesPlaylist() {
        var generator = PlaylistGenerator(seed: 0x5E6)
        for _ in 0..<50 {
            let p = generator.mediaPlaylist(maxSegments: 5)
            var segments: [UInt8] = []
            for segment in p.segments {
                PlaylistSerializer.writeSegment(segment, integerDurations: (p.version ?? 3) < 3, into: &segments)
            }
            let whole = PlaylistSerializer.serialize(p)
            #expect(whole.count >= segments.count)
            #expect(String(decoding: whole, as: UTF8.self).contains(String(decoding: segments, as: UTF8.self)))
        }
    }

    @Test("a multivariant playlist is written header, session data and keys, steering, renditions, variants, I-frames, unknown tags")
    func multivariantOrder() throws {
        let input = lines([
            "#EXTM3U", "#EXT-X-VENDOR-A", #"#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1,URI="i.m3u8""#, "#EXT-X-STREAM-INF:BANDWIDTH=2",
            "#EXT-X-VENDOR-B", "v.m3u8", #"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="en""#, #"#EXT-X-CONTENT-STEERING:SERVER-URI="s""#,
            #"#EXT-X-SESSION-KEY:METHOD=AES-128,URI="k""#, #"#EXT-X-SESSION-DATA:DATA-ID="d",VALUE="v""#, "#EXT-X-INDEPENDENT-SEGMENTS",
            "#EXT-X-VERSION:6",
        ])
        #expect(
            try format(input)
                == lines([
                    "#EXTM3U", "#EXT-X-VERSION:6", "#EXT-X-INDEPENDENT-SEGMENTS", #"#EXT-X-SESSION-DATA:DATA-ID="d",VALUE="v""#,
                    #"#EXT-X-SESSION-KEY:METHOD=AES-128,URI="k""#, #"#EXT-X-CONTENT-STEERING:SERVER-URI="s""#,
                    #"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="en""#, "#EXT-X-STREAM-INF:BANDWIDTH=2", "v.m3u8",
                    #"#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1,URI="i.m3u8""#, "#EXT-X-VENDOR-A", "#EXT-X-VENDOR-B",
                ]))
    }

    @Test("string(_:) is the UTF-8 text of serialize(_:), for both kinds")
    func stringMatchesBytes() {
        var generator = PlaylistGenerator(seed: 0x57)
        for _ in 0..<20 {
            let media = generator.mediaPlaylist()
            let multivariant = generator.multivariantPlaylist()
            #expect(PlaylistSerializer.string(media) == String(decoding: PlaylistSerializer.serialize(media), as: UTF8.self))
            #expect(PlaylistSerializer.string(.media(media)) == PlaylistSerializer.string(media))
            #expect(PlaylistSerializer.string(.multivariant(multivariant)) == PlaylistSerializer.string(multivariant))
            #expect(PlaylistSerializer.serialize(.multivariant(multivariant)) == PlaylistSerializer.serialize(multivariant))
        }
    }

    /// An unknown tag after EXTINF, GAP, BITRATE or PART of the first segment is a segment tag when
    /// read (the parser is already in the segment phase), but the canonical order writes unknown tags
    /// before those, where the parser reads them as header tags.
    @Test(
        "an unknown tag on the first segment stays on that segment through serialize → parse",
        arguments: [
            ["#EXTINF:6,", "#EXT-X-VENDOR", "a.mp4"], ["#EXT-X-GAP", "#EXT-X-VENDOR", "#EXTINF:6,", "a.mp4"],
            ["#EXT-X-BITRATE:800", "#EXT-X-VENDOR", "#EXTINF:6,", "a.mp4"],
            [#"#EXT-X-PART:DURATION=1,URI="a.0.mp4""#, "#EXT-X-VENDOR", "#EXTINF:6,", "a.mp4"],
        ]
    )
    func unknownTagOnFirstSegment(_ segment: [String]) throws {
        let text = lines(["#EXTM3U", "#EXT-X-TARGETDURATION:6"] + segment)
        let parsed = try PlaylistParser().parseMedia(Array(text.utf8))
        #expect(parsed.segments[0].unknownTags == [UnknownTag("EXT-X-VENDOR")])
        let reparsed = try PlaylistParser().parseMedia(PlaylistSerializer.serialize(parsed))
        #expect(reparsed == parsed, "\(PlaylistDiff.describe(expected: parsed, actual: reparsed))")
    }

    @Test("the same holds for the trailing tags of a playlist without segments")
    func unknownTagInTrailingTagsOfEmptyPlaylist() throws {
        let text = lines(["#EXTM3U", "#EXT-X-TARGETDURATION:2", #"#EXT-X-PART:DURATION=1,URI="a.0.mp4""#, "#EXT-X-VENDOR"])
        let parsed = try PlaylistParser().parseMedia(Array(text.utf8))
        #expect(parsed.trailingTags.unknownTags == [UnknownTag("EXT-X-VENDOR")])
        let reparsed = try PlaylistParser().parseMedia(PlaylistSerializer.serialize(parsed))
        #expect(reparsed == parsed, "\(PlaylistDiff.describe(expected: parsed, actual: reparsed))")
    }
}
