import HeadwaterHLS
import Testing

// Each rule: a minimal playlist that breaks it reports exactly that rule at the right place, and
// the fixed playlist reports nothing.

private func media(_ text: String) throws -> MediaPlaylist { try PlaylistParser().parseMedia(Array(text.utf8)) }

private func multivariant(_ text: String) throws -> MultivariantPlaylist {
    try PlaylistParser().parseMultivariant(Array(text.utf8))
}

/// A finished playlist (so live-window rules stay quiet) around `body`.
private func vod(_ body: String, version: Int? = 3, targetDuration: Int = 6, header: String = "") -> String {
    var text = "#EXTM3U\n"
    if let version { text += "#EXT-X-VERSION:\(version)\n" }
    text += "#EXT-X-TARGETDURATION:\(targetDuration)\n" + header + body + "#EXT-X-ENDLIST\n"
    return text
}

/// A live playlist (no ENDLIST) around `body`.
private func live(_ body: String, version: Int = 3, targetDuration: Int = 6, header: String = "") -> String {
    "#EXTM3U\n#EXT-X-VERSION:\(version)\n#EXT-X-TARGETDURATION:\(targetDuration)\n" + header + body
}

/// `count` segments of 5.005 s (`s0.ts`, `s1.ts`, …).
private func segments(_ count: Int, duration: String = "5.005", ext: String = "ts") -> String {
    (0..<count).map { "#EXTINF:\(duration),\ns\($0).\(ext)\n" }.joined()
}

private let date = "2026-11-21T17:00:00.000Z"

/// The SCTE 35 §14.2 splice_insert out cue (HLS-RULES I6 Ex 1): break_duration 60.293567 s.
private let spliceOut =
    "0xFC302F000000000000FFFFF014054800008F7FEFFE7369C02EFE0052CCF500000000000A0008435545490000013562DBA30A"
/// The matching in cue (out_of_network_indicator=0), CRC included.
private let spliceIn = "0xFC3020000000000000FFFFF00F054800008F7F4FFE73BC8D23000000000000A30C342E"
/// A cancelled splice_insert (splice_event_cancel_indicator=1).
private let spliceCancelled = "0xFC3016000000000000FFFFF005054800008FFF00006B34583E"

private func expectOnly(
    _ rule: String, _ severity: ValidationIssue.Severity = .error, at location: PlaylistLocation, in text: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let issues = PlaylistValidator.validate(try media(text))
    #expect(issues.map(\.rule) == [rule], "\(issues)", sourceLocation: sourceLocation)
    #expect(issues.first?.severity == severity, "\(issues)", sourceLocation: sourceLocation)
    #expect(issues.first?.location == location, "\(issues)", sourceLocation: sourceLocation)
}

private func expectClean(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let issues = PlaylistValidator.validate(try media(text))
    #expect(issues.isEmpty, "\(issues)", sourceLocation: sourceLocation)
}

private func expectOnlyMultivariant(
    _ rule: String, _ severity: ValidationIssue.Severity = .error, at location: PlaylistLocation, in text: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let issues = PlaylistValidator.validate(try multivariant(text))
    #expect(issues.map(\.rule) == [rule], "\(issues)", sourceLocation: sourceLocation)
    #expect(issues.first?.severity == severity, "\(issues)", sourceLocation: sourceLocation)
    #expect(issues.first?.location == location, "\(issues)", sourceLocation: sourceLocation)
}

private func expectCleanMultivariant(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let issues = PlaylistValidator.validate(try multivariant(text))
    #expect(issues.isEmpty, "\(issues)", sourceLocation: sourceLocation)
}

@Suite struct PlaylistValidatorTests {
    // MARK: Realistic playlists

    @Test func cleanLiveTransportStreamWithAdBreak() throws {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:6
            #EXT-X-MEDIA-SEQUENCE:2680
            #EXT-X-DISCONTINUITY-SEQUENCE:12
            #EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:00:00.000Z
            #EXTINF:6.006,
            content/2680.ts
            #EXTINF:6.006,
            content/2681.ts
            #EXT-X-DISCONTINUITY
            #EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:00:12.012Z
            #EXT-X-DATERANGE:ID="splice-4800008F-1",CLASS="com.headwater.ad",START-DATE="2026-11-21T17:00:12.012Z",PLANNED-DURATION=60.293567,SCTE35-OUT=\(spliceOut)
            #EXTINF:6.000,
            ads/1/1.ts
            #EXTINF:6.000,
            ads/1/2.ts
            #EXTINF:3.500,
            ads/1/3.ts
            #EXT-X-DISCONTINUITY
            #EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:00:27.512Z
            #EXT-X-DATERANGE:ID="splice-4800008F-1",DURATION=15.500,SCTE35-IN=\(spliceIn)
            #EXTINF:6.006,
            content/2685.ts
            #EXT-X-GAP
            #EXTINF:6.006,
            content/2686.ts
            #EXTINF:5.005,
            content/2687.ts

            """
        try expectClean(text)
    }

    @Test func cleanLowLatencyFragmentedMP4() throws {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-TARGETDURATION:4
            #EXT-X-MEDIA-SEQUENCE:100
            #EXT-X-PART-INF:PART-TARGET=1.002
            #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=3.006,CAN-SKIP-UNTIL=24.0
            #EXT-X-KEY:METHOD=AES-128,URI="https://keys.example/k1",IV=0x0123456789ABCDEF0123456789ABCDEF
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:00:00.000Z
            #EXTINF:4.000,
            seg100.m4s
            #EXT-X-BYTERANGE:20000@0
            #EXTINF:4.000,
            seg101.m4s
            #EXT-X-PART:DURATION=1.002,URI="seg102.0.m4s",INDEPENDENT=YES
            #EXT-X-PART:DURATION=1.002,URI="seg102.1.m4s"
            #EXT-X-PART:DURATION=1.002,URI="seg102.2.m4s"
            #EXT-X-PART:DURATION=0.994,URI="seg102.3.m4s"
            #EXTINF:4.000,
            seg102.m4s
            #EXT-X-PART:DURATION=1.002,URI="seg103.0.m4s",INDEPENDENT=YES
            #EXT-X-PART:DURATION=1.002,URI="seg103.1.m4s"
            #EXT-X-PART:DURATION=1.002,URI="seg103.2.m4s"
            #EXT-X-PART:DURATION=0.994,URI="seg103.3.m4s"
            #EXTINF:4.000,
            seg103.m4s
            #EXT-X-PART:DURATION=1.002,URI="seg104.0.m4s",INDEPENDENT=YES
            #EXT-X-PART:DURATION=1.002,URI="seg104.1.m4s"
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="seg104.2.m4s"
            #EXT-X-RENDITION-REPORT:URI="../audio/index.m3u8",LAST-MSN=104,LAST-PART=1

            """
        try expectClean(text)
    }

