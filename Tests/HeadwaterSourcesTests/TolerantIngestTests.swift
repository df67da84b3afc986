import Foundation
@testable import HeadwaterConfiguration
import HeadwaterHLS
@testable import HeadwaterLiveWindow
@testable import HeadwaterRuntime
@testable import HeadwaterSources
import HeadwaterTesting
import Logging
import NIOCore
import Testing


/// An encoder whose live playlist carries every tolerated media-playlist deviation at once: the
/// PROGRAM-DATE-TIME before MEDIA-SEQUENCE and TARGETDURATION, a TAB as EXTINF title, a space after
/// a comma in a DATERANGE, lower-case hex in it, and trailing whitespace on a URI line and a tag.
enum DeviantEncoder {
    static let rules: Set<IngestDeviation.Rule> = [
        .lateSequenceTag, .lateHeaderTag, .extinfTitleWhitespace, .attributeWhitespace, .lowercaseHex, .lineWhitespace,
    ]

    /// 2026-11-21T17:36:00Z in ms: the date of segment 0.
    static let epoch: Int64 = 1_795_282_560_000

    /// Segments `x_0{first}.ts` … (2 s each); segment 1, while listed, carries the DATERANGE.
    static func playlist(first: Int, count: Int) -> String {
        let date = ProgramDateTime(millisecondsSinceEpoch: epoch + Int64(first) * 2000)
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-PROGRAM-DATE-TIME:\(date)\n"
        text += "#EXT-X-MEDIA-SEQUENCE:\(first)\n#EXT-X-TARGETDURATION:2\n"
        for n in first..<(first + count) {
            if n == 1 {
                let start = ProgramDateTime(millisecondsSinceEpoch: epoch + 2000)
                text += "#EXT-X-DATERANGE:ID=\"promo\", START-DATE=\"\(start)\", X-COM-EXAMPLE-ID=0x1a2b\n"
            }
            text += n % 2 == 0 ? "#EXTINF:2.000,\t\nx_0\(n).ts \n" : "#EXTINF:2.000, \nx_0\(n).ts\n"
        }
        return text
    }
}

/// Push and directory ingest of playlists that deviate from RFC 8216bis the way encoders do: the
/// channel goes live, serves the canonical form (nothing tolerated is re-emitted, the validator finds
/// nothing), every deviation is counted in `headwater_ingest_deviations_total{channel,rule}` (all
/// rules exported from 0) and each rule is logged once per channel, not per playlist or reload.
@Suite("Tolerant ingest")
final class TolerantIngestTests {
    let clock = ManualWallClock()
    let registry = ChannelRegistry()
    let metrics = OriginMetrics()
    let log = LogRecorder()
    let state = NSTemporaryDirectory() + "headwater-tolerant-\(UUID().uuidString)"

    deinit { try? FileManager.default.removeItem(atPath: state) }

    static let thirdParty = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("HeadwaterHLSTests/Fixtures/thirdparty")

