/// Checks a pair of consecutive versions of one live media playlist against the server rules of
/// RFC 8216bis §6.2.1–6.2.2.
public enum LiveUpdateChecker {
    public static func check(previous: MediaPlaylist, next: MediaPlaylist) -> [ValidationIssue] { [] }
}
