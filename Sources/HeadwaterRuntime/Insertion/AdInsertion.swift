public import HeadwaterHLS
public import HeadwaterLiveWindow
public import HeadwaterStitching
public import Logging
import NIOConcurrencyHelpers
public import NIOCore

/// Server-side ad insertion as the HTTP layer asks for it: starting viewer sessions and serving each
/// viewer's stitched media playlist from the channel's current snapshot. Nothing per session needs
/// to be stored: the session is the signed token in the playlist URLs, and the stitched playlist is
/// a pure function of (snapshot, break log, session, pinned rule sets) — so any node serves a
/// session the same bytes. What is cached is bounded and recomputed the same when missing: recently
/// verified sessions with their latest pod decisions (``SessionCache``), and per channel version the
/// playlists prepared for each distinct set of pods (``StitchCache``).
public final class AdInsertion: Sendable {
    /// Why a request cannot be answered (the kinds used here: bad request, unauthorized, forbidden,
    /// not found, conflict, unavailable, failed).
    public typealias Refusal = HeadwaterLiveWindow.Refusal

    /// A rendered stitched (or session) playlist, the target duration its errors cache by, and the
    /// ad tracking its serving makes due.
    public struct Playlist: Sendable {
        private enum Body: Sendable {
            case bytes([UInt8])
            /// A prepared stitched playlist and what the session puts in its placeholders.
            case stitched(PreparedStitch, PreparedStitch.Personal)
        }

        private let body: Body
        public var targetDuration: Int?
        /// Where it ends in segments and parts, for a blocking reload (`nil`: answer at once).
        public var edge: PlaylistEdge? {
            if case .stitched(let prepared, _) = body { return prepared.edge }
            return nil
        }
        /// What serving this playlist's body to its session makes due (the ``StitchObserver``'s
        /// action for it), for whoever writes the response to perform once the body is written;
        /// `nil` when nothing is (a session's multivariant playlist, no observer, nothing to track).
        public let dueTracking: DueTracking?

        init(bytes: [UInt8], targetDuration: Int?) {
            self.body = .bytes(bytes)
            self.targetDuration = targetDuration
            self.dueTracking = nil
        }

        init(_ prepared: PreparedStitch, session: StitchedSession, token: String) {
            self.body = .stitched(prepared, PreparedStitch.Personal(sessionText: session.text, token: Array(token.utf8)))
            self.targetDuration = prepared.targetDuration
            self.dueTracking = prepared.onServe.map { DueTracking(action: $0, session: session) }
        }

        /// The length of the identity body.
        public var count: Int {
            switch body {
            case .bytes(let bytes): bytes.count
            case .stitched(let prepared, let personal): prepared.count(personal)
            }
        }

        /// The identity body.
        public var bytes: [UInt8] {
            switch body {
            case .bytes(let bytes): bytes
            case .stitched(let prepared, let personal): Array(buffer: prepared.identityBody(personal))
            }
        }

        /// The identity body, for a response.
        public func identityBody() -> ByteBuffer {
            switch body {
            case .bytes(let bytes): ByteBuffer(bytes: bytes)
            case .stitched(let prepared, let personal): prepared.identityBody(personal)
            }
        }

        /// The body as one gzip member; `nil` only if zlib fails.
        public func gzipBody() -> ByteBuffer? {
            switch body {
            case .bytes(let bytes): Gzip.compressPerResponse(bytes).map { ByteBuffer(bytes: $0) }
            case .stitched(let prepared, let personal): prepared.gzipBody(personal)
            }
        }
    }

    /// The effect of serving a stitched playlist to a session, as a value: the ``StitchObserver``'s
    /// action for the playlist (server-side ad tracking: the impression and quartile beacons it
    /// lists) and the session it was served to. Deciding the playlist performs nothing; the HTTP
    /// layer calls ``perform()`` once the response's body has been written — not for a `HEAD`, a
    /// `304` or an error, nor when the connection is gone before the body is out.
    public struct DueTracking: Sendable {
        let action: @Sendable (StitchedSession) -> Void
        /// The session served.
        public let session: StitchedSession