    @Test func issuesAreOrderedByLocation() throws {
        let text = vod(
            """
            #EXTINF:7.000,
            a.ts
            #EXT-X-DATERANGE:ID="x",START-DATE="\(date)",CUE="PRE,POST"
            #EXTINF:7.000,
            b.ts

            """, version: 2)
        let locations = PlaylistValidator.validate(try media(text)).map(\.location)
        #expect(
            locations == [.tag("EXT-X-VERSION"), .segment(0), .segment(1), .dateRange(id: "x"), .dateRange(id: "x")])
    }

    // MARK: A7, A8, A9

    @Test func a7_lowercaseScte35Hex() throws {
        let range =
            "#EXT-X-PROGRAM-DATE-TIME:\(date)\n#EXT-X-DATERANGE:ID=\"s\",START-DATE=\"\(date)\",PLANNED-DURATION=60.293567,SCTE35-OUT="
        try expectOnly("A7", at: .dateRange(id: "s"), in: vod(range + spliceOut.lowercased() + "\n" + segments(1)))
        try expectClean(vod(range + spliceOut + "\n" + segments(1)))
    }

    @Test func a8_versionMissing() throws {
        let body = "#EXT-X-BYTERANGE:1000@0\n#EXTINF:5.005,\nmain.ts\n"
        try expectOnly("A8", at: .playlist, in: vod(body, version: nil))
        try expectClean(vod(body, version: 4))
    }

    @Test func a8_versionBelowRequired() throws {
        let body = "#EXT-X-MAP:URI=\"init.mp4\"\n" + segments(2, ext: "m4s")
        try expectOnly("A8", at: .tag("EXT-X-VERSION"), in: vod(body, version: 3))
        try expectClean(vod(body, version: 6))
    }

    @Test func a8_versionAboveRequired() throws {
        try expectOnly("A8", .warning, at: .tag("EXT-X-VERSION"), in: vod(segments(2), version: 7))
        try expectClean(vod(segments(2), version: 3))
    }

    @Test(arguments: [
        ("#EXTINF:5,\na.ts\n", "", 1),
        ("#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x00000000000000000000000000000001\n#EXTINF:5,\na.ts\n", "", 2),
        ("#EXTINF:5.005,\na.ts\n", "", 3),
        ("#EXT-X-BYTERANGE:10@0\n#EXTINF:5,\na.ts\n", "", 4),
        ("#EXTINF:5,\na.ts\n", "#EXT-X-I-FRAMES-ONLY\n", 4),
        ("#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"k\"\n#EXTINF:5,\na.ts\n", "", 5),
        ("#EXT-X-KEY:METHOD=AES-128,URI=\"k\",KEYFORMAT=\"identity\"\n#EXTINF:5,\na.ts\n", "", 5),
        ("#EXT-X-MAP:URI=\"i.mp4\"\n#EXT-X-BYTERANGE:10@0\n#EXTINF:5,\na.mp4\n", "#EXT-X-I-FRAMES-ONLY\n", 5),
        ("#EXT-X-MAP:URI=\"i.mp4\"\n#EXTINF:5,\na.mp4\n", "", 6),
        ("#EXTINF:5,\na.ts\n", "#EXT-X-DEFINE:NAME=\"h\",VALUE=\"x\"\n", 8),
        ("#EXTINF:5,\na.ts\n", "#EXT-X-DEFINE:QUERYPARAM=\"token\"\n", 11),
        ("#EXTINF:5,\na.ts\n", "#EXT-X-SKIP:SKIPPED-SEGMENTS=3\n", 9),
        ("#EXTINF:5,\na.ts\n", "#EXT-X-SKIP:SKIPPED-SEGMENTS=3,RECENTLY-REMOVED-DATERANGES=\"\"\n", 10),
    ])
    func a9_requiredVersion(body: String, header: String, expected: Int) throws {
        let playlist = try media("#EXTM3U\n#EXT-X-TARGETDURATION:6\n" + header + body)
        #expect(PlaylistValidator.requiredVersion(playlist).version == expected)
    }

    @Test func a8_multivariantVersionForServiceCaptions() throws {
        let text = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="English",INSTREAM-ID="SERVICE1"
            #EXT-X-STREAM-INF:BANDWIDTH=1000000,CODECS="avc1.64001f",CLOSED-CAPTIONS="cc"
            v.m3u8

            """
        try expectOnlyMultivariant("A8", at: .playlist, in: text)
        try expectCleanMultivariant(text.replacing("#EXTM3U\n", with: "#EXTM3U\n#EXT-X-VERSION:7\n"))
    }

    // MARK: B

    @Test func b1_extinfRoundsAboveTargetDuration() throws {
        try expectOnly("B1", at: .segment(1), in: vod("#EXTINF:5.005,\na.ts\n#EXTINF:6.500,\nb.ts\n"))
        try expectClean(vod("#EXTINF:5.005,\na.ts\n#EXTINF:6.499,\nb.ts\n"))
    }

    @Test func b1_partsOfOpenSegmentExceedTargetDuration() throws {
        let header = "#EXT-X-PART-INF:PART-TARGET=2.0\n#EXT-X-SERVER-CONTROL:PART-HOLD-BACK=6.0\n"
        let parts = (0..<4).map { "#EXT-X-PART:DURATION=2.0,URI=\"p\($0).ts\"\n" }.joined()
        try expectOnly("B1", at: .tag("EXT-X-PART"), in: live(segments(4) + parts, header: header))
        try expectClean(
            live(segments(4) + parts.split(separator: "\n").prefix(3).joined(separator: "\n") + "\n", header: header))
    }

    @Test func b7_discontinuityWithoutDate() throws {
        let body = "#EXT-X-PROGRAM-DATE-TIME:\(date)\n#EXTINF:5.005,\na.ts\n#EXT-X-DISCONTINUITY\n"
        try expectOnly("B7", .warning, at: .segment(1), in: vod(body + "#EXTINF:5.005,\nb.ts\n"))
        try expectClean(vod(body + "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:00:30.000Z\n#EXTINF:5.005,\nb.ts\n"))
    }

    @Test func b7_dateGoesBackwards() throws {
        let body = "#EXT-X-PROGRAM-DATE-TIME:\(date)\n#EXTINF:5.005,\na.ts\n#EXT-X-PROGRAM-DATE-TIME:"
        try expectOnly("B7", at: .segment(1), in: vod(body + "2026-11-21T16:59:59.000Z\n#EXTINF:5.005,\nb.ts\n"))
        try expectClean(vod(body + "2026-11-21T17:00:05.005Z\n#EXTINF:5.005,\nb.ts\n"))
    }

    @Test func b7_dateOverlapsPreviousSegmentByASecond() throws {
        let body = "#EXT-X-PROGRAM-DATE-TIME:\(date)\n#EXTINF:5.005,\na.ts\n#EXT-X-PROGRAM-DATE-TIME:"
        try expectOnly("B7", at: .segment(1), in: vod(body + "2026-11-21T17:00:04.005Z\n#EXTINF:5.005,\nb.ts\n"))
        // A sub-second overlap absorbs clock drift.
        try expectClean(vod(body + "2026-11-21T17:00:04.006Z\n#EXTINF:5.005,\nb.ts\n"))
    }

    @Test func b7_dateWithoutTimeZone() throws {
        try expectOnly(
            "B7", .warning, at: .segment(0), in: vod("#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:00:00.000\n" + segments(1))
        )
        try expectClean(vod("#EXT-X-PROGRAM-DATE-TIME:2026-11-21T18:00:00.000+01:00\n" + segments(1)))
    }

    @Test func b8_headByteRangeWithoutOffset() throws {
        let tail = "#EXTINF:5.005,\nmain.ts\n#EXT-X-BYTERANGE:2000\n#EXTINF:5.005,\nmain.ts\n"
        try expectOnly("B8", at: .segment(0), in: vod("#EXT-X-BYTERANGE:1000\n" + tail, version: 4))
        try expectClean(vod("#EXT-X-BYTERANGE:1000@500\n" + tail, version: 4))
    }

    @Test func b8_byteRangeWithoutOffsetAfterAnotherResource() throws {
        let head = "#EXT-X-BYTERANGE:1000@0\n#EXTINF:5.005,\na.ts\n#EXT-X-BYTERANGE:1000"
        try expectOnly("B8", at: .segment(1), in: vod(head + "\n#EXTINF:5.005,\nb.ts\n", version: 4))
        try expectClean(vod(head + "@0\n#EXTINF:5.005,\nb.ts\n", version: 4))
    }

    @Test func b9_fragmentedSegmentsWithoutMap() throws {
        // Inferred from the extension, so a warning (issue 13).
        try expectOnly("B9", .warning, at: .segment(0), in: vod(segments(2, ext: "m4s")))
        try expectClean(vod("#EXT-X-MAP:URI=\"init.mp4\"\n" + segments(2, ext: "m4s"), version: 6))
    }

    @Test func b9_mapOnlyAfterTheHead() throws {
        let map = "#EXT-X-MAP:URI=\"init.mp4\"\n"
        let second = "#EXTINF:5.005,\nb.cmfv\n"
        try expectOnly("B9", .warning, at: .segment(0), in: vod("#EXTINF:5.005,\na.ts\n" + map + second, version: 6))
        try expectClean(vod(map + "#EXTINF:5.005,\na.ts\n" + second, version: 6))
    }

    @Test func b9_mapByteRangeWithoutOffset() throws {
        try expectOnly(
            "B9", at: .segment(0),
            in: vod("#EXT-X-MAP:URI=\"f.mp4\",BYTERANGE=\"720\"\n" + segments(1, ext: "m4s"), version: 6))
        try expectClean(vod("#EXT-X-MAP:URI=\"f.mp4\",BYTERANGE=\"720@0\"\n" + segments(1, ext: "m4s"), version: 6))
    }

    @Test func b9_encryptedMapNeedsIV() throws {
        let body = "#EXT-X-MAP:URI=\"init.mp4\"\n" + segments(1, ext: "m4s")
        try expectOnly("B9", at: .segment(0), in: vod("#EXT-X-KEY:METHOD=AES-128,URI=\"k\"\n" + body, version: 6))
        try expectClean(
            vod("#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x000102030405060708090A0B0C0D0E0F\n" + body, version: 6))
    }

    @Test func b10_methodNoneWithOtherAttributes() throws {
        try expectOnly("B10", at: .segment(0), in: vod("#EXT-X-KEY:METHOD=NONE,URI=\"k\"\n" + segments(1)))
        try expectClean(vod("#EXT-X-KEY:METHOD=NONE\n" + segments(1)))
    }

    @Test func b10_keyWithoutURI() throws {
        try expectOnly("B10", at: .segment(1), in: vod(segments(1) + "#EXT-X-KEY:METHOD=AES-128\n" + segments(1)))
        try expectClean(vod(segments(1) + "#EXT-X-KEY:METHOD=AES-128,URI=\"k\"\n" + segments(1)))
    }

    @Test func b10_ivOfWrongLength() throws {
        try expectOnly("B10", at: .segment(0), in: vod("#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x0102\n" + segments(1)))
        try expectClean(
            vod("#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x00000000000000000000000000000102\n" + segments(1)))
    }

    @Test func b10_unknownMethod() throws {
        try expectOnly("B10", at: .segment(0), in: vod("#EXT-X-KEY:METHOD=AES-512,URI=\"k\"\n" + segments(1)))
        try expectClean(vod("#EXT-X-KEY:METHOD=AES-256-GCM,URI=\"k\"\n" + segments(1)))
    }

    @Test func b10_ivWithSampleAESCTR() throws {
        try expectOnly(
            "B10", at: .segment(0),
            in: vod("#EXT-X-KEY:METHOD=SAMPLE-AES-CTR,URI=\"k\",IV=0x00000000000000000000000000000102\n" + segments(1)))
        try expectClean(vod("#EXT-X-KEY:METHOD=SAMPLE-AES-CTR,URI=\"k\"\n" + segments(1)))
    }

    @Test func b11_gapSegmentsAreValid() throws {
        try expectClean(vod(segments(1) + "#EXT-X-GAP\n" + segments(2)))
    }

    @Test func b12_zeroBitrate() throws {
        try expectOnly("B12", at: .segment(0), in: vod("#EXT-X-BITRATE:0\n" + segments(2)))
        try expectClean(vod("#EXT-X-BITRATE:1500\n" + segments(2)))
    }

    @Test func b13_vodPlaylistWithoutEndList() throws {
        let text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXT-X-PLAYLIST-TYPE:VOD\n" + segments(2)
        try expectOnly("B13", .warning, at: .tag("EXT-X-PLAYLIST-TYPE"), in: text)
        try expectClean(text + "#EXT-X-ENDLIST\n")
    }

    @Test func b17_startTooCloseToTheLiveEdge() throws {
        try expectOnly(
            "B17", .warning, at: .tag("EXT-X-START"), in: live(segments(4), header: "#EXT-X-START:TIME-OFFSET=-6.0\n"))
        try expectClean(live(segments(4), header: "#EXT-X-START:TIME-OFFSET=-18.0\n"))
    }

    @Test func b17_startBeyondThePlaylist() throws {
        try expectOnly(
            "B17", .warning, at: .tag("EXT-X-START"), in: vod(segments(2), header: "#EXT-X-START:TIME-OFFSET=10.5\n"))
        try expectClean(vod(segments(2), header: "#EXT-X-START:TIME-OFFSET=10.0,PRECISE=YES\n"))
    }

    @Test func b17_preciseIsYesOrNo() throws {
        try expectOnly(
            "B17", at: .tag("EXT-X-START"), in: vod(segments(2), header: "#EXT-X-START:TIME-OFFSET=0,PRECISE=MAYBE\n"))
        try expectClean(vod(segments(2), header: "#EXT-X-START:TIME-OFFSET=0,PRECISE=NO\n"))
    }

    // MARK: C

    @Test func c5_liveWindowShorterThanThreeTargetDurations() throws {
        try expectOnly("C5", .warning, at: .playlist, in: live(segments(3)))
        try expectClean(live(segments(4)))
    }

    @Test func c6_discontinuitiesWithoutDiscontinuitySequence() throws {
        let body = segments(1) + "#EXT-X-DISCONTINUITY\n" + segments(1)
        try expectOnly(
            "C6", .warning, at: .tag("EXT-X-MEDIA-SEQUENCE"), in: vod(body, header: "#EXT-X-MEDIA-SEQUENCE:10\n"))
        try expectClean(vod(body, header: "#EXT-X-MEDIA-SEQUENCE:10\n#EXT-X-DISCONTINUITY-SEQUENCE:3\n"))
    }

    // MARK: D

    /// A finished playlist with a date and a date range tag before its first segment.
    private func withRange(_ attributes: String, more: String = "") -> String {
        vod("#EXT-X-PROGRAM-DATE-TIME:\(date)\n#EXT-X-DATERANGE:\(attributes)\n" + segments(1) + more + segments(1))
    }

    @Test func d1_emptyID() throws {
        try expectOnly("D1", at: .dateRange(id: ""), in: withRange("ID=\"\",START-DATE=\"\(date)\""))
        try expectClean(withRange("ID=\"a\",START-DATE=\"\(date)\""))
    }

    @Test func d2_firstTagWithoutStartDate() throws {
        let later = "#EXT-X-DATERANGE:ID=\"a\",START-DATE=\"\(date)\"\n"
        try expectOnly("D2", at: .dateRange(id: "a"), in: withRange("ID=\"a\",DURATION=10.0", more: later))
        try expectClean(withRange("ID=\"a\",START-DATE=\"\(date)\"", more: "#EXT-X-DATERANGE:ID=\"a\",DURATION=10.0\n"))
    }

    @Test func d3_cueWithPreAndPost() throws {
        try expectOnly("D3", at: .dateRange(id: "a"), in: withRange("ID=\"a\",START-DATE=\"\(date)\",CUE=\"PRE,POST\""))
        try expectClean(withRange("ID=\"a\",START-DATE=\"\(date)\",CUE=\"PRE,ONCE\""))
    }

    @Test func d3_unknownCue() throws {
        try expectOnly("D3", at: .dateRange(id: "a"), in: withRange("ID=\"a\",START-DATE=\"\(date)\",CUE=\"LATER\""))
        try expectClean(withRange("ID=\"a\",START-DATE=\"\(date)\",CUE=\"POST\""))
    }

    @Test func d4_endDateBeforeStartDate() throws {
        try expectOnly(
            "D4", at: .dateRange(id: "a"),
            in: withRange("ID=\"a\",START-DATE=\"\(date)\",END-DATE=\"2026-11-21T16:59:00.000Z\""))
        try expectClean(withRange("ID=\"a\",START-DATE=\"\(date)\",END-DATE=\"2026-11-21T17:01:00.000Z\""))
    }

    @Test func d4_durationAndEndDateDisagree() throws {
        let start = "ID=\"a\",START-DATE=\"\(date)\",END-DATE=\"2026-11-21T17:00:30.000Z\",DURATION="
        try expectOnly("D4", at: .dateRange(id: "a"), in: withRange(start + "30.002"))
        try expectClean(withRange(start + "30.001"))
    }

    @Test func d6_endOnNextWithoutClass() throws {
        try expectOnly("D6", at: .dateRange(id: "a"), in: withRange("ID=\"a\",START-DATE=\"\(date)\",END-ON-NEXT=YES"))
        try expectClean(withRange("ID=\"a\",CLASS=\"com.example.chapter\",START-DATE=\"\(date)\",END-ON-NEXT=YES"))
    }

    @Test func d6_endOnNextWithDuration() throws {
        let range = "ID=\"a\",CLASS=\"com.example.chapter\",START-DATE=\"\(date)\",END-ON-NEXT=YES"
        try expectOnly("D6", at: .dateRange(id: "a"), in: withRange(range + ",DURATION=10.0"))
        try expectClean(withRange(range))
    }

    @Test func d7_dateRangeWithoutProgramDateTime() throws {
        let range = "#EXT-X-DATERANGE:ID=\"a\",START-DATE=\"\(date)\"\n"
        try expectOnly("D7", at: .dateRange(id: "a"), in: vod(range + segments(2)))
        try expectClean(vod(range + "#EXT-X-PROGRAM-DATE-TIME:\(date)\n" + segments(2)))
    }

    @Test("D2 and D7 do not fire on a delta update, whose skipped segments held the date and the START-DATE")
    func d2d7_deltaUpdate() throws {
        let header = "#EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=36.0,CAN-SKIP-DATERANGES=YES\n#EXT-X-MEDIA-SEQUENCE:20\n"
        let body = "#EXT-X-DATERANGE:ID=\"a\",END-DATE=\"2026-11-21T17:01:00.000Z\"\n" + segments(8)
        let skip = "#EXT-X-SKIP:SKIPPED-SEGMENTS=10,RECENTLY-REMOVED-DATERANGES=\"\"\n"
        try expectClean(live(skip + body, version: 10, header: header))
        // The same tags in a full playlist break both rules.
        let issues = PlaylistValidator.validate(try media(live(body, version: 3, header: header)))
        #expect(issues.map(\.rule).sorted() == ["D2", "D7"], "\(issues)")
    }

    @Test func d8_sameIDTagsDisagree() throws {
        let first = "ID=\"a\",START-DATE=\"\(date)\",PLANNED-DURATION=30.0"
        try expectOnly(
            "D8", at: .dateRange(id: "a"),
            in: withRange(first, more: "#EXT-X-DATERANGE:ID=\"a\",PLANNED-DURATION=29.0,DURATION=28.0\n"))
        // Equal values written differently agree.
        try expectClean(withRange(first, more: "#EXT-X-DATERANGE:ID=\"a\",PLANNED-DURATION=30.000,DURATION=28.0\n"))
    }

    @Test func d9_scte35IsNotASpliceInfoSection() throws {
        let range = "ID=\"a\",START-DATE=\"\(date)\",PLANNED-DURATION=60.293567,SCTE35-OUT="
        try expectOnly("D9", at: .dateRange(id: "a"), in: withRange(range + "0xFD" + spliceOut.dropFirst(4)))
        try expectOnly("D9", at: .dateRange(id: "a"), in: withRange(range + spliceOut.dropLast(2)))
        try expectClean(withRange(range + spliceOut))
        // MPEG-TS stuffing after the section (a cue cut from a TS packet) is framing, not an error;
        // anything else after it is.
        try expectClean(withRange(range + spliceOut + String(repeating: "FF", count: 20)))
        try expectOnly("D9", at: .dateRange(id: "a"), in: withRange(range + spliceOut + "FF00"))
        try expectOnly("D9", at: .dateRange(id: "a"), in: withRange(range + spliceOut + String(repeating: "FF", count: 185)))
    }

    @Test func d10_inCueInScte35Out() throws {
        try expectOnly(
            "D10", at: .dateRange(id: "a"), in: withRange("ID=\"a\",START-DATE=\"\(date)\",SCTE35-OUT=\(spliceIn)"))
        try expectClean(withRange("ID=\"a\",START-DATE=\"\(date)\",SCTE35-IN=\(spliceIn)"))
    }

    @Test func d12_laterScte35TagWithoutTheEnd() throws {
        let out = "ID=\"a\",START-DATE=\"\(date)\",PLANNED-DURATION=60.293567,SCTE35-OUT=\(spliceOut)"
        try expectOnly(
            "D12", at: .dateRange(id: "a"),
            in: withRange(out, more: "#EXT-X-DATERANGE:ID=\"a\",SCTE35-IN=\(spliceIn)\n"))
        try expectClean(withRange(out, more: "#EXT-X-DATERANGE:ID=\"a\",DURATION=5.005,SCTE35-IN=\(spliceIn)\n"))
    }

    @Test func d13_plannedDurationDiffersFromBreakDuration() throws {
        let range = "ID=\"a\",START-DATE=\"\(date)\",SCTE35-OUT=\(spliceOut),PLANNED-DURATION="
        try expectOnly("D13", at: .dateRange(id: "a"), in: withRange(range + "60.0"))
        try expectClean(withRange(range + "60.294"))
    }

    @Test func d14_cancelledSplice() throws {
        try expectOnly(
            "D14", .warning, at: .dateRange(id: "a"),
            in: withRange("ID=\"a\",START-DATE=\"\(date)\",SCTE35-OUT=\(spliceCancelled)"))
        try expectClean(withRange("ID=\"a\",START-DATE=\"\(date)\",PLANNED-DURATION=60.293567,SCTE35-OUT=\(spliceOut)"))
    }

    @Test func h7_interstitialNamesOneAsset() throws {
        let range =
            "ID=\"i\",CLASS=\"com.apple.hls.interstitial\",START-DATE=\"\(date)\",X-ASSET-URI=\"https://ads.example/a.m3u8\""
        try expectOnly("H7", at: .dateRange(id: "i"), in: withRange(range + ",X-ASSET-LIST=\"list.json\""))
        try expectClean(withRange(range))
    }

    // MARK: F

    private let lowLatency = "#EXT-X-PART-INF:PART-TARGET=1.0\n"

    @Test func f1_canSkipUntilBelowSixTargetDurations() throws {
        try expectOnly(
            "F1", at: .tag("EXT-X-SERVER-CONTROL"),
            in: live(segments(4), header: "#EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=35.9\n"))
        try expectClean(live(segments(4), header: "#EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=36\n"))
    }

    @Test func f1_canSkipDateRangesWithoutCanSkipUntil() throws {
        try expectOnly(
            "F1", at: .tag("EXT-X-SERVER-CONTROL"),
            in: live(segments(4), header: "#EXT-X-SERVER-CONTROL:CAN-SKIP-DATERANGES=YES\n"))
        try expectClean(live(segments(4), header: "#EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=36,CAN-SKIP-DATERANGES=YES\n"))
    }

    @Test func f1_holdBackBelowThreeTargetDurations() throws {
        try expectOnly(
            "F1", at: .tag("EXT-X-SERVER-CONTROL"),
            in: live(segments(4), header: "#EXT-X-SERVER-CONTROL:HOLD-BACK=12.0\n"))
        try expectClean(live(segments(4), header: "#EXT-X-SERVER-CONTROL:HOLD-BACK=18.0,CAN-BLOCK-RELOAD=YES\n"))
    }

    @Test func f1_partHoldBackBelowTwoPartTargets() throws {
        try expectOnly(
            "F1", at: .tag("EXT-X-SERVER-CONTROL"),
            in: live(segments(4), header: lowLatency + "#EXT-X-SERVER-CONTROL:PART-HOLD-BACK=1.5\n"))
        try expectOnly(
            "F1", .warning, at: .tag("EXT-X-SERVER-CONTROL"),
            in: live(segments(4), header: lowLatency + "#EXT-X-SERVER-CONTROL:PART-HOLD-BACK=2.5\n"))
        try expectClean(live(segments(4), header: lowLatency + "#EXT-X-SERVER-CONTROL:PART-HOLD-BACK=3.0\n"))
    }

    @Test func f1_partHoldBackRequiredWithParts() throws {
        try expectOnly("F1", at: .tag("EXT-X-PART-INF"), in: live(segments(4), header: lowLatency))
        try expectOnly(
            "F1", at: .tag("EXT-X-SERVER-CONTROL"),
            in: live(segments(4), header: lowLatency + "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES\n"))
        try expectClean(
            live(segments(4), header: lowLatency + "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=3.0\n"))
    }

    @Test func f2_partWithoutPartInformation() throws {
        let body = segments(4) + "#EXT-X-PART:DURATION=1.0,URI=\"p.ts\"\n"
        try expectOnly("F2", at: .tag("EXT-X-PART"), in: live(body))
        try expectClean(live(body, header: lowLatency + "#EXT-X-SERVER-CONTROL:PART-HOLD-BACK=3.0\n"))
    }

    private let lowLatencyHeader = "#EXT-X-PART-INF:PART-TARGET=1.0\n#EXT-X-SERVER-CONTROL:PART-HOLD-BACK=3.0\n"

    @Test func f3_partLongerThanPartTarget() throws {
        let parts = "#EXT-X-PART:DURATION=1.0,URI=\"p0.ts\"\n#EXT-X-PART:DURATION="
        try expectOnly(
            "F3", at: .tag("EXT-X-PART"),
            in: live(segments(4) + parts + "1.001,URI=\"p1.ts\"\n", header: lowLatencyHeader))
        try expectClean(live(segments(4) + parts + "1.000,URI=\"p1.ts\"\n", header: lowLatencyHeader))
    }

    @Test func f3_shortPartInTheMiddle() throws {
        let parts = { (middle: String) in
            "#EXT-X-PART:DURATION=1.0,URI=\"p0.ts\"\n#EXT-X-PART:DURATION=0.5,URI=\"p1.ts\"\(middle)\n#EXT-X-PART:DURATION=1.0,URI=\"p2.ts\"\n"
        }
        try expectOnly("F3", at: .tag("EXT-X-PART"), in: live(segments(4) + parts(""), header: lowLatencyHeader))
        try expectClean(live(segments(4) + parts(",INDEPENDENT=YES"), header: lowLatencyHeader))
    }

    @Test func f3_partsDoNotAddUpToTheirSegment() throws {
        let parts = "#EXT-X-PART:DURATION=1.0,URI=\"p0.ts\"\n#EXT-X-PART:DURATION=1.0,URI=\"p1.ts\"\n"
        try expectOnly(
            "F3", at: .segment(4), in: live(segments(4) + parts + "#EXTINF:2.5,\nlast.ts\n", header: lowLatencyHeader))
        try expectClean(live(segments(4) + parts + "#EXTINF:2.002,\nlast.ts\n", header: lowLatencyHeader))
    }

    @Test func f4_preloadHintAfterEndList() throws {
        let hint = "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"next.ts\"\n"
        try expectOnly("F4", at: .tag("EXT-X-PRELOAD-HINT"), in: vod(segments(4) + hint, header: lowLatencyHeader))
        try expectClean(live(segments(4) + hint, header: lowLatencyHeader))
    }

    @Test func f4_twoHintsOfOneType() throws {
        let hint = "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"next.ts\"\n"
        try expectOnly(
            "F4", .warning, at: .tag("EXT-X-PRELOAD-HINT"),
            in: live(segments(4) + hint + "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"after.ts\"\n", header: lowLatencyHeader))
        try expectClean(
            live(segments(4) + hint + "#EXT-X-PRELOAD-HINT:TYPE=MAP,URI=\"init2.mp4\"\n", header: lowLatencyHeader))
    }

    @Test func f14_skipWithoutSkipBoundary() throws {
        try expectOnly(
            "F14", at: .tag("EXT-X-SKIP"),
            in: live(segments(4), version: 9, header: "#EXT-X-SKIP:SKIPPED-SEGMENTS=10\n"))
        try expectClean(
            live(
                segments(4), version: 9,
                header: "#EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=36\n#EXT-X-SKIP:SKIPPED-SEGMENTS=10\n"))
    }

    // MARK: E (multivariant)

    private let audio =
        "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"aac\",NAME=\"English\",LANGUAGE=\"en\",DEFAULT=YES,AUTOSELECT=YES,CHANNELS=\"2\",URI=\"audio/en.m3u8\"\n"

    private func master(
        _ renditions: String, variant: String = "BANDWIDTH=2000000,CODECS=\"avc1.64001f,mp4a.40.2\",AUDIO=\"aac\"",
        more: String = ""
    ) -> String {
        "#EXTM3U\n" + renditions + "#EXT-X-STREAM-INF:\(variant)\nvideo/720p.m3u8\n" + more
    }

    @Test func cleanMultivariant() throws {
        let text = """
            #EXTM3U
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-SESSION-DATA:DATA-ID="com.example.title",VALUE="Headwater",LANGUAGE="en"
            #EXT-X-SESSION-KEY:METHOD=AES-128,URI="https://keys.example/k1"
            #EXT-X-CONTENT-STEERING:SERVER-URI="/steering",PATHWAY-ID="CDN-A"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="audio/en.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="Deutsch",LANGUAGE="de",AUTOSELECT=YES,CHANNELS="2",URI="audio/de.m3u8"
            #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",LANGUAGE="en",FORCED=NO,URI="subs/en.m3u8"
            #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="English",INSTREAM-ID="CC1"
            #EXT-X-STREAM-INF:BANDWIDTH=2000000,AVERAGE-BANDWIDTH=1500000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=29.970,AUDIO="aac",SUBTITLES="subs",CLOSED-CAPTIONS="cc",PATHWAY-ID="CDN-A"
            video/720p.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=5000000,CODECS="avc1.640028,mp4a.40.2",RESOLUTION=1920x1080,HDCP-LEVEL=TYPE-0,VIDEO-RANGE=SDR,AUDIO="aac",SUBTITLES="subs",CLOSED-CAPTIONS="cc",PATHWAY-ID="CDN-A"
            video/1080p.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=300000,CODECS="avc1.64001f",RESOLUTION=1280x720,URI="video/720p-iframes.m3u8"

            """
        try expectCleanMultivariant(text)
    }

    @Test func e3_variantWithoutCodecs() throws {
        try expectOnlyMultivariant(
            "E3", .warning, at: .variant(0), in: master(audio, variant: "BANDWIDTH=2000000,AUDIO=\"aac\""))
        try expectCleanMultivariant(master(audio))
    }

    @Test func e4_unknownHDCPLevel() throws {
        let variant = "BANDWIDTH=2000000,CODECS=\"avc1.64001f,mp4a.40.2\",AUDIO=\"aac\",HDCP-LEVEL="
        try expectOnlyMultivariant("E4", at: .variant(0), in: master(audio, variant: variant + "TYPE-2"))
        try expectCleanMultivariant(master(audio, variant: variant + "TYPE-1"))
    }

    @Test func e5_audioGroupDoesNotExist() throws {
        try expectOnlyMultivariant(
            "E5", at: .variant(0),
            in: master(audio, variant: "BANDWIDTH=2000000,CODECS=\"avc1.64001f,mp4a.40.2\",AUDIO=\"ac3\""))
        try expectCleanMultivariant(master(audio))
    }

    @Test func e5_closedCaptionsNoneOnSomeVariantsOnly() throws {
        let second =
            "#EXT-X-STREAM-INF:BANDWIDTH=5000000,CODECS=\"avc1.640028,mp4a.40.2\",AUDIO=\"aac\"\nvideo/1080p.m3u8\n"
        let none = "BANDWIDTH=2000000,CODECS=\"avc1.64001f,mp4a.40.2\",AUDIO=\"aac\",CLOSED-CAPTIONS=NONE"
        try expectOnlyMultivariant("E5", at: .variant(1), in: master(audio, variant: none, more: second))
        try expectCleanMultivariant(
            master(
                audio, variant: none,
                more: second.replacing("AUDIO=\"aac\"", with: "AUDIO=\"aac\",CLOSED-CAPTIONS=NONE")))
    }

    @Test func e6_closedCaptionsWithURI() throws {
        let cc = "#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID=\"cc\",NAME=\"English\",INSTREAM-ID=\"CC1\""
        try expectOnlyMultivariant("E6", at: .rendition(1), in: master(audio + cc + ",URI=\"cc.m3u8\"\n"))
        try expectCleanMultivariant(master(audio + cc + "\n"))
    }

    @Test func e6_subtitlesWithoutURI() throws {
        let subs = "#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"subs\",NAME=\"English\""
        try expectOnlyMultivariant("E6", at: .rendition(1), in: master(audio + subs + "\n"))
        try expectCleanMultivariant(master(audio + subs + ",URI=\"subs/en.m3u8\"\n"))
    }

    @Test func e7_defaultWithoutAutoselect() throws {
        try expectOnlyMultivariant(
            "E7", at: .rendition(0), in: master(audio.replacing("AUTOSELECT=YES", with: "AUTOSELECT=NO")))
        try expectCleanMultivariant(master(audio))
    }

    @Test func e7_forcedOnAudio() throws {
        try expectOnlyMultivariant(
            "E7", at: .rendition(0), in: master(audio.replacing("AUTOSELECT=YES", with: "AUTOSELECT=YES,FORCED=NO")))
        try expectCleanMultivariant(master(audio))
    }

    @Test func e7_closedCaptionsWithoutInstreamID() throws {
        let cc = "#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID=\"cc\",NAME=\"English\""
        try expectOnlyMultivariant("E7", at: .rendition(1), in: master(audio + cc + "\n"))
        try expectOnlyMultivariant("E7", at: .rendition(1), in: master(audio + cc + ",INSTREAM-ID=\"CC5\"\n"))
        try expectCleanMultivariant(master(audio + cc + ",INSTREAM-ID=\"CC4\"\n"))
    }

    @Test func e7_instreamIDOnAudio() throws {
        try expectOnlyMultivariant(
            "E7", at: .rendition(0), in: master(audio.replacing("CHANNELS", with: "INSTREAM-ID=\"CC1\",CHANNELS")))
        try expectCleanMultivariant(master(audio))
    }

    @Test func e7_audioAttributesOnVideo() throws {
        let video = "#EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID=\"cam\",NAME=\"Wide\",URI=\"wide.m3u8\""
        let variant = "BANDWIDTH=2000000,CODECS=\"avc1.64001f,mp4a.40.2\",AUDIO=\"aac\",VIDEO=\"cam\""
        try expectOnlyMultivariant(
            "E7", at: .rendition(1), in: master(audio + video + ",SAMPLE-RATE=48000\n", variant: variant))
        try expectCleanMultivariant(master(audio + video + "\n", variant: variant))
    }

    @Test func e7_audioWithoutChannels() throws {
        try expectOnlyMultivariant(
            "E7", .warning, at: .rendition(0), in: master(audio.replacing("CHANNELS=\"2\",", with: "")))
        try expectCleanMultivariant(master(audio))
    }

    @Test func e8_duplicateNameInGroup() throws {
        let second =
            "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"aac\",NAME=\"English\",LANGUAGE=\"en\",CHANNELS=\"6\",URI=\"audio/en-51.m3u8\"\n"
        try expectOnlyMultivariant("E8", at: .rendition(1), in: master(audio + second))
        try expectCleanMultivariant(master(audio + second.replacing("NAME=\"English\"", with: "NAME=\"English 5.1\"")))
    }

    @Test func e8_twoDefaultsInGroup() throws {
        let second =
            "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"aac\",NAME=\"Deutsch\",LANGUAGE=\"de\",DEFAULT=YES,CHANNELS=\"2\",URI=\"audio/de.m3u8\"\n"
        try expectOnlyMultivariant("E8", at: .rendition(1), in: master(audio + second))
        try expectCleanMultivariant(master(audio + second.replacing("DEFAULT=YES", with: "DEFAULT=NO")))
    }

    @Test func e9_iFrameVariantWithAudio() throws {
        let iframe = "#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=300000,CODECS=\"avc1.64001f\",URI=\"iframes.m3u8\""
        try expectOnlyMultivariant(
            "E9", .warning, at: .iFrameVariant(0), in: master(audio, more: iframe + ",AUDIO=\"aac\"\n"))
        try expectCleanMultivariant(master(audio, more: iframe + "\n"))
    }

    @Test func e10_sessionDataWithValueAndURI() throws {
        let data = "#EXT-X-SESSION-DATA:DATA-ID=\"com.example.title\",VALUE=\"Headwater\""
        try expectOnlyMultivariant(
            "E10", at: .tag("EXT-X-SESSION-DATA"), in: master(data + ",URI=\"title.json\"\n" + audio))
        try expectCleanMultivariant(master(data + "\n" + audio))
    }

    @Test func e10_sessionDataRepeatsIDAndLanguage() throws {
        let data = "#EXT-X-SESSION-DATA:DATA-ID=\"com.example.title\",VALUE=\"Headwater\",LANGUAGE=\"en\"\n"
        try expectOnlyMultivariant("E10", at: .tag("EXT-X-SESSION-DATA"), in: master(data + data + audio))
        try expectCleanMultivariant(master(data + data.replacing("\"en\"", with: "\"de\"") + audio))
    }

    @Test func e11_sessionKeyWithMethodNone() throws {
        try expectOnlyMultivariant(
            "E11", at: .tag("EXT-X-SESSION-KEY"), in: master("#EXT-X-SESSION-KEY:METHOD=NONE\n" + audio))
        try expectCleanMultivariant(master("#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI=\"skd://key\"\n" + audio))
    }

    @Test func e12_steeringPathwayMatchesNoVariant() throws {
        let steering = "#EXT-X-CONTENT-STEERING:SERVER-URI=\"/steer\",PATHWAY-ID="
        try expectOnlyMultivariant(
            "E12", at: .tag("EXT-X-CONTENT-STEERING"), in: master(steering + "\"CDN-B\"\n" + audio))
        // Variants without PATHWAY-ID are on the default pathway ".".
        try expectCleanMultivariant(master(steering + "\".\"\n" + audio))
    }
}

/// Text with the largest numbers the parser accepts everywhere: validation and the reload checks
/// must report, never trap.
func hostilePlaylist(segments count: Int = 2_000) -> String {
    let huge = "999999999999.999999"
    var text = """
        #EXTM3U
        #EXT-X-VERSION:1
        #EXT-X-START:TIME-OFFSET=-\(huge)
        #EXT-X-TARGETDURATION:1
        #EXT-X-MEDIA-SEQUENCE:18446744073709551615
        #EXT-X-DISCONTINUITY-SEQUENCE:18446744073709551615
        #EXT-X-PART-INF:PART-TARGET=\(huge)
        #EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=\(huge),HOLD-BACK=\(huge),PART-HOLD-BACK=\(huge)
        #EXT-X-PROGRAM-DATE-TIME:9999-12-31T23:59:59.999+14:00
        #EXT-X-DATERANGE:ID="d",START-DATE="9999-12-31T23:59:59.999+14:00",END-DATE="0001-01-01T00:00:00.000-14:00",DURATION=\(huge),PLANNED-DURATION=\(huge)

        """
    for index in 0..<count {
        if index % 3 == 0 { text += "#EXT-X-DISCONTINUITY\n" }
        text += "#EXT-X-PART:DURATION=\(huge),URI=\"p\(index).ts\"\n"
        let range = index % 2 == 0 ? "18446744073709551615@18446744073709551615" : "18446744073709551615"
        text += "#EXT-X-BYTERANGE:\(range)\n#EXTINF:\(huge),\nmain.ts\n"
    }
    return text + "#EXT-X-PART:DURATION=\(huge),URI=\"last.ts\"\n"
}

@Test func hostileNumbersDoNotTrap() throws {
    // Enough huge EXTINFs after a date near year 9999 to extrapolate past Int64 milliseconds.
    let playlist = try media(hostilePlaylist(segments: 10_000))
    #expect(!PlaylistValidator.validate(playlist).isEmpty)
}
