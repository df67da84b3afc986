import Foundation
@testable import HeadwaterConfiguration
import HeadwaterHLS
@testable import HeadwaterRuntime
import HeadwaterSCTE35
@testable import HeadwaterSources
import HeadwaterStitching
import Logging
import NIOCore
import Testing


/// The committed demo ad configuration (Config/ads.yaml) and public directory.
private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// One way an encoder writes a 20 s ad break that starts on segment 4 and ends on segment 14
/// (2 s segments): the tags of the first segment, of each continuation segment (given the elapsed
/// seconds), and of the return.
struct AdMarkerDialect: Sendable, CustomTestStringConvertible {
    let name: String
    let start: String
    let continuation: @Sendable (Int) -> String
    let end: String
    /// The canonical form this one must behave exactly like.
    let canonical: String
    /// The deviation ingest counts for it (`nil`: a form the strict parse reads already).
    var rule: IngestDeviation.Rule? = nil

    var testDescription: String { name }

    static let startSegment = 4
    static let endSegment = 14

    /// splice_insert out of network for 20 s, and the return, as a packager carries them.
    static let out = try! SpliceInfoSection.spliceInsert(
        eventID: 77, outOfNetwork: true, ptsTime: 900_000, duration: 20 * 90_000
    ).base64String()
    static let back = try! SpliceInfoSection.spliceInsert(eventID: 77, outOfNetwork: false, ptsTime: 2_700_000)
        .base64String()

    static let cueOut = AdMarkerDialect(
        name: "canonical EXT-X-CUE-OUT:20.000 / CUE-OUT-CONT:<elapsed>/20 / CUE-IN", start: "#EXT-X-CUE-OUT:20.000",
        continuation: { "#EXT-X-CUE-OUT-CONT:\($0).000/20" }, end: "#EXT-X-CUE-IN", canonical: "")
    static let oatcls = AdMarkerDialect(
        name: "canonical EXT-OATCLS-SCTE35 splice_insert out / in", start: "#EXT-OATCLS-SCTE35:\(out)",
        continuation: { _ in "" }, end: "#EXT-OATCLS-SCTE35:\(back)", canonical: "")