        /// Runs the action for the session (the dispatcher deduplicates what it already fired).
        public func perform() { action(session) }
    }

    /// Server-side ad tracking (``init(registry:ruleBook:signer:sessionMaxAge:adminToken:logger:onStitched:)``):
    /// called once per distinct stitched playlist — a rendition of a channel version, as one set of pod
    /// decisions renders it — with that playlist as rendered for a placeholder session id. It returns
    /// what to do each time a session is served that playlist (`nil`: nothing): not done by
    /// ``stitchedPlaylist(channel:rendition:token:now:)``, which returns it with the playlist
    /// (``Playlist/dueTracking``) for the HTTP layer to perform once the body is written. The
    /// session's ``StitchedSession/personalize(_:)`` turns text taken from the playlist (tracking
    /// URLs) into the session's own.
    public typealias StitchObserver =
        @Sendable (_ playlist: MediaPlaylist) -> (@Sendable (_ session: StitchedSession) -> Void)?

    private let registry: ChannelRegistry
    private let adminToken: [UInt8]?
    private let ruleBook: AdRuleBook
    private let signer: SessionSigner
    private let sessionMaxAge: Duration
    private let options: NIOLockedValueBox<[String: StitchOptions]>
    private let logger: Logger
    private let onStitched: StitchObserver?
    private let metrics: OriginMetrics
    /// Recently verified sessions and their latest pods (internal for tests: it must stay bounded).
    let sessions = SessionCache()
    /// The session id stitched playlists are prepared for, then replaced by each session's: random,
    /// so that no content or configuration can contain it (``StitchedPlaylistTemplate``).
    private let placeholder: String
    private let placeholderBytes: [UInt8]
    /// The session token stitched playlists are prepared for (key URIs of encrypted channels), then
    /// replaced by each session's: random like ``placeholder``.
    private let tokenPlaceholder: String
    /// The first key frame of every creative segment ever configured, by served URL: old rule-set
    /// versions stay in use by the breaks that pinned them, so a reload only adds.
    private let creativeKeyFrames = NIOLockedValueBox<[String: KeyFrameLocation]>([:])

    /// - Parameters:
    ///   - sessionMaxAge: how long a session token stays valid.
    ///   - adminToken: the bearer token `POST /admin/…` requires; `nil` disables the admin API.
    ///   - onStitched: server-side ad tracking (``StitchObserver``).
    public init(
        registry: ChannelRegistry, ruleBook: AdRuleBook, signer: SessionSigner, sessionMaxAge: Duration = SessionSigner.defaultMaxAge,
        adminToken: String?, logger: Logger, onStitched: StitchObserver? = nil, metrics: OriginMetrics = .shared
    ) {
        self.metrics = metrics
        self.registry = registry
        self.adminToken = adminToken.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.ruleBook = ruleBook
        self.signer = signer
        self.sessionMaxAge = sessionMaxAge
        self.options = NIOLockedValueBox([:])
        self.logger = logger
        self.onStitched = onStitched
        var generator = SystemRandomNumberGenerator()
        // 128 random bits in base64url: unreserved characters only, as a placeholder must be.
        self.placeholder = SessionToken.randomSessionID(using: &generator)
        self.placeholderBytes = Array(placeholder.utf8)
        self.tokenPlaceholder = SessionToken.randomSessionID(using: &generator)
    }

