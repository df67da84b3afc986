import HeadwaterHLS
import HeadwaterStitching
import HeadwaterTesting
import Testing

/// Rendering once per (content version, rendition, window decisions) and splicing the session id in
/// per session (what the origin does) gives every session exactly the bytes of rendering for it.
@Suite("Stitched playlist templates")
struct StitchedTemplateTests {
    /// A placeholder as the origin draws one: unreserved characters only.
    static let placeholder = "Qx7-Lm2_Zr9Tb4Wn8Kc1Hv"

    @Test("sessions with the same window decisions share one template; spliced, it is their render byte for byte", .cpuBound, arguments: 0..<4)
    func sharedTemplatesGiveEachSessionItsBytes(shard: Int) throws {
        var renders = 0
        var shared = 0
        var personal = 0
        for seed in PropertySeed.seeds(40)[(shard * 10)..<((shard + 1) * 10)] {
            var channel = ChannelSimulator(seed: seed)
            var random = SeededRandom(seed: seed ^ 0x7E3A)
            var sessions: [ViewerSession] = []
            for step in 0..<50 {
                channel.step()
                if sessions.count < 6, step % 4 == 0 {
                    // Ids that percent-encoding changes, and plain ones; all devices.
                    let id = random.pick(["s\(seed)-\(step)", "é \(step)/x", "a%b{session}\(step)", "\(step)~.-_"])
                    let device = random.pick(["tv", "phone", ""])
                    sessions.append(
                        ViewerSession(id: id, startDate: channel.now, targeting: device.isEmpty ? [:] : ["device": device]))
                }
                for rendition in channel.options.renditions {
                    let content = channel.retained[rendition]!
                    let options = StitchOptions(cueMarkers: seed % 2 == 0, minimumDuration: channel.minimumWindow)
                    var templates: [WindowDecisions: StitchedPlaylistTemplate] = [:]
                    for session in sessions {
                        let direct = PlaylistSerializer.serialize(
                            try Stitcher.render(
                                content: content, rendition: rendition, breaks: channel.log, session: session,
                                ruleSets: channel.ruleSets, options: options))
                        var decider = SessionDecisions(log: channel.log, session: session, ruleSets: channel.ruleSets)
                        let decisions = try WindowDecisions(breaks: Stitcher.windowBreaks(content: content, breaks: channel.log)) {
                            (index: Int) throws(StitchingError) -> StitchedPod? in
                            try decider.decision(at: index).map(StitchedPod.init)
                        }
                        let template: StitchedPlaylistTemplate
                        if let known = templates[decisions] {
                            template = known
                        } else {
                            template = StitchedPlaylistTemplate(
                                try Stitcher.render(
                                    content: content, rendition: rendition, breaks: channel.log, decisions: decisions,
                                    sessionID: Self.placeholder, ruleSets: channel.ruleSets, options: options),
                                placeholder: Self.placeholder)
                            templates[decisions] = template
                        }
                        let spliced = template.bytes(sessionText: StitchedPlaylistTemplate.sessionText(session.id))
                        #expect(
                            spliced == direct,
                            "seed \(seed) (HEADWATER_SEED=\(seed)) step \(step) \(rendition) session \(session.id)")
                        renders += 1
                        if template.isShared { shared += 1 } else { personal += 1 }
                    }
                }
            }
        }
        // Both kinds occur: creatives with tracking URLs naming the session, and without.
        #expect(renders > 500 && shared > 50 && personal > 20, "\(renders) renders, \(shared) shared, \(personal) personal")
    }

    @Test("a template cuts where the placeholder is, and splices any session id in percent-encoded")
    func cutsAtThePlaceholder() {
        var playlist = MediaPlaylist(targetDuration: 2, mediaSequence: 0)
        var segment = MediaSegment(uri: "/ads/a/0.ts", duration: .seconds(2))
        segment.tags.dateRanges = [
            DateRange(
                id: "b/ad/1", class: "com.headwater.ad", startDate: ProgramDateTime(millisecondsSinceEpoch: 0),
                clientAttributes: [
                    Attribute("X-TRACKING-IMPRESSION", .quoted("https://t.example/i?s=\(Self.placeholder)&x=\(Self.placeholder)"))
                ])
        ]
        playlist.segments = [segment]
        let template = StitchedPlaylistTemplate(playlist, placeholder: Self.placeholder)
        #expect(!template.isShared)
        #expect(template.pieces.filter { $0 == .sessionID }.count == 2)
        let text = String(decoding: template.bytes(sessionText: StitchedPlaylistTemplate.sessionText("a b/é")), as: UTF8.self)
        #expect(text.contains("https://t.example/i?s=a%20b%2F%C3%A9&x=a%20b%2F%C3%A9\""))
        #expect(!text.contains(Self.placeholder))

        playlist.segments[0].tags.dateRanges = []
        let plain = StitchedPlaylistTemplate(playlist, placeholder: Self.placeholder)
        #expect(plain.isShared && plain.pieces.count == 1)
        #expect(plain.bytes(sessionText: Array("anything".utf8)) == PlaylistSerializer.serialize(playlist))
    }

    @Test("key URIs get the session's token where the token placeholder is, tracking URLs its id; neither placeholder is left")
    func splicesTheToken() {
        let tokenPlaceholder = "Tk3-Pq8_Ws1Ye6Ua0Jd5Fg"
        var playlist = MediaPlaylist(targetDuration: 2, mediaSequence: 0)
        var segment = MediaSegment(uri: "/live/c/v0/0.ts", duration: .seconds(2))
        segment.tags.keys = [Key(method: "AES-128", uri: "/keys/c/0.key?session=\(tokenPlaceholder)", iv: Array(repeating: 7, count: 16))]
        segment.tags.dateRanges = [
            DateRange(
                id: "b/ad/1", class: "com.headwater.ad", startDate: ProgramDateTime(millisecondsSinceEpoch: 0),
                clientAttributes: [Attribute("X-TRACKING-IMPRESSION", .quoted("https://t.example/i?s=\(Self.placeholder)"))])
        ]
        playlist.segments = [segment]
        let template = StitchedPlaylistTemplate(playlist, placeholder: Self.placeholder, tokenPlaceholder: tokenPlaceholder)
        #expect(!template.isShared)
        #expect(template.pieces.filter { $0 == .sessionToken }.count == 1 && template.pieces.filter { $0 == .sessionID }.count == 1)
        let text = String(
            decoding: template.bytes(sessionText: Array("viewer-1".utf8), token: Array("AbC.dEf".utf8)), as: UTF8.self)
        #expect(text.contains("URI=\"/keys/c/0.key?session=AbC.dEf\""))
        #expect(text.contains("https://t.example/i?s=viewer-1\""))
        #expect(!text.contains(tokenPlaceholder) && !text.contains(Self.placeholder))
        // Only the token: still personal.
        playlist.segments[0].tags.dateRanges = []
        #expect(!StitchedPlaylistTemplate(playlist, placeholder: Self.placeholder, tokenPlaceholder: tokenPlaceholder).isShared)
    }

    @Test("the window's breaks are those a render consults: from the one covering the head to the last started")
    func windowBreaks() throws {
        var channel = ChannelSimulator(seed: 7)
        for _ in 0..<120 { channel.step() }
        let rendition = channel.options.renditions[0]
        let content = channel.retained[rendition]!
        let range = Stitcher.windowBreaks(content: content, breaks: channel.log)
        let first = content.effectiveMediaSequence
        let last = first + UInt64(content.segments.count - 1)
        for (index, adBreak) in channel.log.breaks.enumerated() {
            let reaches = adBreak.startMediaSequence <= last && (adBreak.end.map { $0.mediaSequence >= first } ?? true)
            #expect(range.contains(index) == reaches, "break \(index) \(adBreak.id) in \(range)")
        }
        #expect(Stitcher.windowBreaks(content: MediaPlaylist(targetDuration: 2, mediaSequence: 0), breaks: channel.log).isEmpty)
    }
}
