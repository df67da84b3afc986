import Synchronization

/// Viewer requests answered per channel, for the status page's request and error rates
/// (`/api/status`, `channels[].traffic`): `/metrics` labels requests by route template, never by
/// channel, so it cannot say which channel is failing.
///
/// Kept on the server rather than derived from successive polls by the page: a page just opened
/// shows the last minute at once, every viewer of the page (and `curl`) sees the same figures, and
/// a throttled background tab does not skew them.
///
/// Counts `/live/{channel}/…` and `/ssai/{channel}/…` requests (what players and CDNs ask for;
/// ingest has its own counts in ``ChannelStatus/Ingest``) into one-second buckets, the last
/// ``windowSeconds`` of them kept, plus totals since the server started. One short lock per
/// request. Names come from request paths, so a channel that does not exist could be named: at
/// most ``maxChannels`` are kept, and ``forget(allBut:)`` (each `/api/status`) drops the names
/// that are not configured channels.
final class ChannelTraffic: Sendable {
    /// Seconds the rates are measured over.
    static let windowSeconds = 60
    /// Names kept at most between two ``forget(allBut:)`` calls.
    static let maxChannels = 256

    /// Requests by status class.
    struct Counts: Sendable, Hashable {
        var requests: UInt64 = 0
        /// 4xx answers.
        var clientErrors: UInt64 = 0
        /// 5xx answers.
        var serverErrors: UInt64 = 0

        mutating func add(status: Int) {
            requests += 1
            if (400..<500).contains(status) { clientErrors += 1 } else if (500..<600).contains(status) { serverErrors += 1 }
        }

        mutating func add(_ other: Counts) {
            requests += other.requests
            clientErrors += other.clientErrors
            serverErrors += other.serverErrors
        }
    }

    /// One channel's figures at an instant.
    struct Reading: Sendable, Hashable {
        /// Since the server started.
        var total: Counts
        /// Within the last ``seconds`` seconds.
        var recent: Counts
        /// What ``recent`` covers: ``windowSeconds``, or less when the channel's first request was
        /// more recent than that (so a rate is not diluted by time nobody was counting).
        var seconds: Int
    }

    private struct Series {
        var total = Counts()
        /// Unix second of the first request counted.
        var since: Int64
        /// Bucket `second % windowSeconds` holds `second`'s counts, if its `second` is that one.
        var buckets = [(second: Int64, counts: Counts)](repeating: (.min, Counts()), count: ChannelTraffic.windowSeconds)

        init(since: Int64) { self.since = since }

        mutating func add(status: Int, at second: Int64) {
            total.add(status: status)
            let window = Int64(ChannelTraffic.windowSeconds)
            let slot = Int((second % window + window) % window)
            if buckets[slot].second != second { buckets[slot] = (second, Counts()) }
            buckets[slot].counts.add(status: status)
        }

        func reading(at now: Int64) -> Reading {
            var recent = Counts()
            let window = Int64(ChannelTraffic.windowSeconds)
            for bucket in buckets where bucket.second > now - window && bucket.second <= now { recent.add(bucket.counts) }
            let seconds = Int(max(1, min(window, now - since + 1)))
            return Reading(total: total, recent: recent, seconds: seconds)
        }
    }

    private let table = Mutex<[String: Series]>([:])

    init() {}

    /// Counts one answered request. `route` is its template (``Route/template``), `path` its
    /// request-target (a query is ignored), `second` the Unix second it arrived.
    func record(route: String, path: String, status: Int, at second: Int64) {
        guard route.hasPrefix("/live/{channel}/") || route.hasPrefix("/ssai/{channel}/"),
            let channel = Self.channel(inPath: path)
        else { return }
        table.withLock { table in
            if table[channel] == nil {
                guard table.count < Self.maxChannels else { return }
                table[channel] = Series(since: second)
            }
            table[channel]!.add(status: status, at: second)
        }
    }

    /// `channel`'s figures at Unix second `now`; `nil` before its first request.
    func reading(channel: String, at now: Int64) -> Reading? {
        table.withLock { $0[channel]?.reading(at: now) }
    }

    /// Drops every name but `channels` (the configured ones).
    func forget(allBut channels: Set<String>) {
        table.withLock { table in
            guard table.keys.contains(where: { !channels.contains($0) }) else { return }
            table = table.filter { channels.contains($0.key) }
        }
    }

    /// The second path segment: `demo` in `/live/demo/v1.m3u8` or `/ssai/demo/master.m3u8?device=tv`.
    /// Scans the bytes in place (no array of segments): this runs once per viewer request.
    static func channel(inPath path: String) -> String? {
        let utf8 = path.utf8
        let slash = UInt8(ascii: "/")
        let query = UInt8(ascii: "?")
        var index = utf8.startIndex
        // Skip the first segment (`live`, `ssai`), with any leading slash.
        if index < utf8.endIndex, utf8[index] == slash { index = utf8.index(after: index) }
        while index < utf8.endIndex, utf8[index] != slash {
            if utf8[index] == query { return nil }
            index = utf8.index(after: index)
        }
        guard index < utf8.endIndex else { return nil }
        let start = utf8.index(after: index)
        var end = start
        while end < utf8.endIndex, utf8[end] != slash, utf8[end] != query { end = utf8.index(after: end) }
        guard end > start else { return nil }
        return String(Substring(utf8[start..<end]))
    }
}
