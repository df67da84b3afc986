public import HeadwaterHLS

/// A stitched media playlist's bytes with the session id left out: text, and the places where the
/// session id goes (the `{session}` macro of tracking URLs, percent-encoded). Every session with the
/// same ``WindowDecisions`` for a content version gets these bytes with its own id spliced in, so an
/// origin renders the playlist once and splices per request.
///
/// Made by rendering for a *placeholder* session id and cutting the serialized playlist where the
/// placeholder appears. The placeholder must appear nowhere else: draw it at random (at least 128
/// bits), so that no content or configuration can contain it.
public struct StitchedPlaylistTemplate: Sendable, Hashable {
    public enum Piece: Sendable, Hashable {
        /// Bytes as they are.
        case text([UInt8])
        /// The session id, as ``sessionText(_:)`` writes it.
        case sessionID
        /// The session's signed token (the `session=` of an encrypted channel's key URIs), as the
        /// viewer presented it.
        case sessionToken
    }

    /// In order; no two `text` pieces in a row, and no empty one.
    public let pieces: [Piece]

    /// The serialized `playlist`, cut where `placeholder` appears.
    ///
    /// - Parameter placeholder: the session id `playlist` was rendered for: unreserved characters
    ///   only (`A–Z a–z 0–9 - . _ ~`), so that percent-encoding leaves it as it is.
    ///   - tokenPlaceholder: the session token `playlist` was rendered for, where it has one (key
    ///     URIs); drawn like `placeholder`, and of the same length.
    public init(_ playlist: MediaPlaylist, placeholder: String, tokenPlaceholder: String? = nil) {
        let mark = Array(placeholder.utf8)
        precondition(
            !mark.isEmpty && Self.sessionText(placeholder) == mark,
            "a placeholder session id is made of unreserved characters")
        let tokenMark = tokenPlaceholder.map { Array($0.utf8) }
        precondition(tokenMark.map { $0.count == mark.count && $0 != mark } ?? true, "placeholders of one length, distinct")
        // Served as shared playlists are (``PlaylistRendering``): the open segment undated.
        let bytes = PlaylistSerializer.serialize(playlist.datingOnlyCompleteSegments)
        var pieces: [Piece] = []
        var start = 0
        var index = 0
        let last = bytes.count - mark.count
        while index <= last {
            let found: Piece? =
                bytes[index..<(index + mark.count)].elementsEqual(mark)
                ? .sessionID
                : tokenMark.flatMap { bytes[index..<(index + mark.count)].elementsEqual($0) ? .sessionToken : nil }
            if let found {
                if index > start { pieces.append(.text(Array(bytes[start..<index]))) }
                pieces.append(found)
                index += mark.count
                start = index
            } else {
                index += 1
            }
        }
        if start < bytes.count { pieces.append(.text(Array(bytes[start...]))) }
        self.pieces = pieces
    }

    /// Whether the bytes are the same for every session (no tracking or key URL names the session).
    public var isShared: Bool { !pieces.contains(.sessionID) && !pieces.contains(.sessionToken) }

    /// The playlist of the session whose ``sessionText(_:)`` is `text` and whose token is `token`.
    public func bytes(sessionText text: [UInt8], token: [UInt8] = []) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(pieces.reduce(0) { $0 + Self.count(of: $1, sessionText: text.count, token: token.count) })
        for piece in pieces {
            switch piece {
            case .text(let bytes): out.append(contentsOf: bytes)
            case .sessionID: out.append(contentsOf: text)
            case .sessionToken: out.append(contentsOf: token)
            }
        }
        return out
    }

    /// A session id as tracking URLs carry it: percent-encoded (RFC 3986, all but unreserved
    /// characters), as ``TrackingEvent/expand(_:sessionID:breakID:adID:creativeID:)`` writes it.
    public static func sessionText(_ sessionID: String) -> [UInt8] { Array(TrackingEvent.percentEncoded(sessionID).utf8) }

    private static func count(of piece: Piece, sessionText count: Int, token: Int) -> Int {
        switch piece {
        case .text(let bytes): bytes.count
        case .sessionID: count
        case .sessionToken: token
        }
    }
}
