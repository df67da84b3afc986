/// Lists the rules of ../shared/HLS-RULES.md a single playlist breaks.
public enum PlaylistValidator {
    public static func validate(_ playlist: Playlist) -> [ValidationIssue] {
        switch playlist {
        case .media(let media): return validate(media)
        case .multivariant(let multivariant): return validate(multivariant)
        }
    }

    public static func validate(_ playlist: MediaPlaylist) -> [ValidationIssue] { [] }

    public static func validate(_ playlist: MultivariantPlaylist) -> [ValidationIssue] { [] }
}

/// Checks a pair of consecutive versions of one live media playlist against the server rules of
/// RFC 8216bis §6.2.1–6.2.2.
public enum LiveUpdateChecker {
    public static func check(previous: MediaPlaylist, next: MediaPlaylist) -> [ValidationIssue] { [] }
}
