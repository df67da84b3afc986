public import HeadwaterHLS
public import HeadwaterStitching
public import Logging
import NIOConcurrencyHelpers

/// Server-side ad insertion as the HTTP layer asks for it: starting viewer sessions and rendering
/// each viewer's stitched media playlist, per request, from the channel's current snapshot. Nothing
/// per session is stored: the session is the signed token in the playlist URLs, and the stitched
/// playlist is a pure function of (snapshot, break log, session, pinned rule sets) — so any node
/// serves a session the same bytes.
public final class AdInsertion: Sendable {
    /// Why a request cannot be answered: an HTTP status class and a one-line reason.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        public enum Kind: Sendable, Hashable {
            /// 400: a malformed query (targeting, missing session).
            case badRequest
            /// 401: an admin request without the right bearer token.
            case unauthorized
            /// 403: a forged, altered, expired or foreign session token; the admin API disabled.
            case forbidden
            /// 409: a break cannot start now (one is open, or another request is pending).
            case conflict
            /// 404: no such channel or rendition.
            case notFound
            /// 503: the channel is starting, or does not stitch ads.
            case unavailable
            /// 500: the stitcher refused the inputs (a bug or an invalid configuration): logged.
            case failed
        }

        public var kind: Kind
        public var reason: String

        public init(_ kind: Kind, _ reason: String) {
            self.kind = kind
            self.reason = reason
        }

        public var description: String { reason }
    }

    /// A rendered stitched (or session) playlist and the target duration its errors cache by.
    public struct Playlist: Sendable {
        public var bytes: [UInt8]
        public var targetDuration: Int?
    }

    private let registry: ChannelRegistry
    private let adminToken: [UInt8]?
    private let ruleBook: AdRuleBook
    private let signer: SessionSigner
    private let sessionMaxAge: Duration
    private let options: NIOLockedValueBox<[String: StitchOptions]>
    private let logger: Logger
    private let onStitched: (@Sendable (_ sessionID: String, _ playlist: MediaPlaylist) -> Void)?

    /// - Parameters:
    ///   - sessionMaxAge: how long a session token stays valid.
    ///   - adminToken: the bearer token `POST /admin/…` requires; `nil` disables the admin API.
    ///   - onStitched: called with every stitched playlist served (server-side ad tracking).
    public init(
        registry: ChannelRegistry, ruleBook: AdRuleBook, signer: SessionSigner, sessionMaxAge: Duration = SessionSigner.defaultMaxAge,
        adminToken: String?, logger: Logger, onStitched: (@Sendable (_ sessionID: String, _ playlist: MediaPlaylist) -> Void)? = nil
    ) {
        self.registry = registry
        self.adminToken = adminToken.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.ruleBook = ruleBook
        self.signer = signer
        self.sessionMaxAge = sessionMaxAge
        self.options = NIOLockedValueBox([:])
        self.logger = logger
        self.onStitched = onStitched
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
            return .failure(Refusal(.badRequest, error.description))
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
        OriginMetrics.current.sessionStarted(channel: channel)
        return .success(Playlist(bytes: PlaylistSerializer.serialize(playlist), targetDuration: nil))
    }

    /// `GET /ssai/{channel}/{rendition}.m3u8?session=…`: the session's stitched media playlist.
    ///
    /// - Parameter now: milliseconds since the epoch (token expiry).
    public func stitchedPlaylist(channel: String, rendition: String, token: String?, now: Int64) -> Result<Playlist, Refusal> {
        guard let token, !token.isEmpty else {
            return .failure(Refusal(.badRequest, "missing session: start one at /ssai/\(channel)/master.m3u8"))
        }
        let session: SessionToken
        do throws(SessionTokenError) {
            session = try signer.verify(token, channel: channel, now: now, maxAge: sessionMaxAge)
        } catch {
            return .failure(Refusal(.forbidden, error.description))
        }
        guard let snapshot = registry.snapshot(of: channel) else { return .failure(Refusal(.notFound, "no channel \"\(channel)\"")) }
        guard let stitching = snapshot.stitching else { return .failure(unavailable(snapshot)) }
        guard let playlist = stitching.content.media[rendition] else {
            return .failure(Refusal(.notFound, "channel \"\(channel)\" has no rendition \"\(rendition)\""))
        }
        let viewer = ViewerSession(
            id: session.id, startDate: ProgramDateTime(millisecondsSinceEpoch: session.start), targeting: session.targeting)
        var stitched: MediaPlaylist
        do throws(StitchingError) {
            stitched = try Stitcher.render(
                content: playlist, rendition: rendition, breaks: stitching.breaks, session: viewer,
                ruleSets: ruleBook.versions, options: options.withLockedValue { $0[channel] } ?? StitchOptions())
        } catch {
            logger.error(
                "cannot stitch playlist",
                metadata: ["hls.channel.id": "\(channel)", "hls.rendition": "\(rendition)", "error.message": "\(error)"])
            return .failure(Refusal(.failed, "cannot stitch this playlist: \(error)"))
        }
        // As for the shared playlists: at least 3, since EXTINF is written in decimal form (A8/A9).
        stitched.version = max(stitched.version ?? 0, 3)
        onStitched?(session.id, stitched)
        return .success(Playlist(bytes: PlaylistSerializer.serialize(stitched), targetDuration: playlist.targetDuration))
    }

    /// `POST /admin/channels/{channel}/breaks?duration=<seconds>`: "cue now", authenticated with the
    /// admin bearer token. Returns the id of the break, which starts at the channel's next segment.
    public func requestBreak(channel: String, duration: String?, authorization: String?) -> Result<String, Refusal> {
        guard let adminToken else {
            return .failure(Refusal(.forbidden, "the admin API is disabled: set the admin token (server.admin_token_env)"))
        }
        guard let presented = authorization.flatMap(PushAuthorization.bearerToken),
            PushAuthorization.matches(presented, expected: adminToken)
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

    /// `uri` with `session=<token>` appended to its query.
    static func withSession(_ uri: String, _ token: String) -> String {
        uri + (uri.contains("?") ? "&" : "?") + "session=" + token
    }
}