    /// Whether the session `token` is one of `channel`'s and still valid at `now` (ms since the
    /// epoch): what entitles a `/ssai` key URI. `nil` when it is; the refusal (403) otherwise.
    public func refusesSession(_ token: String?, channel: String, now: Int64) -> Refusal? {
        guard let token, !token.isEmpty else { return Refusal(.forbidden, "key request without a session") }
        do throws(SessionTokenError) {
            if let cached = sessions.entry(for: token) {
                try signer.check(tokenChannel: cached.channel, start: cached.start, channel: channel, now: now, maxAge: sessionMaxAge)
            } else {
                _ = try signer.verify(token, channel: channel, now: now, maxAge: sessionMaxAge)
            }
            return nil
        } catch {
            return Refusal(.forbidden, "session refused: \(error.refusal.reason)")
        }
    }

    /// Adds the key frames of a loaded ad configuration's creatives (``creativeKeyFrames``).
    public func addCreativeKeyFrames(_ keyFrames: [String: KeyFrameLocation]) {
        guard !keyFrames.isEmpty else { return }
        creativeKeyFrames.withLockedValue { $0.merge(keyFrames) { _, new in new } }
    }

    /// How `channel`'s stitched playlists are decorated (its `ads.markers` setting).
    public func setOptions(_ options: StitchOptions, for channel: String) {
        self.options.withLockedValue { $0[channel] = options }
    }

    /// `GET /ssai/{channel}/master.m3u8?{targeting}`: starts a session and returns the channel's
    /// multivariant playlist with every media playlist URI carrying the signed session token.
    ///
    /// - Parameters:
    ///   - query: the request's query parameters, decoded, in order (targeting: `device=tv`, …).
    ///   - headers: the request's header fields (rules may target some; `X-Playback-Session-Id`
    ///     seeds the session id when a player sends one).
    ///   - now: milliseconds since the epoch.
    public func startSession(
        channel: String, query: [(name: String, value: String)], headers: [(name: String, value: String)], now: Int64
    ) -> Result<Playlist, Refusal> {
        guard let snapshot = registry.snapshot(of: channel) else { return .failure(Refusal(.notFound, "no channel \"\(channel)\"")) }
        guard let stitching = snapshot.stitching, let multivariant = stitching.content.multivariant else {
            return .failure(unavailable(snapshot))
        }
        let targeting: [String: String]
        do throws(SessionTargetingError) {
            targeting = try SessionTargeting.targeting(
                channel: channel, query: query, headers: headers, copyingHeaders: ruleBook.current?.headerNames ?? [])
        } catch {
            return .failure(error.refusal)
        }
        let playbackSessionID = headers.first { $0.name.lowercased() == "x-playback-session-id" }?.value
        let token = SessionToken(
            channel: channel, id: SessionToken.sessionID(playbackSessionID: playbackSessionID), start: now,
            targeting: targeting)
        let signed = signer.sign(token)
        var playlist = multivariant
        for index in playlist.variants.indices {
            playlist.variants[index].uri = Self.withSession(playlist.variants[index].uri, signed)
        }
        for index in playlist.renditions.indices {
            if let uri = playlist.renditions[index].uri { playlist.renditions[index].uri = Self.withSession(uri, signed) }
        }
        for index in playlist.iFrameVariants.indices {
            let uri = playlist.iFrameVariants[index].uri
            playlist.iFrameVariants[index].attributes["URI"] = .quoted(Self.withSession(uri, signed))
        }
        metrics.sessionStarted(channel: channel)
        return .success(Playlist(bytes: PlaylistSerializer.serialize(playlist), targetDuration: nil))
    }

