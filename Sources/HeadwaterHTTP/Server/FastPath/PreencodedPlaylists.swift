import HeadwaterLiveWindow
import HeadwaterRuntime
import NIOCore
import NIOHTTP1

/// One event loop's shared playlist responses, each encoded whole (status line, fields, body) once
/// per playlist version and wall-clock second, in identity and gzip form, so ``OriginFastPath``
/// answers a request by writing one buffer it already has.
///
/// The bytes come from the full path's own parts (``OriginResponder/serve(_:cachePolicy:fields:)``
/// and ``OriginHTTPHandler/responseFields(of:bodyLength:keepAlive:version:now:cors:dates:)``), so
/// both paths answer alike; `Date` and `Expires` are why an encoding lasts one second at most.
/// Confined to its event loop (one per loop, ``LoopLocal``): no locks.
final class PreencodedPlaylists {
    /// One encoded response.
    struct Encoded {
        /// Status line, fields, empty line and body.
        var bytes: ByteBuffer
        /// Bytes up to and including the empty line (what a `HEAD` gets).
        var headLength: Int
        /// For the access log and metrics.
        var bodyLength: Int64
        var uncompressedLength: Int64
        var contentEncoding: String?
    }

    /// A request-target known to name a shared playlist, and its current encodings.
    final class Entry {
        let target: [UInt8]
        /// `target` as text, for the access log (made once, not per request).
        let uri: String
        let channel: String
        /// `nil` for the multivariant playlist.
        let playlist: OriginResponder.SharedPlaylist
        /// The route template, for the access log and metrics.
        let template: String
        /// The identity ETag of the version encoded, and the second the encodings are for.
        var entityTag = ""
        var second: Int64 = .min
        /// ``OriginContent/publishCount`` read before the version encoded was fetched: while it
        /// stays the same, that version is still current.
        var publishCount: UInt64?
        /// Metric series of this playlist's `GET` and `HEAD` 200s, looked up on first use.
        var getSeries: OriginMetrics.RequestSeries?
        var headSeries: OriginMetrics.RequestSeries?
        var identity: Encoded?
        var gzip: Encoded?

        init(target: [UInt8], channel: String, playlist: OriginResponder.SharedPlaylist, template: String) {
            self.target = target
            self.uri = String(decoding: target, as: UTF8.self)
            self.channel = channel
            self.playlist = playlist
            self.template = template
        }
    }

    /// Distinct request-targets remembered; past this, new ones take the full path. A target is
    /// remembered only once it answered 200, so the bound is on real playlists' spellings.
    static let capacity = 512

    private var entries: [UInt64: [Entry]] = [:]
    private var count = 0

    init() {}

    /// The entry for `target`, whose ``hash(_:)`` is `hash`, if remembered.
    func entry(for target: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Entry? {
        guard let bucket = entries[hash] else { return nil }
        return bucket.first { $0.target.elementsEqual(target) }
    }

    /// Remembers `entry`, unless full.
    func remember(_ entry: Entry) {
        guard count < Self.capacity else { return }
        count += 1
        let hash = entry.target.withUnsafeBufferPointer { Self.hash($0) }
        entries[hash, default: []].append(entry)
    }

    /// FNV-1a of a request-target's bytes, the key of both fast-path caches.
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash = FNV1a64.offsetBasis
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* FNV1a64.prime }
        return hash
    }

    /// Encodes `response` (a 200 with a bytes body) whole, as the full path would write it on a
    /// keep-alive HTTP/1.1 connection at `now`.
    static func encode(
        _ response: OriginResponse,
        now: Int64,
        cors: Bool,
        dates: inout ResponseDates
    ) -> Encoded? {
        guard case .bytes(let body) = response.body, response.status == .ok else { return nil }
        let fields = OriginHTTPHandler.responseFields(
            of: response, bodyLength: Int64(body.readableBytes), keepAlive: true, version: .http1_1, now: now,
            cors: cors, dates: &dates)
        var bytes = ByteBuffer()
        bytes.reserveCapacity(256 + body.readableBytes)
        guard HTTP1ResponseWriter.writeHead(status: response.status, fields: fields, to: &bytes) else { return nil }
        let headLength = bytes.readableBytes
        bytes.writeImmutableBuffer(body)
        return Encoded(
            bytes: bytes,
            headLength: headLength,
            bodyLength: Int64(body.readableBytes),
            uncompressedLength: response.uncompressedLength ?? Int64(body.readableBytes),
            contentEncoding: response.headers.first(name: "content-encoding")
        )
    }
}
