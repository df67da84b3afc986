#if DEBUG
import Foundation
@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import Logging
import NIOCore

/// What the server fuzzers' origin serves: channel `demo` (a multivariant playlist, media playlist
/// `v1` and one 40 KiB segment, so responses span HTTP/2 flow-control windows), a public
/// directory with `index.html`, and push ingest into a sink that keeps nothing. The files live in
/// one directory made once per process.
enum FuzzedOrigin {
    static let directory = NSTemporaryDirectory() + "headwater-fuzz-origin-\(getpid())"
    static let segmentLength = 40 * 1024

    /// The responder's and handlers' shared environment, made once (and the files with it).
    static let environment: OriginHTTPHandler.Environment = {
        let fileManager = FileManager.default
        try? fileManager.createDirectory(atPath: directory + "/public", withIntermediateDirectories: true)
        let segment = (0..<segmentLength).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        guard fileManager.createFile(atPath: directory + "/seg7.ts", contents: Data(segment)),
            fileManager.createFile(atPath: directory + "/public/index.html", contents: Data("<!doctype html><p>fuzz".utf8))
        else { fatalError("cannot write the fuzzed origin's files under \(directory)") }
        atexit { try? FileManager.default.removeItem(atPath: FuzzedOrigin.directory) }

        let logger = Logger(label: "headwater-fuzz") { _ in SwiftLogNoOpLogHandler() }
        let metrics = OriginMetrics()
        let clock = FixedClock()
        return OriginHTTPHandler.Environment(
            responder: OriginResponder(
                content: Content(), publicDirectory: directory + "/public", cors: true, ingestEnabled: true, logger: logger,
                metrics: metrics, clock: clock),
            ingest: DiscardingSink(),
            maxIngestBodyBytes: 1 << 20,
            cors: true,
            logger: logger,
            accessLogger: logger,
            metrics: metrics,
            now: { FixedClock.seconds }
        )
    }()

    static let masterText = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1280000\nv1.m3u8\n"
    static let mediaText =
        "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:7\n#EXTINF:6.000,\nv1/seg7.ts\n"

    struct Content: OriginContent {
        let demo: ChannelSnapshot = {
            func playlist(_ text: String, tag: String, targetDuration: Int?) -> RenderedPlaylist {
                // The "gzip" body is never inflated by the server; any bytes do.
                RenderedPlaylist(
                    body: ByteBuffer(string: text), gzipBody: ByteBuffer(string: text), entityTag: "\"\(tag)\"",
                    gzipEntityTag: "\"\(tag)-gz\"", lastModified: FixedClock.seconds - 10, targetDuration: targetDuration)
            }
            let segment = SegmentFile(
                path: FuzzedOrigin.directory + "/seg7.ts", length: Int64(FuzzedOrigin.segmentLength), entityTag: "\"seg7\"",
                contentType: "video/mp2t", lastModified: FixedClock.seconds - 10)
            return ChannelSnapshot(
                name: "demo", state: .live, multivariant: playlist(masterText, tag: "master", targetDuration: nil),
                mediaPlaylists: ["v1": playlist(mediaText, tag: "v1", targetDuration: 6)], segments: ["v1": ["seg7.ts": segment]],
                targetDuration: 6)
        }()

        func snapshot(of channel: String) -> ChannelSnapshot? { channel == "demo" ? demo : nil }
        var channelNames: [String] { ["demo"] }
    }

    /// Accepts uploads to channel `demo` with `Authorization: Bearer secret` and keeps nothing.
    struct DiscardingSink: IngestSink {
        func authorize(channel: String, authorization: String?) throws(Refusal) {
            guard authorization == "Bearer secret" else { throw Refusal(.unauthorized, "wrong credentials") }
            guard channel == "demo" else { throw Refusal(.notFound, "no channel \"\(channel)\"") }
        }

        func begin(channel: String, path: [String], method: IngestMethod, contentLength: Int64?) throws(Refusal)
            -> any IngestUpload
        {
            Upload()
        }

        struct Upload: IngestUpload {
            func write(_ batch: ByteBuffer, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
                eventLoop.makeSucceededVoidFuture()
            }
            func finish(on eventLoop: any EventLoop) -> EventLoopFuture<Void> { eventLoop.makeSucceededVoidFuture() }
            func abort() {}
        }
    }

    /// Always 2023-11-14T22:13:20Z, so responses do not depend on when an input runs.
    struct FixedClock: WallClock {
        static let seconds: Int64 = 1_700_000_000
        func now() -> Int64 { Self.seconds * 1_000_000 }
    }
}
#endif
