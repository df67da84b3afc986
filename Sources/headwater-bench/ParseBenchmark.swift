import ArgumentParser
import HeadwaterHLS

/// Parse and serialize throughput of the playlists the origin handles on every request: a 10-segment
/// live window and a 2-hour, 1,200-segment DVR window with PROGRAM-DATE-TIME on every segment and an
/// ad break (DATERANGE with SCTE-35, CUE-OUT/IN, discontinuities) every 6 minutes.
struct ParseBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract: "Parse and serialize throughput (MB/s, µs and allocations per playlist)."
    )

    @Option(help: "Minimum measuring time per case, in milliseconds.") var milliseconds = 600
    @Option(help: "Only this operation: parse or serialize (for profiling).") var only: String?
    @Option(help: "Run exactly this many iterations of --only on the DVR playlist and print nothing (for callgrind).")
    var iterations: Int?

    func run() throws {
        let cases: [(String, MediaPlaylist)] = [
            ("live 10 segments", Self.livePlaylist(segments: 10)),
            ("DVR 1,200 segments", Self.livePlaylist(segments: 1_200)),
        ]
        if let iterations {
            let playlist = cases[1].1
            let bytes = PlaylistSerializer.serialize(playlist)
            for _ in 0..<iterations {
                if only == "serialize" {
                    blackHole(PlaylistSerializer.serialize(playlist))
                } else {
                    blackHole(try? PlaylistParser().parseMedia(bytes))
                }
            }
            return
        }
        print("headwater-bench parse — HeadwaterHLS parse/serialize, median of 5 rounds")
        print(
            pad("playlist", 20) + pad("bytes", 9) + pad("op", 11) + leftPad("µs/playlist", 12) + leftPad("MB/s", 9)
                + leftPad("allocs", 9))
        for (name, playlist) in cases {
            let bytes = PlaylistSerializer.serialize(playlist)
            // Sanity: the benchmark input round-trips.
            guard (try? PlaylistParser().parseMedia(bytes)) == playlist else {
                throw ValidationError("benchmark playlist does not round-trip")
            }
            var results: [(String, Measurement)] = []
            if only == nil || only == "parse" {
                results.append(("parse", Measurement.run(minimumDuration: .milliseconds(milliseconds)) {
                    blackHole(try? PlaylistParser().parseMedia(bytes))
                }))
            }
            if only == nil || only == "serialize" {
                results.append(("serialize", Measurement.run(minimumDuration: .milliseconds(milliseconds)) {
                    blackHole(PlaylistSerializer.serialize(playlist))
                }))
            }
            for (op, m) in results {
                let mbPerSecond = Double(bytes.count) / m.nanosecondsPerIteration * 1e9 / 1e6
                print(
                    pad(name, 20) + pad(String(bytes.count), 9) + pad(op, 11)
                        + leftPad(format(m.nanosecondsPerIteration / 1000, decimals: 1), 12)
                        + leftPad(format(mbPerSecond, decimals: 0), 9)
                        + leftPad(format(m.allocationsPerIteration, decimals: 0), 9))
            }
        }
    }

    /// A realistic live playlist: 6 s target, 6.006 s segments, PDT on each segment, and an ad break
    /// every 60 segments (6 minutes): DATERANGE with SCTE35-OUT, CUE-OUT, CUE-OUT-CONT on each ad
    /// segment, then CUE-IN, the closing DATERANGE with DURATION and SCTE35-IN, discontinuities around.
    static func livePlaylist(segments count: Int) -> MediaPlaylist {
        let cueOut: [UInt8] = Array(
            hex: "FC302F000000000000FFFFF014054800008F7FEFFE7369C02EFE0052CCF500000000000A0008435545490000013562DBA30A")
        var playlist = MediaPlaylist(targetDuration: 6, mediaSequence: 1_234_567)
        playlist.version = 6
        playlist.discontinuitySequence = 4_321
        let start = ProgramDateTime(iso8601: "2026-11-21T12:00:00.000Z")!
        var date = start
        let segmentDuration = HLSDuration(microseconds: 6_006_000)
        for index in 0..<count {
            var segment = MediaSegment(
                uri: "video/720p/segment-\(1_234_567 + index).ts", duration: segmentDuration)
            segment.programDateTime = date
            let phase = index % 60
            let breakID = "break-\(index / 60)"
            if phase == 50 {
                segment.discontinuity = true
                segment.dateRanges = [
                    DateRange(
                        id: breakID, class: "com.headwater.ad-break", startDate: date,
                        plannedDuration: .seconds(60), scte35Out: cueOut)
                ]
                segment.adMarkers = [.cueOut(CueOut(duration: .seconds(60)))]
                segment.uri = "ads/pod-7/720p/ad-\(index).ts"
            } else if phase > 50 {
                segment.adMarkers = [
                    .cueOutContinuation(
                        CueOutContinuation(elapsed: segmentDuration + HLSDuration(microseconds: Int64(phase - 51) * 6_006_000), duration: .seconds(60)))
                ]
                segment.uri = "ads/pod-7/720p/ad-\(index).ts"
            } else if phase == 0 && index > 0 {
                segment.discontinuity = true
                segment.adMarkers = [.cueIn(value: nil)]
                segment.dateRanges = [
                    DateRange(
                        id: "break-\(index / 60 - 1)", startDate: nil, duration: HLSDuration(microseconds: 60_060_000),
                        scte35In: cueOut)
                ]
            }
            playlist.segments.append(segment)
            date = date.adding(segmentDuration)
        }
        return playlist
    }
}

extension Array where Element == UInt8 {
    init(hex: String) {
        var bytes: [UInt8] = []
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            func value(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : (c & 0xDF) - 55 }
            bytes.append(value(high) << 4 | value(low))
        }
        self = bytes
    }
}