    /// `GET /ssai/{channel}/{rendition}.m3u8?session=…`: the session's stitched media playlist.
    ///
    /// The playlist is prepared once per (channel version, rendition, the session's pods for the
    /// breaks in the window) and shared by the sessions with the same pods, each served it with its
    /// own id in the tracking URLs: the bytes are those of ``Stitcher`` for that session. It fires
    /// nothing: the tracking its serving makes due is ``Playlist/dueTracking``.
    ///
    /// - Parameter now: milliseconds since the epoch (token expiry).
    /// With `iFrames`, the session's stitched I-frame playlist (``IFramePlaylist``) made from that
    /// same stitched playlist: ad key frames during breaks, the same numbering and discontinuities;
    /// serving it fires no tracking.
    public func stitchedPlaylist(
        channel: String, rendition: String, token: String?, iFrames: Bool = false, deltaUpdate: Bool = false, now: Int64
    ) -> Result<Playlist, Refusal> {
        guard let token, !token.isEmpty else {
            return .failure(Refusal(.badRequest, "missing session: start one at /ssai/\(channel)/master.m3u8"))
        }
        var entry: SessionCache.Entry
        /// The whole token, when this request read it.
        var session: SessionToken?
        var remember = false
        do throws(SessionTokenError) {
            if let cached = sessions.entry(for: token) {
                try signer.check(tokenChannel: cached.channel, start: cached.start, channel: channel, now: now, maxAge: sessionMaxAge)
                entry = cached
            } else {
                let verified = try signer.verify(token, channel: channel, now: now, maxAge: sessionMaxAge)
                entry = SessionCache.Entry(verified, session: StitchedSession(id: verified.id, placeholder: placeholderBytes))
                session = verified
                remember = true
            }
        } catch {
            return .failure(error.refusal)
        }
        guard let stitching = registry.stitching(of: channel) else {
            guard let snapshot = registry.snapshot(of: channel) else { return .failure(Refusal(.notFound, "no channel \"\(channel)\"")) }
            return .failure(unavailable(snapshot))
        }
        guard let window = stitching.cache.renditions[rendition] else {
            return .failure(Refusal(.notFound, "channel \"\(channel)\" has no rendition \"\(rendition)\""))
        }
        let options = options.withLockedValue { $0[channel] } ?? StitchOptions()
        let log = stitching.breaks
        if session == nil, window.breaks.contains(where: { entry.pod(for: log.breaks[$0]) == nil }) {
            // A pod to decide: the entry keeps no targeting, read the token again (verified before).
            do throws(SessionTokenError) {
                session = try signer.verify(token, channel: channel, now: now, maxAge: sessionMaxAge)
            } catch {
                return .failure(error.refusal)
            }
        }
        let prepared: PreparedStitch
        do throws(StitchingError) {
            // The session's pods for the window's breaks: remembered, or decided (and remembered).
            var decider = session.map { token in
                SessionDecisions(
                    log: log,
                    session: ViewerSession(
                        id: token.id, startDate: ProgramDateTime(millisecondsSinceEpoch: token.start), targeting: token.targeting),
                    ruleSets: ruleBook.versions)
            }
            let decisions = try WindowDecisions(breaks: window.breaks) {
                (index: Int) throws(StitchingError) -> StitchedPod? in
                let adBreak = log.breaks[index]
                if let known = entry.pod(for: adBreak) { return known }
                guard decider != nil else { preconditionFailure("the token is read whenever a pod is to be decided") }
                let pod = try decider!.decision(at: index).map(StitchedPod.init)
                entry = entry.remembering(pod, for: adBreak)
                remember = true
                return pod
            }
            if remember { sessions.store(entry, for: token) }
            let name = iFrames ? IFramePlaylist.uri(forRendition: rendition) : deltaUpdate ? rendition + "?_HLS_skip" : rendition
            let key = StitchCache.Key(rendition: name, decisions: decisions)
            let context = StitchCache.Context(owner: ObjectIdentifier(self), options: options)
            if let cached = stitching.cache.prepared(key, context: context) {
                prepared = cached
            } else {
                let made = try prepare(
                    window.content, rendition: rendition, log: log, decisions: decisions, options: options,
                    iFrames: iFrames ? registry.snapshot(of: channel)?.segments[rendition] ?? [:] : nil,
                    deltaUpdate: deltaUpdate, renditions: stitching.cache.renditions.keys.sorted())
                guard case .prepared(let built) = made else {
                    if case .noIFrames = made {
                        return .failure(Refusal(.notFound, "rendition \"\(rendition)\" of \"\(channel)\" has no I-frame playlist"))
                    }
                    return .failure(Refusal(.failed, "cannot compress this playlist (zlib failed)"))
                }
                prepared = built
                stitching.cache.store(prepared, for: key, context: context)
            }
        } catch {
            logger.error(
                "cannot stitch playlist",
                metadata: ["hls.channel.id": "\(channel)", "hls.rendition": "\(rendition)", "error.message": "\(error)"])
            return .failure(Refusal(.failed, "cannot stitch this playlist: \(error)"))
        }
        // What the observer makes due travels with the playlist (``Playlist/dueTracking``): the
        // writer performs it once the body is out, so a HEAD, a dropped connection or a 304 fire nothing.
        return .success(Playlist(prepared, session: entry.session, token: token))
    }