    static func thirdParty(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: thirdParty.appendingPathComponent(name)))
    }

    func pushIngest(targetDuration: Int = 2, windowSeconds: Int = 6) throws -> PushIngest {
        var configuration = HeadwaterConfiguration()
        configuration.server.stateDirectory = state
        configuration.channels = [
            .init(name: "live", source: .push(.init(targetDuration: targetDuration)), windowSeconds: windowSeconds)
        ]
        return try PushIngest(
            configuration: configuration, registry: registry, clock: clock, logger: log.logger,
            environment: ["HEADWATER_INGEST_TOKEN": PushIngestTests.token], metrics: metrics)
    }

    func put(_ ingest: PushIngest, _ path: String, _ bytes: [UInt8]) throws {
        let upload = try ingest.beginUpload(
            channel: "live", path: path.split(separator: "/").map(String.init), contentLength: bytes.count)
        try ingest.write(bytes, to: upload)
        try ingest.finish(upload)
    }

    /// The served media playlist of `rendition`, as bytes.
    func served(_ rendition: String = "x_0") throws -> [UInt8] {
        let rendered = try #require(registry.snapshot(of: "live")?.mediaPlaylists[rendition])
        return Array(rendered.body.readableBytesView)
    }

    /// What a player gets is canonical: strict parse, nothing to tolerate, no validator issue at all.
    func expectCanonical(_ bytes: [UInt8], segments: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let playlist = try PlaylistParser().parseMedia(bytes)
        #expect(playlist.segments.count == segments, sourceLocation: sourceLocation)
        #expect(try PlaylistParser().parseTolerating(bytes).deviations.isEmpty, sourceLocation: sourceLocation)
        let issues = PlaylistValidator.validate(playlist)
        #expect(issues.isEmpty, "\(issues)\n\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
    }

    func deviations(_ rule: IngestDeviation.Rule) -> Double? {
        OriginMetricsTests.value(metrics, #"headwater_ingest_deviations_total{channel="live",rule="\#(rule.rawValue)"}"#)
    }

    /// Every rule has a series from the start; those in `seen` counted something, the others are 0.
    func expectCounted(_ seen: Set<IngestDeviation.Rule>, sourceLocation: SourceLocation = #_sourceLocation) {
        for rule in IngestDeviation.Rule.allCases {
            let value = deviations(rule)
            let shown = "\(rule.rawValue): \(value.map { "\($0)" } ?? "absent")"
            if seen.contains(rule) {
                #expect((value ?? 0) > 0, "\(shown)", sourceLocation: sourceLocation)
            } else {
                #expect(value == 0, "\(shown)", sourceLocation: sourceLocation)
            }
        }
    }

    /// Warnings naming `rule` (each names the rule, the file and the line).
    func warnings(_ rule: IngestDeviation.Rule) -> [LogRecorder.Record] {
        log.snapshot.filter { $0.level == .warning && $0.message.contains(rule.rawValue) }
    }

    @Test("every rule's series exists at 0 as soon as a push channel is configured")
    func seriesStartAtZero() throws {
        _ = try pushIngest()
        expectCounted([])
    }

    @Test("push: a deviant encoder goes live, is served canonical, counted per rule and logged once per rule across reloads")
    func pushDeviantEncoder() throws {
        let ingest = try pushIngest()
        var configuration = HeadwaterConfiguration()
        configuration.server.stateDirectory = state
        configuration.channels = [.init(name: "live", source: .push(.init(targetDuration: 2)), windowSeconds: 6)]
        for n in 0..<6 {
            clock.advance(seconds: 2)
            try put(ingest, "x_0\(n).ts", PushIngestTests.segmentBytes)
            try put(ingest, "x_0.m3u8", Array(DeviantEncoder.playlist(first: max(0, n - 3), count: min(n + 1, 4)).utf8))
            if n == 3 { try ingest.reconfigure(configuration, slate: nil) }  // a reload changes nothing logged
        }
        #expect(registry.snapshot(of: "live")?.state == .live)
        try expectCanonical(try served(), segments: 4)
        expectCounted(DeviantEncoder.rules)
        for rule in DeviantEncoder.rules {
            let logged = warnings(rule)
            #expect(logged.count == 1, "\(rule.rawValue): \(log.lines)")
            #expect(logged.first?.message.hasPrefix("x_0.m3u8:") == true, "names the file and line: \(logged.first?.message ?? "")")
        }
    }

    @Test("push: a broken third-party playlist is refused with 422 and its line, counted, and the window stays")
    func pushRefusesBroken() throws {
        let ingest = try pushIngest()
        for n in 0..<3 {
            clock.advance(seconds: 2)
            try put(ingest, "x_0\(n).ts", PushIngestTests.segmentBytes)
            try put(ingest, "x_0.m3u8", Array(DeviantEncoder.playlist(first: 0, count: n + 1).utf8))
        }
        let before = try served()
        do {
            try put(ingest, "x_0.m3u8", try Self.thirdParty("videojs-missingExtinf.m3u8"))
            Issue.record("a URI without EXTINF was accepted")
        } catch let error as IngestRefusal {
            #expect(error.kind == .unprocessable && error.message.contains("line 8"), "\(error.message)")
        }
        #expect(try served() == before)
        #expect(ingest.counters[.malformedPlaylist] == 1)
        #expect(
            OriginMetricsTests.value(metrics, #"headwater_ingest_rejected_total{channel="live",reason="malformed_playlist"}"#) == 1)
    }

    @Test("push: a third-party playlist with its header tags after a segment tag goes live and is served canonical")
    func pushThirdPartyLateHeader() throws {
        // grafov/m3u8's sample: TARGETDURATION after PROGRAM-DATE-TIME, four segments in a subfolder.
        let bytes = try Self.thirdParty("grafov-media-playlist-with-program-date-time.m3u8")
        let ingest = try pushIngest(targetDuration: 15, windowSeconds: 60)
        guard case .media(let listed) = try PlaylistParser().parseTolerating(bytes).playlist else {
            Issue.record("not a media playlist")
            return
        }
        for segment in listed.segments {
            clock.advance(seconds: 14)
            try put(ingest, segment.uri, PushIngestTests.segmentBytes)
        }
        try put(ingest, "stream.m3u8", bytes)
        #expect(registry.snapshot(of: "live")?.state == .live)
        try expectCanonical(try served("stream"), segments: 4)
        expectCounted([.lateHeaderTag])
    }

    @Test("directory: a packager writing deviant playlists goes live, is served canonical, counted and logged once per rule")
    func directoryDeviantPackager() throws {
        let packager = try FakePackager()
        defer { packager.remove() }
        let directory = HeadwaterConfiguration.Channel.DirectorySource(
            path: packager.directory, targetDuration: 2, pollIntervalMilliseconds: 50)
        let channel = HeadwaterConfiguration.Channel(name: "live", source: .directory(directory), windowSeconds: 6)
        let source = try DirectoryChannelSource(
            channel: channel, source: directory, stateDirectory: state, runTag: "t", registry: registry, clock: clock,
            logger: log.logger, watch: .polling, metrics: metrics)
        expectCounted([])
        for n in 0..<6 {
            clock.advance(seconds: 2)
            try packager.write("x_0\(n).ts", FakePackager.segment)
            try packager.write("x_0.m3u8", DeviantEncoder.playlist(first: max(0, n - 3), count: min(n + 1, 4)))
            source.scan()
        }
        #expect(registry.snapshot(of: "live")?.state == .live)
        #expect(source.counters[.malformedPlaylist] == 0)
        try expectCanonical(try served(), segments: 4)
        expectCounted(DeviantEncoder.rules)
        for rule in DeviantEncoder.rules { #expect(warnings(rule).count == 1, "\(rule.rawValue): \(log.lines)") }
        #expect(source.deviations.loggedRules == DeviantEncoder.rules)
    }

    @Test("directory: a third-party playlist with late header tags goes live where the strict parse kept it at 503")
    func directoryThirdParty() throws {
        let packager = try FakePackager()
        defer { packager.remove() }
        let bytes = try Self.thirdParty("grafov-media-playlist-with-program-date-time.m3u8")
        #expect(throws: PlaylistParseError.self) { try PlaylistParser().parse(bytes) }
        let directory = HeadwaterConfiguration.Channel.DirectorySource(
            path: packager.directory, targetDuration: 15, pollIntervalMilliseconds: 50)
        let channel = HeadwaterConfiguration.Channel(name: "live", source: .directory(directory), windowSeconds: 60)
        let source = try DirectoryChannelSource(
            channel: channel, source: directory, stateDirectory: state, runTag: "t", registry: registry, clock: clock,
            logger: log.logger, watch: .polling, metrics: metrics)
        guard case .media(let listed) = try PlaylistParser().parseTolerating(bytes).playlist else {
            Issue.record("not a media playlist")
            return
        }
        for segment in listed.segments { try packager.write(segment.uri, FakePackager.segment) }
        try packager.write("stream.m3u8", bytes)
        clock.advance(seconds: 56)
        source.scan()
        #expect(registry.snapshot(of: "live")?.state == .live)
        #expect(source.counters[.malformedPlaylist] == 0)
        try expectCanonical(try served("stream"), segments: 4)
        expectCounted([.lateHeaderTag])
    }

    /// The tolerated media playlists of the corpus a packager's folder can hold (every file relative)
    /// and that last the 3 target durations a channel needs to go live, with the validator rules
    /// their content itself breaks (MANIFEST.tsv's output-issues). Left out: the two Comcast
    /// variants (absolute segment URLs), `videojs-whiteSpace` (absolute URLs) and `videojs-fmp4`
    /// (12 s at a 6 s target duration).
    static let corpusMediaPlaylists: [CorpusPlaylist] = {
        guard let text = try? String(contentsOf: thirdParty.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8)
        else { return [] }
        return text.split(separator: "\n").compactMap { row -> CorpusPlaylist? in
            let fields = row.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5, fields[1] == "tolerated",
                let bytes = try? thirdParty(fields[0]),
                case .media(let media)? = try? PlaylistParser().parseTolerating(bytes).playlist,
                media.segments.allSatisfy({ !$0.uri.contains("://") }),
                media.duration >= .seconds(Int64(3 * media.targetDuration))
            else { return nil }
            let issues = fields[3] == "-" ? [] : Set(fields[3].split(separator: ",").map(String.init))
            return CorpusPlaylist(name: fields[0], contentIssues: issues)
        }
    }()

    struct CorpusPlaylist: Sendable, CustomTestStringConvertible {
        let name: String
        let contentIssues: Set<String>
        var testDescription: String { name }
    }

    @Test("directory: each tolerated third-party media playlist goes live and is served canonical", arguments: corpusMediaPlaylists)
    func directoryCorpus(_ corpus: CorpusPlaylist) throws {
        let name = corpus.name
        let bytes = try Self.thirdParty(name)
        guard case .media(let listed) = try PlaylistParser().parseTolerating(bytes).playlist else {
            Issue.record("not a media playlist")
            return
        }
        let packager = try FakePackager()
        defer { packager.remove() }
        // Every file it names, long enough for every byte range into it.
        var lengths: [String: Int] = [:]
        for segment in listed.segments {
            let end = segment.byteRange.map { Int(($0.offset ?? 0) + $0.length) } ?? 0
            lengths[segment.uri] = max(lengths[segment.uri] ?? 0, end, FakePackager.segment.count)
            if let map = segment.tags.map {
                let mapEnd = map.byteRange.map { Int(($0.offset ?? 0) + $0.length) } ?? 0
                lengths[map.uri] = max(lengths[map.uri] ?? 0, mapEnd, 1024)
            }
        }
        for (uri, length) in lengths {
            var file = FakePackager.segment
            while file.count < length { file += FakePackager.segment }
            try packager.write(uri, file)
        }
        try packager.write("stream.m3u8", bytes)
        let directory = HeadwaterConfiguration.Channel.DirectorySource(
            path: packager.directory, targetDuration: listed.targetDuration, pollIntervalMilliseconds: 50)
        let channel = HeadwaterConfiguration.Channel(
            name: "live", source: .directory(directory), windowSeconds: 10 * listed.targetDuration)
        let source = try DirectoryChannelSource(
            channel: channel, source: directory, stateDirectory: state, runTag: "t", registry: registry, clock: clock,
            logger: log.logger, watch: .polling, metrics: metrics)
        clock.advance(seconds: 1)
        source.scan()
        #expect(source.counters[.malformedPlaylist] == 0, "\(log.lines)")
        #expect(registry.snapshot(of: "live")?.state == .live, "\(log.lines)")
        let served = try served("stream")
        let playlist = try PlaylistParser().parseMedia(served)
        #expect(try PlaylistParser().parseTolerating(served).deviations.isEmpty)
        // Nothing but what the content itself breaks (a 21-digit IV is served as the encoder wrote it).
        let issues = PlaylistValidator.validate(playlist).filter { !corpus.contentIssues.contains($0.rule) }
        #expect(issues.isEmpty, "\(issues)\n\(String(decoding: served, as: UTF8.self))")
    }
}
