import HeadwaterHLS
import Testing

private func text(_ lines: [String]) -> [UInt8] { Array((lines.joined(separator: "\n") + "\n").utf8) }

private let head = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:6"]

/// A 12 s break over segments a and b in the canonical Elemental form (H1).
private let canonicalBreak = head + [
    "#EXTINF:6.000,", "before.ts", "#EXT-X-CUE-OUT:12.000", "#EXTINF:6.000,", "a.ts", "#EXT-X-CUE-OUT-CONT:6.000/12.000",
    "#EXTINF:6.000,", "b.ts", "#EXT-X-CUE-IN", "#EXTINF:6.000,", "after.ts",
]

/// The tolerant parse of `dialect`, checked to report `rule` at `lines` and to serialize to `canonical`
/// (which the strict parse reads into the same playlist, unless the tolerated marker is not re-emitted,
/// and the validator passes). Both get an `EXT-X-ENDLIST`, so that a short playlist is not a C5 problem.
private func expectDialect(
    _ dialect: [String], rule: IngestDeviation.Rule, lines: [Int], canonical: [String], reEmitted: Bool = true,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> MediaPlaylist {
    let canonical = canonical + ["#EXT-X-ENDLIST"]
    let (playlist, deviations) = try PlaylistParser().parseTolerating(text(dialect + ["#EXT-X-ENDLIST"]))
    #expect(deviations.map(\.rule) == Array(repeating: rule, count: lines.count), "\(deviations)", sourceLocation: sourceLocation)
    #expect(deviations.map(\.line) == lines, "\(deviations)", sourceLocation: sourceLocation)
    let output = PlaylistSerializer.string(playlist)
    #expect(output == String(decoding: text(canonical), as: UTF8.self), sourceLocation: sourceLocation)
    #expect(try (PlaylistParser().parse(Array(output.utf8)) == playlist) == reEmitted, sourceLocation: sourceLocation)
    #expect(PlaylistValidator.validate(playlist).isEmpty, "\(PlaylistValidator.validate(playlist))", sourceLocation: sourceLocation)
    guard case .media(let media) = playlist else {
        Issue.record("expected a media playlist", sourceLocation: sourceLocation)
        return MediaPlaylist(targetDuration: 0)
    }
    return media
}

/// What a break tracker reads from each segment: (role, planned duration, elapsed) per marker.
private func signals(_ playlist: MediaPlaylist) -> [[String]] {
    playlist.segments.map { segment in
        segment.tags.adMarkers.map { "\($0.role) \($0.plannedDuration?.description ?? "-") \($0.elapsed?.description ?? "-")" }
    }
}

@Suite("Ad-marker dialects read as the canonical markers")
struct AdMarkerDialectTests {
    @Test("the canonical form's signals")
    func canonical() throws {
        let playlist = try PlaylistParser().parseMedia(text(canonicalBreak))
        #expect(signals(playlist) == [[], ["start 12.000 -"], ["continuation 12.000 6.000"], ["end - -"]])
    }

    @Test("a bare EXT-X-CUE-OUT-CONT gets its elapsed time and duration from the open EXT-X-CUE-OUT")
    func bareContinuation() throws {
        var dialect = canonicalBreak
        dialect[8] = "#EXT-X-CUE-OUT-CONT"
        let error = #expect(throws: PlaylistParseError.self) { try PlaylistParser().parse(text(dialect)) }
        #expect(error?.code == .invalidTagValue && error?.line == 9)
        let playlist = try expectDialect(dialect, rule: .bareCueOutContinuation, lines: [9], canonical: canonicalBreak)
        #expect(playlist == (try PlaylistParser().parseMedia(text(canonicalBreak + ["#EXT-X-ENDLIST"]))))
    }

    @Test("a bare EXT-X-CUE-OUT-CONT with no EXT-X-CUE-OUT in the window: inside a break, not re-emitted")
    func bareContinuationMidBreak() throws {
        let dialect = head + ["#EXT-X-CUE-OUT-CONT", "#EXTINF:6.000,", "b.ts", "#EXT-X-CUE-IN", "#EXTINF:6.000,", "after.ts"]
        let playlist = try expectDialect(
            dialect, rule: .bareCueOutContinuation, lines: [4],
            canonical: head + ["#EXTINF:6.000,", "b.ts", "#EXT-X-CUE-IN", "#EXTINF:6.000,", "after.ts"], reEmitted: false)
        #expect(signals(playlist) == [["continuation - -"], ["end - -"]])
    }

    @Test("a bare EXT-X-CUE-OUT without duration: the continuation says ElapsedTime only")
    func bareContinuationWithoutDuration() throws {
        let dialect = head + ["#EXT-X-CUE-OUT", "#EXTINF:6.000,", "a.ts", "#EXT-X-CUE-OUT-CONT", "#EXTINF:4.000,", "b.ts"]
        let playlist = try expectDialect(
            dialect, rule: .bareCueOutContinuation, lines: [7],
            canonical: head + ["#EXT-X-CUE-OUT", "#EXTINF:6.000,", "a.ts", "#EXT-X-CUE-OUT-CONT:ElapsedTime=6.000", "#EXTINF:4.000,", "b.ts"])
        #expect(signals(playlist) == [["start - -"], ["continuation - 6.000"]])
    }

    @Test("EXT-X-CUE-OUT:<duration>,<parameters> (Elemental/MediaConvert) is read in the attribute syntax")
    func cueOutTrailingParameters() throws {
        var dialect = canonicalBreak
        dialect[5] = "#EXT-X-CUE-OUT:12.000,SpliceType=LiveDAI,BreakID=7"
        let error = #expect(throws: PlaylistParseError.self) { try PlaylistParser().parse(text(dialect)) }
        #expect(error?.code == .invalidTagValue && error?.line == 6)
        var canonical = canonicalBreak
        canonical[5] = "#EXT-X-CUE-OUT:DURATION=12.000,SpliceType=LiveDAI,BreakID=7"
        let playlist = try expectDialect(dialect, rule: .cueOutTrailingParameters, lines: [6], canonical: canonical)
        #expect(signals(playlist) == signals(try PlaylistParser().parseMedia(text(canonicalBreak))))
        // Parameters that are not an attribute list: only the duration is kept.
        dialect[5] = "#EXT-X-CUE-OUT:12,LiveDAI"
        #expect(try expectDialect(dialect, rule: .cueOutTrailingParameters, lines: [6], canonical: canonicalBreak)
            == (try PlaylistParser().parseMedia(text(canonicalBreak + ["#EXT-X-ENDLIST"]))))
    }

    @Test("forms the strict parse already reads: DURATION=…,BREAKID=…, CUE-IN with parameters, ElapsedTime=…")
    func strictForms() throws {
        let playlist = try PlaylistParser().parseMedia(text(head + [
            "#EXT-X-CUE-OUT:DURATION=12,BREAKID=0x1A", "#EXTINF:6.000,", "a.ts",
            "#EXT-X-CUE-OUT-CONT:ElapsedTime=6.000,Duration=12,SCTE35=/DAlAAAAAAAAAP/wFAUAAAABf+/+ABt3QP4AEJeeAAEBAQAAbn4gFg==",
            "#EXTINF:6.000,", "b.ts", "#EXT-X-CUE-IN:BREAKID=0x1A", "#EXTINF:6.000,", "c.ts",
        ]))
        #expect(signals(playlist) == [["start 12.000 -"], ["continuation 12.000 6.000"], ["end - -"]])
        #expect(playlist.segments[1].tags.adMarkers[0].scte35Base64 == "/DAlAAAAAAAAAP/wFAUAAAABf+/+ABt3QP4AEJeeAAEBAQAAbn4gFg==")
        #expect(try PlaylistParser().parseTolerating(text(head + ["#EXT-X-CUE-IN:", "#EXTINF:6.000,", "c.ts"])).deviations.isEmpty)
    }

    @Test("Adobe Primetime EXT-X-CUE / EXT-X-CUE-CONT")
    func adobe() throws {
        let dialect = head + [
            "#EXTINF:6.000,", "before.ts", "#EXT-X-CUE:TYPE=SpliceOut,ID=1,TIME=266.198,DURATION=12.0", "#EXTINF:6.000,", "a.ts",
            "#EXT-X-CUE-CONT:ID=1,AVAIL-DUR-ELAPSED=6.0", "#EXTINF:6.000,", "b.ts", "#EXT-X-CUE:TYPE=SpliceIn,ID=1,TIME=278.198",
            "#EXTINF:6.000,", "after.ts",
        ]
        // Legal unknown tags to the strict parse, kept as they are.
        let strict = try PlaylistParser().parseMedia(text(dialect))
        #expect(strict.segments[1].tags.unknownTags.map(\.text) == ["EXT-X-CUE:TYPE=SpliceOut,ID=1,TIME=266.198,DURATION=12.0"])
        var canonical = canonicalBreak
        canonical[5] = "#EXT-X-CUE-OUT:DURATION=12.000,ID=1,TIME=266.198"
        canonical[11] = "#EXT-X-CUE-IN:ID=1,TIME=278.198"
        let playlist = try expectDialect(dialect, rule: .adobeCue, lines: [6, 9, 12], canonical: canonical)
        #expect(signals(playlist) == [[], ["start 12.000 -"], ["continuation 12.000 6.000"], ["end - -"]])
    }

    @Test("MediaLive's Adobe style (quoted values, no CONT, no CUE-IN)")
    func mediaLiveAdobe() throws {
        let dialect = head + [#"#EXT-X-CUE:DURATION="201.467",ID="0",TYPE="SpliceOut",TIME="414.171""#, "#EXTINF:6.000,", "a.ts"]
        let playlist = try expectDialect(
            dialect, rule: .adobeCue, lines: [4],
            canonical: head + ["#EXT-X-CUE-OUT:DURATION=201.467,ID=0,TIME=414.171", "#EXTINF:6.000,", "a.ts"])
        #expect(signals(playlist) == [["start 201.467 -"]])
    }

    @Test("Adobe tags that say too little stay unknown tags")
    func adobeUnreadable() throws {
        let dialect = head + ["#EXT-X-CUE:TYPE=SpliceInsert,ID=a1,TIME=10.5", "#EXTINF:6.000,", "a.ts"]
        let (playlist, deviations) = try PlaylistParser().parseTolerating(text(dialect))
        #expect(deviations.isEmpty)
        #expect(playlist == (try PlaylistParser().parse(text(dialect))))
    }

    @Test("threefive EXT-X-SPLICEPOINT-SCTE35 is read as EXT-OATCLS-SCTE35")
    func splicePoint() throws {
        let cue = "/DA0AAAAAAAA///wBQb+cr0AUAAeAhxDVUVJSAAAjn/PAAGlmbAICAAAAAAsoKGKNAIAmsnRfg=="
        let playlist = try expectDialect(
            head + ["#EXT-X-SPLICEPOINT-SCTE35:\(cue)", "#EXTINF:6.000,", "a.ts"], rule: .splicePoint, lines: [4],
            canonical: head + ["#EXT-OATCLS-SCTE35:\(cue)", "#EXTINF:6.000,", "a.ts"])
        let marker = try #require(playlist.segments[0].tags.adMarkers.first)
        #expect(marker.role == .cue && marker.scte35Base64 == cue)
    }

    @Test("EXT-X-SCTE35 roles from its attributes")
    func scte35Roles() throws {
        let out = try AttributeListParser.parse("CUE-OUT=YES,DURATION=30")
        #expect(AdMarker.scte35(out).role == .start && AdMarker.scte35(out).plannedDuration == HLSDuration(decimal: "30"))
        #expect(AdMarker.scte35(try AttributeListParser.parse("CUE-OUT=CONT")).role == .continuation)
        #expect(AdMarker.scte35(try AttributeListParser.parse("CUE-IN=YES")).role == .end)
        #expect(AdMarker.scte35(try AttributeListParser.parse("CUE=\"/DA0\",CUE-OUT=YES")).role == .cue)
        #expect(AdMarker.asset(value: "CAID=1").role == .metadata)
    }
}