    private enum Prepared {
        case prepared(PreparedStitch)
        /// zlib failed.
        case failed
        /// An I-frame playlist was asked of a rendition without key frames, or of encrypted content.
        case noIFrames
    }

    /// Renders `content` for the placeholder session with `decisions` and prepares it for serving.
    /// With `iFrames` (the content segments that can be fetched, by name), the I-frame playlist of
    /// that stitched playlist instead, with no tracking.
    private func prepare(
        _ content: MediaPlaylist, rendition: String, log: BreakLog, decisions: WindowDecisions, options: StitchOptions,
        iFrames contentFiles: [String: SegmentFile]?, deltaUpdate: Bool = false, renditions: [String] = []
    ) throws(StitchingError) -> Prepared {
        var stitched = try Stitcher.render(
            content: content, rendition: rendition, breaks: log, decisions: decisions, sessionID: placeholder,
            ruleSets: ruleBook.versions, options: options)
        // As for the shared playlists: at least 3, since EXTINF is written in decimal form (A8/A9).
        stitched.version = max(stitched.version ?? 0, 3)
        if let contentFiles {
            guard IFramePlaylist.isOffered(for: stitched) else { return .noIFrames }
            let creatives = creativeKeyFrames.withLockedValue { $0 }
            func keyFrame(_ segment: MediaSegment) -> KeyFrameLocation? {
                if segment.byteRange != nil { return nil }
                if let location = creatives[segment.uri] { return location }
                guard let slash = segment.uri.lastIndex(of: "/") else { return nil }
                return contentFiles[String(segment.uri[segment.uri.index(after: slash)...])]?.keyFrame
            }
            guard stitched.segments.contains(where: { keyFrame($0) != nil }) else { return .noIFrames }
            let iFrames = IFramePlaylist.make(from: stitched) { _, segment in keyFrame(segment) }
            let template = StitchedPlaylistTemplate(iFrames, placeholder: placeholder)
            return PreparedStitch(template, targetDuration: content.targetDuration, onServe: nil).map(Prepared.prepared) ?? .failed
        }
        let onServe = onStitched?(stitched)
        stitched = lowLatency(stitched, rendition: rendition, renditions: renditions)
        let edge = PlaylistEdge(stitched)
        if deltaUpdate, let delta = PlaylistDeltaUpdate.make(stitched, kind: .segments) { stitched = delta }
        let template = StitchedPlaylistTemplate(
            withSessionKeys(stitched), placeholder: placeholder, tokenPlaceholder: tokenPlaceholder)
        return PreparedStitch(template, targetDuration: content.targetDuration, edge: edge, onServe: onServe)
            .map(Prepared.prepared) ?? .failed
    }

