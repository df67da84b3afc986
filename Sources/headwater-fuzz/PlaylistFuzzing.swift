import HeadwaterHLS

/// The playlist parsers (the Swift counterpart of gohlslib's `FuzzPlaylistUnmarshal`): the strict
/// one (`headwater lint`, loop packages, pull) and the tolerant one push ingest uses on whatever an
/// encoder uploads.
enum PlaylistFuzzing {
    /// Whatever parses must serialize to text that parses back to an equal value; a tolerated
    /// playlist's canonical text must pass the strict parser; the strict parser never accepts what
    /// the tolerant one refuses. Validation and the live-update check run on every parsed
    /// playlist. Any other outcome than a clean, located error traps.
    static func run(_ bytes: [UInt8]) {
        let parser = PlaylistParser()
        let strict: Playlist?
        do throws(PlaylistParseError) {
            strict = try parser.parse(bytes)
        } catch {
            precondition(error.line >= 1, "error without a line: \(error)")
            strict = nil
        }
        let tolerated: Playlist?
        do throws(PlaylistParseError) {
            tolerated = try parser.parseTolerating(bytes).playlist
        } catch {
            precondition(error.line >= 1, "error without a line: \(error)")
            precondition(strict == nil, "the strict parser accepts what the tolerant one refuses: \(error)")
            tolerated = nil
        }
        if let strict { roundTrip(strict, parser: parser) }
        if let tolerated { roundTrip(tolerated, parser: parser) }
        _ = PlaylistValidator.checkVariableReferences(bytes)
    }

    private static func roundTrip(_ playlist: Playlist, parser: PlaylistParser) {
        _ = PlaylistValidator.validate(playlist)
        if case .media(let media) = playlist { _ = LiveUpdateChecker.check(previous: media, next: media) }
        let text = PlaylistSerializer.serialize(playlist)
        let reparsed: Playlist
        do throws(PlaylistParseError) {
            reparsed = try parser.parse(text)
        } catch {
            fatalError("the canonical text does not parse: \(error)\n\(String(decoding: text, as: UTF8.self))")
        }
        guard reparsed == playlist else {
            fatalError("serialize → parse changed the value; canonical text:\n\(String(decoding: text, as: UTF8.self))")
        }
    }
}
