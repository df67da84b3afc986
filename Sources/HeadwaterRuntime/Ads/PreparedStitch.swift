import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterStitching
import NIOConcurrencyHelpers
import NIOCore

/// One stitched media playlist of a channel version, ready for every session with the same
/// ``WindowDecisions``: its bytes but the session ids (``StitchedPlaylistTemplate``), and their gzip
/// form in pieces. Serving it to a session costs copies: the shared parts are compressed once, and
/// the few bytes that hold the session id (tracking URLs) go out in stored blocks.
///
/// The price is in bytes, where session ids are: the stored part and the parts compressed apart make
/// the gzip body larger than compressing each response whole (the demo's TV playlist listing an ad
/// with five tracking URLs: 1,030 bytes instead of 610 at level 1); playlists without them come out
/// smaller (level 6, once). Compressing the stored part per response would save about 250 of those
/// bytes for ~7 µs of deflate per request (measured with zlib 1.2.13, small window and hash).
final class PreparedStitch: Sendable {
    enum Part: Sendable {
        /// The same for every session, and compressed once.
        case shared([UInt8], Gzip.DeflatedPiece)
        /// Holds session ids: stored uncompressed in gzip. Small (a few tracking URLs).
        case personal([StitchedPlaylistTemplate.Piece])
    }

    /// Text between two session ids shorter than this is stored with them rather than compressed on
    /// its own: a piece compressed alone gains little under this length and costs a flush.
    static let personalGap = 512

    let parts: [Part]
    /// The whole identity and gzip bodies when no part is personal: served without a copy.
    private let shared: (identity: ByteBuffer, gzip: ByteBuffer)?
    /// Bytes of the parts, session ids excluded; their number.
    private let textLength: Int
    private let sessionIDCount: Int
    private let sessionTokenCount: Int
    private let deflatedLength: Int
    let targetDuration: Int
    /// What to do for each session served this playlist (``AdInsertion/StitchObserver``): handed
    /// out with each session's playlist (``AdInsertion/DueTracking``), never called here.
    let onServe: (@Sendable (StitchedSession) -> Void)?

    /// `nil` only if zlib fails.
    /// Where the stitched playlist ends in segments and parts (blocking reload; that of the full
    /// playlist for a delta update, which lists the same tail).
    let edge: PlaylistEdge?

    init?(
        _ template: StitchedPlaylistTemplate, targetDuration: Int, edge: PlaylistEdge? = nil,
        onServe: (@Sendable (StitchedSession) -> Void)?
    ) {
        self.edge = edge
        var parts: [Part] = []
        var personal: [StitchedPlaylistTemplate.Piece] = []
        let pieces = template.pieces
        for (index, piece) in pieces.enumerated() {
            switch piece {
            case .sessionID, .sessionToken:
                personal.append(piece)
            case .text(let bytes):
                let between = index > 0 && index + 1 < pieces.count  // text pieces alternate with ids
                if between && bytes.count < Self.personalGap {
                    personal.append(piece)
                    continue
                }
                if !personal.isEmpty {
                    parts.append(.personal(personal))
                    personal = []
                }
                guard let deflated = Gzip.DeflatedPiece(bytes) else { return nil }
                parts.append(.shared(bytes, deflated))
            }
        }
        if !personal.isEmpty { parts.append(.personal(personal)) }
        self.parts = parts
        self.targetDuration = targetDuration
        self.onServe = onServe
        var textLength = 0
        var sessionIDCount = 0
        var sessionTokenCount = 0
        var deflatedLength = 0
        for part in parts {
            switch part {
            case .shared(let bytes, let deflated):
                textLength += bytes.count
                deflatedLength += deflated.deflated.count
            case .personal(let pieces):
                for piece in pieces {
                    switch piece {
                    case .text(let bytes): textLength += bytes.count
                    case .sessionID: sessionIDCount += 1
                    case .sessionToken: sessionTokenCount += 1
                    }
                }
            }
        }
        self.textLength = textLength
        self.sessionIDCount = sessionIDCount
        self.sessionTokenCount = sessionTokenCount
        self.deflatedLength = deflatedLength
        if sessionIDCount == 0 && sessionTokenCount == 0 {
            var identity = ByteBufferAllocator().buffer(capacity: textLength)
            var composer = Gzip.Composer(capacity: deflatedLength)
            for case .shared(let bytes, let deflated) in parts {
                identity.writeBytes(bytes)
                composer.append(deflated)
            }
            self.shared = (identity, composer.finish())
        } else {
            self.shared = nil
        }
    }