    /// `POST /admin/channels/{channel}/breaks?duration=<seconds>`: "cue now", authenticated with the
    /// admin bearer token. Returns the id of the break, which starts at the channel's next segment.
    public func requestBreak(channel: String, duration: String?, authorization: String?) -> Result<String, Refusal> {
        guard let adminToken else {
            return .failure(Refusal(.forbidden, "the admin API is disabled: set the admin token (server.admin_token_env)"))
        }
        guard let presented = authorization.flatMap(BearerToken.bearerToken),
            BearerToken.matches(presented, expected: adminToken)
        else { return .failure(Refusal(.unauthorized, "missing or wrong admin bearer token")) }
        guard let desk = registry.breaks(of: channel) else {
            if registry.snapshot(of: channel) == nil { return .failure(Refusal(.notFound, "no channel \"\(channel)\"")) }
            return .failure(Refusal(.unavailable, "channel \"\(channel)\" does not stitch ads"))
        }
        var seconds = HLSDuration.seconds(30)
        if let duration {
            guard let parsed = HLSDuration(decimal: duration), parsed > .zero, parsed <= .seconds(3600) else {
                return .failure(Refusal(.badRequest, "duration must be a number of seconds above 0 and at most 3600"))
            }
            seconds = parsed
        }
        do throws(BreakRequestError) {
            return .success(try desk.requestBreak(duration: seconds))
        } catch {
            return .failure(Refusal(.conflict, "\(error)"))
        }
    }

    private func unavailable(_ snapshot: ChannelSnapshot) -> Refusal {
        if ruleBook.current == nil {
            return Refusal(.notFound, "ad insertion is not enabled on this server (no ad configuration: server.ads)")
        }
        if let unfit = registry.breaks(of: snapshot.name)?.unfitReason {
            return Refusal(.unavailable, "the ad configuration does not fit channel \"\(snapshot.name)\": \(unfit)")
        }
        if case .starting = snapshot.state {
            return Refusal(.unavailable, "channel \"\(snapshot.name)\" is starting and has no playlist yet")
        }
        return Refusal(.notFound, "channel \"\(snapshot.name)\" does not stitch ads (ads.stitch is false)")
    }

    /// `playlist` with the session token placeholder on every Headwater key URI (`/keys/…`): the
    /// session entitles its keys (``refusesSession(_:channel:now:)``).
    private func withSessionKeys(_ playlist: MediaPlaylist) -> MediaPlaylist {
        var playlist = playlist
        for index in playlist.segments.indices {
            let keys = playlist.segments[index].tags.keys
            guard keys.contains(where: { $0.uri?.hasPrefix("/keys/") == true }) else { continue }
            playlist.segments[index].tags.keys = keys.map { key in
                guard let uri = key.uri, uri.hasPrefix("/keys/") else { return key }
                var key = key
                key.attributes["URI"] = .quoted(Self.withSession(uri, tokenPlaceholder))
                return key
            }
        }
        return playlist
    }

    /// A stitched playlist of a low-latency channel as a session gets it: one rendition report for
    /// every other rendition (F6), under its stitched URI with this session's token, at this
    /// playlist's own edge — the renditions of a session are stitched alike (same media sequence
    /// numbers, parts cut on one clock), so that is theirs within a part.
    func lowLatency(_ playlist: MediaPlaylist, rendition: String, renditions: [String]) -> MediaPlaylist {
        guard playlist.partInformation != nil, let edge = PlaylistEdge(playlist) else { return playlist }
        var playlist = playlist
        let lastMSN = edge.openParts > 0 ? edge.lastSegment + 1 : edge.lastSegment
        let lastPart = edge.openParts > 0 ? edge.openParts - 1 : edge.lastSegmentParts - 1
        playlist.renditionReports = renditions.filter { $0 != rendition }.map { other in
            var attributes: AttributeList = [
                Attribute("URI", .quoted(Self.withSession("\(other).m3u8", tokenPlaceholder))),
                Attribute("LAST-MSN", .integer(lastMSN)),
            ]
            if lastPart >= 0 { attributes["LAST-PART"] = .integer(lastPart) }
            return RenditionReport(attributes: attributes)
        }
        return playlist
    }

    /// `uri` with `session=<token>` appended to its query.
    static func withSession(_ uri: String, _ token: String) -> String {
        uri + (uri.contains("?") ? "&" : "?") + "session=" + token
    }
}
