import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterTesting
import Testing

/// Seeded random pushes: 200 steps × 50 seeds per scenario, every published version checked (see
/// ``PushChecker``). Replay a failing seed with the seed printed in the failure.
@Suite("Push window, randomized")
struct PushWindowFuzzTests {
    enum Scenario: Sendable {
        /// Uploads, playlists and deletes of each rendition arrive in any interleaving, a playlist
        /// sometimes before its segment, renditions lagging each other arbitrarily: the live
        /// rules, B14 and C7 must hold whatever happens.
        case chaotic
        /// One encoder as ffmpeg drives it: each rendition's segment, then its playlist, with
        /// some lost and some renditions a segment or two late; renditions must also stay aligned.
        case steady
    }

    enum Action: CustomStringConvertible {
        case upload(String, SegmentFile)
        case playlist(MediaPlaylist)
        case delete(String)

        var description: String {
            switch self {
            case .upload(let path, let file): "upload \(path) \(PushChecker.source(file.path))"
            case .playlist(let playlist):
                "playlist MS \(playlist.effectiveMediaSequence) "
                    + playlist.segments.map { ($0.discontinuity ? "|" : "") + $0.uri }.joined(separator: " ")
            case .delete(let path): "delete \(path)"
            }
        }
    }

    @Test("chaotic delivery: every version passes the live-update and playlist rules", .cpuBound, arguments: 0..<50)
    func chaotic(seed: UInt64) throws { try run(.chaotic, seed: seed) }

    @Test("steady delivery: the rules hold and renditions stay aligned (C14)", .cpuBound, arguments: 0..<50)
    func steady(seed: UInt64) throws { try run(.steady, seed: seed) }

    func run(_ scenario: Scenario, seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let renditions = Array(["x_0", "x_1", "x_2"].prefix(random.int(1...3)))
        var encoder = FakeEncoder(renditions: renditions)
        encoder.playlistLength = random.int(3...8)
        var window = LiveWindow(
            configuration: .init(
                channel: "live", targetDuration: 2, windowSeconds: random.pick([6, 10, 16]), runTag: "t1"))
        var checker = PushChecker()
        checker.checksAlignment = scenario == .steady
        /// Uploads and playlists not yet delivered, per rendition, in the order the encoder sent them.
        var queues: [String: [Action]] = [:]
        var rangeNumber = 0
        func deliver(_ action: Action, _ rendition: String, _ label: String) throws {
            let outcome: LiveWindow.Outcome
            switch action {
            case .upload(let path, let file):
                outcome = window.segmentStored(path: path, file: file, completedAt: encoder.clock)
            case .playlist(let playlist):
                outcome = try window.playlistReceived(path: "\(rendition).m3u8", playlist, now: encoder.clock)
            case .delete(let path): outcome = window.segmentDeleted(path: path, now: encoder.clock)
            }
            checker.check(&window, after: outcome, now: encoder.clock, "\(label) \(rendition) \(action)")
        }
        for step in 0..<200 where checker.problems.isEmpty {
            let label = "seed \(seed) step \(step)"
            let roll = random.int(0...99)
            // Steady encoders restart now and then, not in a storm (several target durations apart).
            if roll < 3, scenario == .chaotic || encoder.producedInRun >= 8 {
                // The encoder process dies: each request it had in flight completes or is lost.
                for rendition in renditions {
                    for action in queues[rendition] ?? [] where random.chance(0.5) {
                        try deliver(action, rendition, label)
                    }
                    queues[rendition] = []
                }
                // ffmpeg starts over at 0 (reusing names); others number from the clock.
                encoder.restart(at: random.chance(0.7) ? 0 : encoder.next + 1_000)
            } else if roll < 55 {
                var dateRanges: [DateRange] = []
                if random.chance(0.08) {
                    rangeNumber += 1
                    let start = ProgramDateTime(millisecondsSinceEpoch: encoder.clock / 1000)
                    let duration: HLSDuration? = random.chance(0.5) ? .seconds(4) : nil
                    dateRanges = [
                        DateRange(
                            id: "break-\(rangeNumber)", startDate: start, duration: duration,
                            plannedDuration: .seconds(30))
                    ]
                }
                let duration = HLSDuration.milliseconds(Int64(random.int(1_000...2_400)))
                let segment = encoder.produce(duration, discontinuity: random.chance(0.05), dateRanges: dateRanges)
                for rendition in renditions {
                    if !random.chance(0.03) {
                        queues[rendition, default: []].append(
                            .upload(FakeEncoder.uri(rendition, segment.sequence), encoder.file(rendition, segment)))
                    }
                    if !random.chance(0.05) {
                        queues[rendition, default: []].append(.playlist(encoder.playlist(rendition)))
                    }
                    if random.chance(0.5), segment.sequence >= UInt64(encoder.playlistLength) {
                        let old = FakeEncoder.uri(rendition, segment.sequence - UInt64(encoder.playlistLength))
                        queues[rendition, default: []].append(.delete(old))
                    }
                }
            }
            switch scenario {
            case .chaotic:
                // Deliver one request: usually the oldest of a random rendition, sometimes the one
                // after it (a playlist overtaking its segment).
                guard roll >= 55,
                    let rendition = renditions.filter({ !(queues[$0] ?? []).isEmpty }).randomElement(using: &random)
                else { continue }
                let index = random.chance(0.1) && queues[rendition]!.count > 1 ? 1 : 0
                try deliver(queues[rendition]!.remove(at: index), rendition, label)
            case .steady:
                // Every rendition delivers what it has, in order, unless it runs a little late.
                for rendition in renditions.shuffled(using: &random) {
                    guard (queues[rendition]?.count ?? 0) > 6 || !random.chance(0.2) else { continue }
                    for action in queues[rendition] ?? [] { try deliver(action, rendition, label) }
                    queues[rendition] = []
                }
            }
        }
        #expect(checker.problems.isEmpty, "\(checker.problems.prefix(5))")
        #expect(checker.versions > 10, "seed \(seed): only \(checker.versions) versions")
    }
}
