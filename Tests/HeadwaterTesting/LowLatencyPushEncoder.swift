/// A synthetic low-latency encoder pushing one rendition (`v0`): 2 s segments in four 0.5 s part
/// files, `v0/seg-N.partK.ts`, each part's playlist hinting the next, the segment file once its
/// parts are done, the last six segments listed. It says what to upload, in order; the caller
/// uploads (through `PushIngest` or over HTTP).
public struct LowLatencyPushEncoder: Sendable {
    /// Complete segments listed, the open one and its parts so far.
    public private(set) var completed: [Int] = []
    public private(set) var open = 0
    public private(set) var openParts = 0

    public init() {}

    /// The bytes of part `k` of segment `n` (1,000 of them, distinct per part).
    public static func partBytes(_ n: Int, _ k: Int) -> [UInt8] { [UInt8](repeating: UInt8((n * 4 + k) % 251), count: 1_000) }

    /// The playlist as an LL encoder writes it; `partDuration` of the open segment's last part.
    public func playlist(partDuration: String = "0.5") -> String {
        var text = "#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-TARGETDURATION:2\n"
        text += "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5\n#EXT-X-PART-INF:PART-TARGET=0.5\n"
        text += "#EXT-X-MEDIA-SEQUENCE:\(completed.first ?? open)\n"
        func part(_ n: Int, _ k: Int, _ duration: String = "0.5") -> String {
            "#EXT-X-PART:DURATION=\(duration),URI=\"v0/seg-\(n).part\(k).ts\"\(k == 0 ? ",INDEPENDENT=YES" : "")\n"
        }
        for n in completed {
            for k in 0..<4 { text += part(n, k) }
            text += "#EXTINF:2.0,\nv0/seg-\(n).ts\n"
        }
        for k in 0..<openParts { text += part(open, k, k == openParts - 1 ? partDuration : "0.5") }
        text += "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"v0/seg-\(open).part\(openParts).ts\"\n"
        return text
    }

    /// The next part: the uploads it takes, in order — its file (unless `upload` is false), the
    /// segment file when it completes one, then the playlist (`v0.m3u8`).
    public mutating func nextPart(upload: Bool = true) -> [(path: String, bytes: [UInt8])] {
        var uploads: [(path: String, bytes: [UInt8])] = []
        if upload { uploads.append(("v0/seg-\(open).part\(openParts).ts", Self.partBytes(open, openParts))) }
        openParts += 1
        if openParts == 4 {
            uploads.append(("v0/seg-\(open).ts", (0..<4).flatMap { Self.partBytes(open, $0) }))
            completed.append(open)
            if completed.count > 6 { completed.removeFirst() }
            open += 1
            openParts = 0
        }
        uploads.append(("v0.m3u8", Array(playlist().utf8)))
        return uploads
    }
}
