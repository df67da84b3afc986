import HeadwaterRuntime
import NIOCore
import NIOHTTP1

/// One event loop's file response heads (segments and static files), so ``OriginFastPath``
/// answers a plain `GET` or `HEAD` of a file, whole or with one `Range`, without building
/// `HTTPHeaders`, an ETag or a `Content-Range` as `String`s on every request: the fields that
/// belong to a file version are encoded once per version and wall-clock second, and only the
/// status line, `Content-Range` and `Content-Length` are written per request, as integers.
///
/// Why: a 188 KiB range request spent about a quarter of its user time building and encoding
/// those fields (`perf`, `headwater-bench all`), where nginx writes its head from integers.
///
/// The fields come from the full path's own response (``OriginResponder`` and
/// ``OriginHTTPHandler/responseFields(of:bodyLength:keepAlive:version:now:cors:dates:)``), so both
/// paths send the same head. An entry's version stays current while:
/// - a segment: nothing was published since it was looked up (``OriginContent/publishCount``), so
///   the window still lists the same file with the same length and ETag;
/// - a static file: `fstat` of the file just opened says the same modification time and size (its
///   ETag is made of the two).
/// Otherwise ``OriginFastPath`` asks the responder again and the entry is re-encoded.
///
/// Two generations of entries: when the newer one is full it becomes the older one and the
/// older one is dropped, so live segments that left the window fall out while the hot ones
/// (found in the older generation, moved to the newer) stay. Confined to its event loop
/// (``LoopLocal``): no locks.
///
/// Up to ``heldCapacity`` entries also keep their file open (``SharedFile``), so the next
/// request needs no `open`: only `fstat` of the open descriptor (``OpenFile/isUnchanged()``:
/// same size and modification time, still linked). A kept descriptor is used while its entry's
/// version stays current (as above) and, for a static file, within the second it was opened in:
/// a static file is opened by its path again in each new second, so one replaced in a way `fstat`
/// of the old descriptor cannot see (its directory swapped for another) is served within a second.
final class PreencodedFileHeads {
    /// A request-target known to name a file, and its encoded head.
    final class Entry {
        let target: [UInt8]
        /// `target` as text, for the access log.
        let uri: String
        let route: Route
        /// The version encoded: the file's path, length and modification time, the 200 it was
        /// encoded from (no body: the source of its fields), and for a segment the publish count
        /// read before it was looked up. The path keeps its root and symlink policy, so the file is
        /// opened again exactly as the responder opened it (``OpenFile/open(_:resolvingInKernel:)``).
        private(set) var path: ConfinedPath
        private(set) var length: Int64
        private(set) var lastModified: Int64?
        private(set) var entityTag: String?
        private var response: OriginResponse
        var publishCount: UInt64?
        /// The fields before `Content-Length` (`Date` … `ETag`), and after it (CORS) through the
        /// empty line, as of ``second``.
        private(set) var leading = ByteBuffer()
        private(set) var trailing = ByteBuffer()
        private var second: Int64 = .min
        /// The file, kept open between requests (``PreencodedFileHeads/hold(_:for:now:)``).
        fileprivate(set) var held: SharedFile?
        /// Metric series of `GET` 200, `HEAD` 200, `GET` 206, `HEAD` 206, looked up on first use.
        private var series: [OriginMetrics.RequestSeries?] = [nil, nil, nil, nil]

        /// An entry for `target`, from the responder's 200 to a `GET` of it.
        init(target: [UInt8], uri: String, route: Route, file: OpenFile, response: OriginResponse) {
            self.target = target
            self.uri = uri
            self.route = route
            self.path = file.path
            self.length = response.bodyLength
            self.response = response
            self.response.body = .empty
            self.lastModified = response.lastModified
            self.entityTag = response.headers.first(name: "etag")
        }

        /// Takes the version in `response` (a 200 for `file`) if it differs from the one encoded.
        func update(file: OpenFile, response: OriginResponse) {
            let entityTag = response.headers.first(name: "etag")
            let length = response.bodyLength
            guard file.path != path || length != self.length || entityTag != self.entityTag
                || response.lastModified != lastModified
            else { return }
            path = file.path
            self.length = length
            self.entityTag = entityTag
            lastModified = response.lastModified
            self.response = response
            self.response.body = .empty
            second = .min
        }

        /// Every field passed ``HTTP1ResponseWriter``'s check; if not, the full path answers (and
        /// refuses the head).
        private(set) var fieldsAreValid = true

