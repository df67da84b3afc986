import HeadwaterHLS
import Testing

@Suite("Parser limits")
struct LimitsTests {
    static func limits(_ configure: (inout PlaylistParser.Limits) -> Void) -> PlaylistParser.Limits {
        var limits = PlaylistParser.Limits()
        configure(&limits)
        return limits
    }

    @Test("the defaults")
    func defaults() {
        let limits = PlaylistParser.Limits.default
        #expect(limits.maxBytes == 16 << 20)
        #expect(limits.maxLineLength == 64 << 10)
        #expect(limits.maxSegments == 100_000)
        #expect(limits.maxAttributes == 256)
        #expect(limits.maxTagsPerSegment == 1_000)
        #expect(PlaylistParser().limits == .default)
    }

    @Test("a document larger than maxBytes fails at line 1; one of exactly maxBytes parses")
    func documentSize() throws {
        let text = Array((mediaHeader + ["#EXTINF:6,", "a.ts"]).joined(separator: "\n").utf8)
        let exact = Self.limits { $0.maxBytes = text.count }
        #expect(throws: Never.self) { try PlaylistParser(limits: exact).parse(text) }
        expectParseError(text, .limitExceeded, line: 1, limits: Self.limits { $0.maxBytes = text.count - 1 })
    }

    @Test("a line longer than maxLineLength fails at that line; CR of CRLF does not count")
    func lineLength() throws {
        let uri = String(repeating: "a", count: 100)
        let limits = Self.limits { $0.maxLineLength = 100 }
        #expect(throws: Never.self) {
            try PlaylistParser(limits: limits).parse((mediaHeader + ["#EXTINF:6,", uri]).joined(separator: "\r\n") + "\r\n")
        }
        expectParseError(mediaHeader + ["#EXTINF:6,", uri + "a"], .limitExceeded, line: 4, limits: limits)
        expectParseError(mediaHeader + ["#EXTINF:6," + uri, "a.ts"], .limitExceeded, line: 3, limits: limits)
        let short = Self.limits { $0.maxLineLength = 6 }
        expectParseError(["#EXTM3U", "#EXT-X-TARGETDURATION:6"], .limitExceeded, line: 1, limits: short)
    }

    @Test("more segments than maxSegments fail at the URI line of the first one too many")
    func segmentCount() throws {
        let three = mediaHeader + (0..<3).flatMap { ["#EXTINF:6,", "s\($0).ts"] }
        let limits = Self.limits { $0.maxSegments = 3 }
        #expect(try PlaylistParser(limits: limits).parseMedia(Array((three.joined(separator: "\n")).utf8)).segments.count == 3)
        expectParseError(three + ["#EXTINF:6,", "s3.ts"], .limitExceeded, line: 10, limits: limits)
    }

    @Test("more variants and renditions than maxSegments fail at the line of the first one too many")
    func variantCount() {
        let limits = Self.limits { $0.maxSegments = 2 }
        expectParseError(
            ["#EXTM3U", #"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="a""#, "#EXT-X-STREAM-INF:BANDWIDTH=1", "a.m3u8", "#EXT-X-STREAM-INF:BANDWIDTH=2", "b.m3u8"],
            .limitExceeded, line: 6, limits: limits)
        expectParseError(
            ["#EXTM3U", #"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="a""#, #"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="b""#, #"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="c""#],
            .limitExceeded, line: 4, limits: limits)
    }

    @Test("more attributes than maxAttributes in one list fail with limit-exceeded at that line")
    func attributeCount() throws {
        let limits = Self.limits { $0.maxAttributes = 4 }
        let four = #"#EXT-X-DATERANGE:ID="a",START-DATE="2026-11-21T17:36:00Z",X-A=1,X-B=2"#
        #expect(throws: Never.self) { try PlaylistParser(limits: limits).parse((mediaHeader + [four]).joined(separator: "\n")) }
        expectParseError(mediaHeader + [four + ",X-C=3"], .limitExceeded, line: 3, limits: limits)
        expectParseError(mediaHeader + [#"#EXT-X-SCTE35:CUE="a",B=1,C=2,D=3,E=4"#], .limitExceeded, line: 3, limits: limits)
        expectParseError(["#EXTM3U", "#EXT-X-STREAM-INF:BANDWIDTH=1,A=1,B=2,C=3,D=4", "a.m3u8"], .limitExceeded, line: 2, limits: limits)
    }

    @Test("more tags than maxTagsPerSegment on one segment fail at the first one too many")
    func tagsPerSegment() throws {
        let limits = Self.limits { $0.maxTagsPerSegment = 3 }
        // DISCONTINUITY, one unknown tag and EXTINF: three tags.
        #expect(throws: Never.self) {
            try PlaylistParser(limits: limits).parse((mediaHeader + ["#EXT-X-DISCONTINUITY", "#EXT-X-A", "#EXTINF:6,", "a.ts"]).joined(separator: "\n"))
        }
        expectParseError(
            mediaHeader + ["#EXT-X-DISCONTINUITY", "#EXT-X-A", "#EXT-X-B", "#EXTINF:6,", "a.ts"], .limitExceeded, line: 6, limits: limits)
        // The count starts again for every segment…
        let repeated = (0..<5).flatMap { ["#EXT-X-A", "#EXT-X-B", "#EXTINF:6,", "s\($0).ts"] }
        #expect(throws: Never.self) {
            try PlaylistParser(limits: limits).parse((mediaHeader + ["#EXTINF:6,", "first.ts"] + repeated).joined(separator: "\n"))
        }
        // …and applies to the tags after the last segment.
        expectParseError(
            mediaHeader + ["#EXTINF:6,", "a.ts", "#EXT-X-A", "#EXT-X-B", "#EXT-X-C", "#EXT-X-D"], .limitExceeded, line: 8, limits: limits)
    }

    @Test("the default limits accept a two-hour VOD playlist of 1 s segments")
    func largeButReasonable() throws {
        let segments = (0..<7_200).map { "#EXTINF:1.001,\nsegment_\($0).ts" }.joined(separator: "\n")
        let text = (mediaHeader + ["#EXT-X-PLAYLIST-TYPE:VOD", segments, "#EXT-X-ENDLIST"]).joined(separator: "\n")
        #expect(try PlaylistParser().parseMedia(Array(text.utf8)).segments.count == 7_200)
    }
}