    /// What a session puts in place of the placeholders: its id as tracking URLs carry it, and its
    /// token as key URIs do.
    struct Personal: Sendable {
        var sessionText: [UInt8]
        var token: [UInt8] = []
    }

    /// The length of the identity body for `session`.
    func count(_ session: Personal) -> Int {
        textLength + sessionIDCount * session.sessionText.count + sessionTokenCount * session.token.count
    }

    /// The playlist for `session`.
    func identityBody(_ session: Personal) -> ByteBuffer {
        if let shared { return shared.identity }
        var buffer = ByteBufferAllocator().buffer(capacity: count(session))
        for part in parts {
            switch part {
            case .shared(let bytes, _): buffer.writeBytes(bytes)
            case .personal(let pieces): Self.write(pieces, session, to: &buffer)
            }
        }
        return buffer
    }

    /// ``identityBody(_:)`` as one gzip member.
    func gzipBody(_ session: Personal) -> ByteBuffer {
        if let shared { return shared.gzip }
        // Stored blocks: the personal bytes and a 5-byte header per 64 KB.
        let personal = count(session) + 5 * parts.count
        var composer = Gzip.Composer(capacity: deflatedLength + personal)
        for part in parts {
            switch part {
            case .shared(_, let deflated): composer.append(deflated)
            case .personal(let pieces): composer.appendStored { Self.write(pieces, session, to: &$0) }
            }
        }
        return composer.finish()
    }

    private static func write(_ pieces: [StitchedPlaylistTemplate.Piece], _ session: Personal, to buffer: inout ByteBuffer) {
        for piece in pieces {
            switch piece {
            case .text(let bytes): buffer.writeBytes(bytes)
            case .sessionID: buffer.writeBytes(session.sessionText)
            case .sessionToken: buffer.writeBytes(session.token)
            }
        }
    }
}

/// What one channel version stitches from (``StitchingInput``), per rendition, and the stitched
/// playlists prepared from it, by rendition and window decisions: each built on its first request
/// and shared by every session with those decisions until the channel publishes its next version
/// (whose ``StitchingInput`` has a new, empty cache; this one goes with the last request that holds
/// the old version). At most ``capacity`` are kept; beyond that, a playlist is prepared for its
/// request only (the same bytes, more work).
final class StitchCache: Sendable {
    /// A rendition's content in this version, and the breaks its window shows
    /// (``Stitcher/windowBreaks(content:breaks:)``): looked up per request without copying the playlist.
    final class Rendition: Sendable {
        let content: MediaPlaylist
        let breaks: Range<Int>

        init(content: MediaPlaylist, log: BreakLog) {
            self.content = content
            self.breaks = Stitcher.windowBreaks(content: content, breaks: log)
        }
    }

    struct Key: Hashable, Sendable {
        var rendition: String
        var decisions: WindowDecisions
    }

    /// Prepared playlists kept per version (a few kilobytes each). Each distinct pod decision of the
    /// breaks in the window, in each rendition, is one.
    static let capacity = 256

    let content: ChannelContent
    let log: BreakLog
    let renditions: [String: Rendition]

    /// What the entries were prepared by and with: the ``AdInsertion`` (its placeholder and stitch
    /// observer) and the channel's options. Another context (a reload that changes the options)
    /// empties the cache.
    struct Context: Equatable, Sendable {
        var owner: ObjectIdentifier
        var options: StitchOptions
    }

    private struct State {
        var context: Context?
        var entries: [Key: PreparedStitch] = [:]
    }

    private let state = NIOLockedValueBox(State())

    init(content: ChannelContent, log: BreakLog) {
        self.content = content
        self.log = log
        self.renditions = content.media.mapValues { Rendition(content: $0, log: log) }
    }

    func prepared(_ key: Key, context: Context) -> PreparedStitch? {
        state.withLockedValue { $0.context == context ? $0.entries[key] : nil }
    }

    func store(_ prepared: PreparedStitch, for key: Key, context: Context) {
        var dropped: [Key: PreparedStitch] = [:]
        state.withLockedValue { state in
            if state.context != context {
                dropped = state.entries
                state.entries = [:]
                state.context = context
            }
            if state.entries.count < Self.capacity { state.entries[key] = prepared }
        }
        withExtendedLifetime(dropped) {}
    }

    /// Prepared playlists held (tests).
    var count: Int { state.withLockedValue { $0.entries.count } }
}