        /// Encodes the fields for `now` unless they are already for this second.
        func encodeFields(now: Int64, cors: Bool, dates: inout ResponseDates) {
            guard second != now else { return }
            second = now
            leading.clear()
            trailing.clear()
            var afterLength = false
            var valid = true
            OriginHTTPHandler.forEachResponseField(
                of: response, bodyLength: length, keepAlive: true, version: .http1_1, now: now, cors: cors, dates: &dates
            ) { name, value in
                if name == "Content-Length" {
                    afterLength = true
                } else if afterLength {
                    valid = HTTP1ResponseWriter.writeField(name, value, to: &trailing) && valid
                } else {
                    valid = HTTP1ResponseWriter.writeField(name, value, to: &leading) && valid
                }
            }
            trailing.writeStaticString("\r\n")
            fieldsAreValid = valid
        }

        /// The series of a 200 or 206 to a `GET` or `HEAD`, looked up in `metrics` on first use.
        func series(head: Bool, partial: Bool, metrics: OriginMetrics) -> OriginMetrics.RequestSeries {
            let index = (head ? 1 : 0) + (partial ? 2 : 0)
            if let known = series[index] { return known }
            let found = metrics.requestSeries(route: route.template, method: head ? "HEAD" : "GET", status: partial ? 206 : 200)
            series[index] = found
            return found
        }
    }

    /// Entries per generation.
    static let generationCapacity = 1024
    /// Open files kept, at most, per event loop: the hot set of a live origin (each rendition's
    /// newest segments, the player's and the status page's files), well inside the 1,024
    /// descriptors a process may have by default.
    static let heldCapacity = 128

    private var newer: [UInt64: [Entry]] = [:]
    private var newerCount = 0
    private var older: [UInt64: [Entry]] = [:]
    /// Entries whose file is kept open.
    private(set) var heldCount = 0

    init() {}

    deinit {
        for entry in newer.values.joined() { release(entry) }
        for entry in older.values.joined() { release(entry) }
    }

    /// `file`, just opened for `entry`'s current version, for one response (``SharedFile/use()``
    /// done): kept open as `entry`'s (replacing the one it kept) while fewer than
    /// ``heldCapacity`` are kept, else closed once that response is done.
    func hold(_ file: OpenFile, for entry: Entry, now: Int64) -> SharedFile {
        release(entry)
        guard heldCount < Self.heldCapacity else { return SharedFile(file, kept: false, openedSecond: now).use() }
        let shared = SharedFile(file, kept: true, openedSecond: now)
        entry.held = shared
        heldCount += 1
        return shared.use()
    }

    /// Stops keeping `entry`'s file open (closed once the responses sending it are done).
    func release(_ entry: Entry) {
        guard let held = entry.held else { return }
        entry.held = nil
        heldCount -= 1
        held.drop()
    }

    /// The entry for `target`, whose ``PreencodedPlaylists/hash(_:)`` is `hash`, if remembered
    /// (moved to the newer generation if it was in the older).
    func entry(for target: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Entry? {
        if let found = newer[hash]?.first(where: { $0.target.elementsEqual(target) }) { return found }
        guard let bucket = older[hash], let index = bucket.firstIndex(where: { $0.target.elementsEqual(target) }) else {
            return nil
        }
        let found = bucket[index]
        older[hash]?.remove(at: index)
        insert(found, hash: hash)
        return found
    }

    /// Remembers `entry` in the newer generation.
    func remember(_ entry: Entry) {
        insert(entry, hash: entry.target.withUnsafeBufferPointer { PreencodedPlaylists.hash($0) })
    }

    /// Forgets `entry` (its target no longer names a file that answers 200).
    func forget(_ entry: Entry) {
        release(entry)
        let hash = entry.target.withUnsafeBufferPointer { PreencodedPlaylists.hash($0) }
        if let index = newer[hash]?.firstIndex(where: { $0 === entry }) {
            newer[hash]?.remove(at: index)
            newerCount -= 1
        }
        older[hash]?.removeAll { $0 === entry }
    }

    private func insert(_ entry: Entry, hash: UInt64) {
        if newerCount >= Self.generationCapacity {
            for dropped in older.values.joined() { release(dropped) }
            older = newer
            newer = [:]
            newerCount = 0
        }
        newer[hash, default: []].append(entry)
        newerCount += 1
    }

    /// Entries remembered, both generations (for tests).
    var count: Int {
        newerCount + older.values.reduce(0) { $0 + $1.count }
    }
}

extension ByteBuffer {
    /// Writes `value` (≥ 0) in decimal, without making a `String`.
    mutating func writeDecimal(_ value: Int64) {
        precondition(value >= 0, "a length or position is never negative")
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 24 digits; Int64 has at most 19
        let count = withUnsafeMutableBytes(of: &digits) { raw in
            var remaining = UInt64(value)
            var end = raw.count
            repeat {
                end -= 1
                raw[end] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            } while remaining > 0
            return raw.count - end
        }
        withUnsafeBytes(of: &digits) { raw in
            _ = writeBytes(UnsafeRawBufferPointer(rebasing: raw[(raw.count - count)...]))
        }
    }
}
