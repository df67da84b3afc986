#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HeadwaterCore
import HeadwaterHLS
import HeadwaterStitching
import NIOCore
import NIOHTTP1

/// `GET /api/status`: what the status page (`Public/index.html`) draws, as JSON. Every channel's
/// state and its ``ChannelStatus`` (renditions with their segment timelines, stalls, ingest
/// counts), plus the one figure that depends on the request's instant: the live-edge age.
///
/// ```json
/// {"channels":[{"liveEdgeAgeSeconds":0.84,"name":"demo","state":"live","status":{…}}],
///  "generatedAt":1763756400000,"server":{"uptimeSeconds":42,"version":"0.1.0-dev"}}
/// ```
///
/// - `generatedAt`: ms since the Unix epoch, the instant ages are measured at;
/// - `channels[].state`: `starting`, `live` or `degraded` (then `degradedReason` says why);
/// - `channels[].liveEdgeAgeSeconds`: now − `status.lastSegmentAt`, absent before the first
///   segment; clamped at 0 (a source clock slightly ahead is not a negative age);
/// - `channels[].status`: ``ChannelStatus`` as it encodes (times in µs since the epoch);
/// - `channels[].breaks`: the ad breaks in the channel's break log, when it stitches ads.
///
/// Keys are sorted so the output is stable. `Cache-Control: no-store`: it is about the present.
/// Encoding costs one `JSONEncoder` pass per request, which is fine for a page polling every 2 s;
/// this is not a hot path.
struct StatusAPI: Sendable {
    /// The instant ages and uptime are measured at.
    var clock: any WallClock
    /// When the server started, µs since the epoch.
    var startedAt: Int64
    var version: String

    init(clock: any WallClock = SystemWallClock(), startedAt: Int64? = nil, version: String = HeadwaterVersion.current) {
        self.clock = clock
        self.startedAt = startedAt ?? clock.now()
        self.version = version
    }

    struct Document: Encodable {
        struct Server: Encodable {
            var version: String
            var uptimeSeconds: Int64
        }

        struct Channel: Encodable {
            var name: String
            var state: String
            var degradedReason: String?
            var liveEdgeAgeSeconds: Double?
            /// Absent only for a configured channel that has published nothing at all.
            var status: ChannelStatus?
            /// The ad breaks the channel's break log still holds (oldest first), when it stitches ads.
            var breaks: [Break]?
        }

        /// One ad break; times in µs since the epoch, like ``ChannelStatus``.
        struct Break: Encodable {
            var id: String
            var startMediaSequence: UInt64
            var startedAt: Int64
            var plannedDurationSeconds: Double
            /// Absent while the break is in progress.
            var endMediaSequence: UInt64?
            var durationSeconds: Double?
        }

        /// ms since the epoch.
        var generatedAt: Int64
        var server: Server
        var channels: [Channel]
    }

    /// The document for `content` at `now` (µs).
    func document(content: any OriginContent, now: Int64) -> Document {
        var channels: [Document.Channel] = []
        for name in content.channelNames {
            guard let snapshot = content.snapshot(of: name) else {
                channels.append(Document.Channel(name: name, state: "starting"))
                continue
            }
            var channel = Document.Channel(name: name, state: "live", status: snapshot.status)
            switch snapshot.state {
            case .starting: channel.state = "starting"
            case .live: channel.state = "live"
            case .degraded(let reason):
                channel.state = "degraded"
                channel.degradedReason = reason
            }
            channel.breaks = snapshot.stitching?.breaks.breaks.map { adBreak in
                Document.Break(
                    id: adBreak.id, startMediaSequence: adBreak.startMediaSequence,
                    startedAt: adBreak.startDate.millisecondsSinceEpoch * 1000,
                    plannedDurationSeconds: Double(adBreak.plannedDuration.microseconds) / 1e6,
                    endMediaSequence: adBreak.end?.mediaSequence,
                    durationSeconds: adBreak.actualDuration.map { Double($0.microseconds) / 1e6 })
            }
            if let last = snapshot.status.lastSegmentAt {
                // Whole milliseconds: enough for a page, and stable output for tests.
                channel.liveEdgeAgeSeconds = Double(max(0, now - last) / 1_000) / 1_000
            }
            channels.append(channel)
        }
        return Document(
            generatedAt: now / 1_000,
            server: Document.Server(version: version, uptimeSeconds: max(0, now - startedAt) / 1_000_000),
            channels: channels
        )
    }

    func response(content: any OriginContent) -> OriginResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body: Data
        do {
            body = try encoder.encode(document(content: content, now: clock.now()))
        } catch {
            // Only a non-finite Double could fail, and durations and ages are finite.
            return .error(.internalServerError, "cannot encode the status", cachePolicy: CachePolicy(.health))
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: ContentType.json.value)
        var buffer = ByteBuffer()
        buffer.reserveCapacity(body.count + 1)
        buffer.writeBytes(body)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return OriginResponse(status: .ok, headers: headers, body: .bytes(buffer), cachePolicy: CachePolicy(.health))
    }
}
