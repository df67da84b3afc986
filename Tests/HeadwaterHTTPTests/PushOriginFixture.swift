import Foundation
import HeadwaterConfiguration
@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterSources
import HeadwaterTesting
import Logging
import NIOCore

/// A real push channel behind a real server: ``PushIngest`` with its state directory, the registry
/// it publishes to (the server's content), and its metrics, for tests that upload over HTTP and read
/// what was published.
struct PushOrigin {
    static let token = "ingest-token"
    static let channel = "live"
    /// The rendition ``publish(segments:)`` fills (`x_0.m3u8`).
    static let rendition = "x_0"

    let ingest: PushIngest
    let registry = ChannelRegistry()
    let metrics = OriginMetrics()
    let stateDirectory: String

    /// - Parameter stateDirectory: where uploads go (a fresh temporary directory by default).
    init(
        stateDirectory: String = NSTemporaryDirectory() + "headwater-push-origin-\(UUID().uuidString)",
        maxUploadBytes: Int = 64 << 20, logger: Logger = quietLogger, clock: any WallClock = FixedClock(Fixture.now)
    ) throws {
        self.stateDirectory = stateDirectory
        var configuration = HeadwaterConfiguration()
        configuration.server.stateDirectory = stateDirectory
        configuration.channels = [
            .init(
                name: Self.channel, source: .push(.init(targetDuration: 2, maxUploadBytes: maxUploadBytes)),
                windowSeconds: 60)
        ]
        ingest = try PushIngest(
            configuration: configuration, registry: registry, clock: clock, logger: logger,
            environment: ["HEADWATER_INGEST_TOKEN": Self.token], metrics: metrics)
    }

    var sink: PushIngestSink { PushIngestSink(ingest) }

    /// Uploads segments `x_00.ts`… (`bytes(n)` each) and the playlist listing them, through
    /// ``PushIngest`` itself: three segments make the channel live.
    func publish(segments count: Int, bytes: (Int) -> [UInt8] = { patternBytes(count: 1000, seed: UInt64($0)) }) throws {
        for n in 0..<count { try put("x_0\(n).ts", bytes(n)) }
        var playlist = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n"
        for n in 0..<count { playlist += "#EXTINF:2.000,\nx_0\(n).ts\n" }
        try put("x_0.m3u8", Array(playlist.utf8))
    }

    private func put(_ path: String, _ bytes: [UInt8]) throws {
        let upload = try ingest.beginUpload(channel: Self.channel, path: [path], contentLength: bytes.count)
        try ingest.write(bytes, to: upload)
        try ingest.finish(upload)
    }

    /// The request line and fields of an upload of `path` (no body, no `Content-Length`).
    static func uploadHead(_ path: String, authorization: String? = "Bearer \(token)", fields: String = "") -> String {
        "PUT /ingest/\(channel)/\(path) HTTP/1.1\r\nHost: o\r\n"
            + (authorization.map { "Authorization: \($0)\r\n" } ?? "") + fields + "\r\n"
    }

    static var playlistRequest: String { "GET /live/\(channel)/\(rendition).m3u8 HTTP/1.1\r\nHost: o\r\n\r\n" }

    /// `headwater_ingest_rejected_total{channel="live",reason=…}`, from the exposition.
    func rejections(_ reason: IngestCounters.Reason) -> Double? {
        let series = #"headwater_ingest_rejected_total{channel="\#(Self.channel)",reason="\#(reason.rawValue)"}"#
        let text = String(decoding: metrics.exposition(channels: []), as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    func remove() { try? FileManager.default.removeItem(atPath: stateDirectory) }
}

extension RawClient {
    /// Sends `request` (`head`, then `body` in pieces of at most 64 KiB) on a connection of its own
    /// and returns the answer.
    static func exchange(port: Int, head: String, body: [UInt8] = []) async throws -> RawResponse? {
        try await connect(port: port).run { inbound, outbound in
            var inbound = inbound
            try await outbound.write(ByteBuffer(string: head))
            for start in stride(from: 0, to: body.count, by: 64 * 1024) {
                try await outbound.write(ByteBuffer(bytes: body[start..<min(start + 64 * 1024, body.count)]))
            }
            var bytes: [UInt8] = []
            return try await inbound.nextResponse(buffered: &bytes)
        }
    }
}

extension NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator {
    /// Reads until one whole response is buffered and returns it, keeping in `bytes` what follows
    /// (a keep-alive connection's next response); `nil` if the peer closes first.
    mutating func nextResponse(buffered bytes: inout [UInt8]) async throws -> RawResponse? {
        while true {
            if let (response, next) = RawResponse.parse(bytes, from: 0, bodiless: false) {
                bytes.removeFirst(next)
                return response
            }
            guard let chunk = try await next() else { return nil }
            bytes.append(chunk)
        }
    }
}