    /// Every dialect a tolerant parse reads, with the canonical form it must match.
    static let all: [AdMarkerDialect] = [
        AdMarkerDialect(
            name: "bare EXT-X-CUE-OUT-CONT", start: "#EXT-X-CUE-OUT:20.000", continuation: { _ in "#EXT-X-CUE-OUT-CONT" },
            end: "#EXT-X-CUE-IN", canonical: cueOut.name, rule: .bareCueOutContinuation),
        AdMarkerDialect(
            name: "EXT-X-CUE-OUT:20,SpliceType=LiveDAI (duration, then parameters)",
            start: "#EXT-X-CUE-OUT:20,SpliceType=LiveDAI", continuation: { "#EXT-X-CUE-OUT-CONT:\($0).000/20" },
            end: "#EXT-X-CUE-IN", canonical: cueOut.name, rule: .cueOutTrailingParameters),
        AdMarkerDialect(
            name: "EXT-X-CUE-OUT:DURATION=20,BREAKID=… and EXT-X-CUE-IN:BREAKID=…",
            start: "#EXT-X-CUE-OUT:DURATION=20,BREAKID=0x4d2", continuation: { "#EXT-X-CUE-OUT-CONT:ElapsedTime=\($0),Duration=20" },
            end: "#EXT-X-CUE-IN:BREAKID=0x4d2", canonical: cueOut.name),
        AdMarkerDialect(
            name: "Adobe EXT-X-CUE:TYPE=SpliceOut / EXT-X-CUE-CONT / EXT-X-CUE:TYPE=SpliceIn",
            start: "#EXT-X-CUE:TYPE=SpliceOut,ID=1,TIME=8.0,DURATION=20.0",
            continuation: { "#EXT-X-CUE-CONT:ID=1,AVAIL-DUR-ELAPSED=\($0).0" }, end: "#EXT-X-CUE:TYPE=SpliceIn,ID=1",
            canonical: cueOut.name, rule: .adobeCue),
        AdMarkerDialect(
            name: "Adobe, quoted values", start: #"#EXT-X-CUE:DURATION="20.0",ID="1",TYPE="SpliceOut",TIME="8.0""#,
            continuation: { #"#EXT-X-CUE-CONT:ID="1",AVAIL-DUR-ELAPSED="\#($0).0""# },
            end: #"#EXT-X-CUE:TYPE="SpliceIn",ID="1""#, canonical: cueOut.name, rule: .adobeCue),
        AdMarkerDialect(
            name: "EXT-X-SPLICEPOINT-SCTE35 splice_insert out / in", start: "#EXT-X-SPLICEPOINT-SCTE35:\(out)",
            continuation: { _ in "" }, end: "#EXT-X-SPLICEPOINT-SCTE35:\(back)", canonical: oatcls.name,
            rule: .splicePoint),
    ]

    static func named(_ name: String) -> AdMarkerDialect { [cueOut, oatcls].first { $0.name == name }! }

    /// The encoder's playlist listing segments `first…last` (PROGRAM-DATE-TIME on the first).
    func playlist(first: Int, last: Int, epochMilliseconds: Int64) -> String {
        let date = ProgramDateTime(millisecondsSinceEpoch: epochMilliseconds + Int64(first) * 2000)
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(first)\n"
        text += "#EXT-X-PROGRAM-DATE-TIME:\(date)\n"
        for n in first...last {
            let tags: String
            switch n {
            case Self.startSegment: tags = start
            case Self.endSegment: tags = end
            case (Self.startSegment + 1)..<Self.endSegment: tags = continuation((n - Self.startSegment) * 2)
            default: tags = ""
            }
            if !tags.isEmpty { text += tags + "\n" }
            text += "#EXTINF:2.000,\nv0-\(n).ts\n"
        }
        return text
    }
}

/// Each ad-marker dialect, pushed by an encoder into a channel with ad insertion, calls the same
/// break (start, planned duration, end) and gives every viewer the same stitched playlists, reload
/// after reload, as the canonical form.
@Suite("Ad-marker dialects on push ingest")
struct DialectBreakTests {
    /// What a run of one dialect produced: the channel's breaks and every stitched version a viewer saw.
    struct Run {
        var breaks: [String] = []
        var stitched: [String] = []
        var deviations: Set<String> = []
    }

    static func run(_ dialect: AdMarkerDialect) throws -> Run {
        let state = NSTemporaryDirectory() + "headwater-dialect-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let clock = ManualWallClock()
        let registry = ChannelRegistry()
        let metrics = OriginMetrics()
        var configuration = HeadwaterConfiguration()
        configuration.server.stateDirectory = state
        configuration.channels = [.init(name: "live", source: .push(.init(targetDuration: 2)), windowSeconds: 8)]
        let ingest = try PushIngest(
            configuration: configuration, registry: registry, clock: clock, logger: Logger(label: "test"),
            environment: ["HEADWATER_INGEST_TOKEN": PushIngestTests.token], metrics: metrics)
        let ads = try AdConfiguration.load(
            file: repository.appendingPathComponent("Config/ads.yaml").path,
            publicDirectory: repository.appendingPathComponent("Public").path, version: 1)
        let ruleBook = AdRuleBook(ads.ruleSet)
        registry.setBreaks(
            ChannelBreaks(channel: "live", schedule: nil, ruleBook: ruleBook, logger: Logger(label: "test"), metrics: metrics),
            for: "live")
        let insertion = AdInsertion(
            registry: registry, ruleBook: ruleBook, signer: try SessionSigner(secret: Array("0123456789abcdef".utf8)),
            adminToken: nil, logger: Logger(label: "test"))

        func put(_ path: String, _ bytes: [UInt8]) throws {
            let upload = try ingest.beginUpload(channel: "live", path: [path], contentLength: bytes.count)
            try ingest.write(bytes, to: upload)
            try ingest.finish(upload)
        }

        let epoch = clock.now() / 1000
        var run = Run()
        var tokens: [String] = []
        for n in 0..<22 {
            try put("v0-\(n).ts", PushIngestTests.segmentBytes)
            let text = dialect.playlist(first: max(0, n - 3), last: n, epochMilliseconds: epoch)
            try put("v0.m3u8", Array(text.utf8))
            clock.advance(seconds: 2)
            let now = clock.now() / 1000
            if n == 2 {
                // Viewers who joined before the break, with fixed session ids (which pick their pods).
                for device in ["tv", "phone", "other"] {
                    let headers = [(name: "X-Playback-Session-Id", value: "viewer-\(device)")]
                    let master = try insertion.startSession(
                        channel: "live", query: [("device", device)], headers: headers, now: now
                    ).get()
                    let multivariant = try PlaylistParser().parseMultivariant(master.bytes)
                    let uri = try #require(multivariant.variants.first?.uri)
                    tokens.append(String(uri.split(separator: "=", maxSplits: 1)[1]))
                }
            }
            for token in tokens {
                let playlist = try insertion.stitchedPlaylist(channel: "live", rendition: "v0", token: token, now: now).get()
                run.stitched.append("segment \(n):\n" + String(decoding: playlist.bytes, as: UTF8.self))
            }
        }
        let breaks = try #require(registry.snapshot(of: "live")?.stitching?.breaks.breaks)
        run.breaks = breaks.map { adBreak in
            let end = adBreak.end.map { "\($0.mediaSequence) \($0.date)" } ?? "open"
            return "\(adBreak.id) start \(adBreak.startMediaSequence) \(adBreak.startDate) planned \(adBreak.plannedDuration) end \(end)"
        }
        run.deviations = Set(
            IngestDeviation.Rule.allCases.filter {
                (OriginMetricsTests.value(metrics, #"headwater_ingest_deviations_total{channel="live",rule="\#($0.rawValue)"}"#) ?? 0) > 0
            }.map(\.rawValue))
        return run
    }

    @Test("the canonical forms call one 20 s break and stitch ads into it")
    func canonical() throws {
        for dialect in [AdMarkerDialect.cueOut, .oatcls] {
            let run = try Self.run(dialect)
            #expect(run.breaks.count == 1, "\(dialect.name): \(run.breaks)")
            #expect(run.breaks.first?.contains("planned 20.000") == true, "\(run.breaks)")
            #expect(run.stitched.contains { $0.contains("/ads/") }, "\(dialect.name): ads are stitched")
            #expect(run.deviations.isEmpty, "\(dialect.name): \(run.deviations)")
        }
    }

    @Test("a dialect calls the same break and stitches the same playlists as its canonical form",
          arguments: AdMarkerDialect.all)
    func sameAsCanonical(_ dialect: AdMarkerDialect) throws {
        let expected = try Self.run(AdMarkerDialect.named(dialect.canonical))
        let run = try Self.run(dialect)
        #expect(run.breaks == expected.breaks)
        #expect(run.stitched.count == expected.stitched.count)
        for (got, want) in zip(run.stitched, expected.stitched) where got != want {
            Issue.record("stitched playlists differ:\n\(got)\n--- canonical:\n\(want)")
            break
        }
        #expect(run.deviations == Set([dialect.rule?.rawValue].compactMap { $0 }), "counted as its own rule")
    }
}
