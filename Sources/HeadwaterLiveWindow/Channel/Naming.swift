/// The naming rules channels, renditions and ad ids share, in one place.
public enum Naming {
    /// Whether `name` may name a channel, rendition, pod or creative: 1–64 of `A-Z a-z 0-9 - _`,
    /// so it is safe in a URL path, a file name and a metric label as it is.
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.utf8.allSatisfy { c in
                (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 45 || c == 95
            }
    }

    /// The rendition a packaged stream's media playlist names: the playlist's directory
    /// (`v0/index.m3u8` → `v0`), else its file name without `.m3u8`. Loop packages and ad creatives
    /// are packaged alike, so they follow this one rule.
    public static func renditionName(forPlaylistURI uri: String) -> String {
        let parts = uri.split(separator: "/")
        if parts.count >= 2 { return String(parts[parts.count - 2]) }
        let file = parts.last.map(String.init) ?? uri
        return file.hasSuffix(".m3u8") ? String(file.dropLast(5)) : file
    }
}
