import Foundation
@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterTesting
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization
import Testing

/// `OriginFastPath` answering segments and static files from `PreencodedFileHeads`: the same head
/// as the full path, each file version noticed on the next request, the rest left to the full path.
/// Bodies here are at most 16 KiB, so they travel in the head's write and an `EmbeddedChannel`
/// sees them; larger ones (`sendfile`) are covered over a real socket in `ServerSocketTests`.
@Suite("File fast path")
struct FileFastPathTests {
    private func get(_ path: String, _ extra: String = "", method: String = "GET") -> String {
        "\(method) \(path) HTTP/1.1\r\nHost: origin\r\n\(extra)\r\n"
    }

    /// A condition that always holds makes the full path answer the same request with a 200 or 206.
    private static let forceFullPath = "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n"

    @Test(arguments: [false, true])
    func bothPathsSendTheSameResponse(cors: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let segmentBytes = patternBytes(count: 5000, seed: 1)
        let segmentPath = try directory.write("media/seg1.ts", segmentBytes)
        let pageBytes = patternBytes(count: 16 * 1024, seed: 2)
        try directory.write("public/app.js", pageBytes)
        let content = Fixture.content(segments: ["seg1.ts": segmentFile(path: segmentPath, length: 4000, tag: "s1")])
        let harness = try PipelineHarness(content: content, cors: cors, publicDirectory: directory.path + "/public")
        defer { harness.finish() }

        let targets = [("/live/demo/v1/seg1.ts", Array(segmentBytes.prefix(4000))), ("/app.js", pageBytes)]
        let ranges: [(String, Range<Int>?)] = [
            ("", nil), ("Range: bytes=0-9\r\n", 0..<10), ("Range: bytes=-5\r\n", nil), ("Range: bytes=100-\r\n", nil),
            ("Range: bytes=2-1\r\n", nil),  // invalid: ignored, a 200
        ]
        for (target, bytes) in targets {
            for (range, expected) in ranges {
                for method in ["GET", "HEAD"] {
                    let isHead = method == "HEAD"
                    let full = try harness.send(get(target, range + Self.forceFullPath, method: method), head: isHead)
                    let finishedBefore = harness.fullPath.responsesFinished
                    let fast = try harness.send(get(target, range, method: method), head: isHead)
                    let label = "\(method) \(target) \(range)"
                    #expect(harness.fullPath.responsesFinished == finishedBefore, "\(label) took the full path")
                    #expect(fast.status == full.status, "\(label)")
                    #expect(fast.headers.map { "\($0.0): \($0.1)" } == full.headers.map { "\($0.0): \($0.1)" }, "\(label)")
                    #expect(fast.body == full.body, "\(label)")
                    if let expected, !isHead { #expect(fast.body == Array(bytes[expected]), "\(label)") }
                }
            }
            let whole = try harness.send(get(target))
            #expect(whole.status == 200 && whole.body == bytes, "\(target)")
            let tail = try harness.send(get(target, "Range: bytes=-5\r\n"))
            #expect(tail.status == 206 && tail.body == Array(bytes.suffix(5)), "\(target)")
            #expect(tail.header("Content-Range") == "bytes \(bytes.count - 5)-\(bytes.count - 1)/\(bytes.count)")
        }
    }

    @Test func anUnsatisfiableRangeIsTheFullPaths416() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("a.txt", Array("hello".utf8))
        let harness = try PipelineHarness(publicDirectory: directory.path)
        defer { harness.finish() }
        #expect(try harness.send(get("/a.txt")).status == 200)
        let refused = try harness.send(get("/a.txt", "Range: bytes=10-\r\n"))
        #expect(refused.status == 416)
        #expect(refused.header("Content-Range") == "bytes */5")
        #expect(harness.fullPath.responsesFinished == 1)
        // Back at a request boundary: the fast path answers again.
        #expect(try harness.send(get("/a.txt", "Range: bytes=1-2\r\n")).text == "el")
        #expect(harness.fullPath.responsesFinished == 1)
    }

    @Test func aStaticFileRewrittenIsServedAsItsNewVersion() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try directory.write("index.html", Array("first".utf8))
        let harness = try PipelineHarness(publicDirectory: directory.path)
        defer { harness.finish() }
        let first = try harness.send(get("/"))
        #expect(first.text == "first")

        // Same size, another modification time: a new ETag and Last-Modified.
        try directory.write("index.html", Array("later".utf8))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000_000)], ofItemAtPath: path)
        let second = try harness.send(get("/"))
        #expect(second.text == "later")
        #expect(second.header("ETag") != first.header("ETag"))
        #expect(second.header("Last-Modified") == HTTPDate.format(unixSeconds: 1_000_000_000))

        // Another size: the new length everywhere.
        try directory.write("index.html", Array("much longer".utf8))
        let third = try harness.send(get("/", "Range: bytes=5-\r\n"))
        #expect(third.status == 206 && third.text == "longer")
        #expect(third.header("Content-Range") == "bytes 5-10/11")

        try FileManager.default.removeItem(atPath: path)
        #expect(try harness.send(get("/")).status == 404)
        #expect(harness.fullPath.responsesFinished == 1)
    }

    @Test func aNewSecondGetsItsOwnDateAndExpires() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("a.txt", Array("hello".utf8))
        let clock = Mutex<Int64>(Fixture.publishedAt + 100)
        let harness = try PipelineHarness(publicDirectory: directory.path, now: { clock.withLock { $0 } })
        defer { harness.finish() }
        let first = try harness.send(get("/a.txt"))
        #expect(first.header("Date") == HTTPDate.format(unixSeconds: Fixture.publishedAt + 100))
        clock.withLock { $0 += 1 }
        let second = try harness.send(get("/a.txt", "Range: bytes=0-0\r\n"))
        #expect(second.header("Date") == HTTPDate.format(unixSeconds: Fixture.publishedAt + 101))
        #expect(second.header("Expires") == HTTPDate.format(unixSeconds: Fixture.publishedAt + 101 + 60))
        #expect(second.text == "h" && harness.fullPath.responsesFinished == 0)
    }

    /// The registry counts publishes: while nothing is published the fast path reopens the file it
    /// knows without a lookup; after a publish it looks again.
    @Test func aSegmentFollowsTheWindowAcrossPublishes() throws {
        let window = try SegmentWindow()
        defer { window.remove() }
        let (directory, pathB, harness) = (window.directory, window.pathB, window.harness)
        defer { harness.finish() }
        let first = try harness.send(get("/live/demo/v1/seg.ts"))
        #expect(first.header("ETag") == "\"a\"" && sameBytes(first.body, patternBytes(count: 3000, seed: 3)))
        #expect(try harness.send(get("/live/demo/v1/seg.ts")).header("Content-Length") == "3000")

        try window.publish(["seg.ts": segmentFile(path: pathB, length: 2000, tag: "b")])
        let second = try harness.send(get("/live/demo/v1/seg.ts", "Range: bytes=0-\r\n"))
        #expect(second.status == 206 && second.header("ETag") == "\"b\"")
        #expect(second.header("Content-Range") == "bytes 0-1999/2000")
        #expect(sameBytes(second.body, patternBytes(count: 2000, seed: 4)))
        #expect(harness.fullPath.responsesFinished == 0)

        // Shorter on disk than listed, with nothing published: the full path answers 404.
        try directory.write("b.ts", patternBytes(count: 10, seed: 4))
        #expect(try harness.send(get("/live/demo/v1/seg.ts")).status == 404)
        #expect(harness.fullPath.responsesFinished == 1)

        // Out of the window.
        try window.publish([:])
        #expect(try harness.send(get("/live/demo/v1/seg.ts")).status == 404)
        #expect(harness.fullPath.responsesFinished == 2)
    }

    // MARK: - Files kept open

    /// The descriptors this process has open on files under `directory` (`/proc/self/fd`), as the
    /// paths they were opened by (a deleted or replaced file's ends in ` (deleted)`).
    static func openFiles(under directory: String) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
            .filter { $0.hasPrefix(directory + "/") }
            .sorted()
    }

    @Test func aKnownSegmentIsSentFromTheDescriptorKeptOpenUntilAPublish() throws {
        let window = try SegmentWindow()
        defer { window.remove() }
        let (directory, pathA, pathB, harness) = (window.directory, window.pathA, window.pathB, window.harness)
        defer { harness.finish() }
        for range in ["", "Range: bytes=10-19\r\n", "Range: bytes=-5\r\n"] {
            let response = try harness.send(get("/live/demo/v1/seg.ts", range))
            #expect(response.status == (range.isEmpty ? 200 : 206))
        }
        #expect(Self.openFiles(under: directory.path) == [pathA], "one descriptor, kept")
        let kept = try #require(harness.fileHeads.value.count == 1 ? harness.fileHeads.value.heldCount : nil)
        #expect(kept == 1)

        // After a publish the entry looks again, and keeps the file it finds instead.
        try window.publish(["seg.ts": segmentFile(path: pathB, length: 2000, tag: "b")])
        let second = try harness.send(get("/live/demo/v1/seg.ts"))
        #expect(second.header("ETag") == "\"b\"" && sameBytes(second.body, patternBytes(count: 2000, seed: 4)))
        #expect(Self.openFiles(under: directory.path) == [pathB], "the old descriptor closed, the new one kept")

        // Truncated on disk under the kept descriptor, with nothing published, its modification
        // time put back: `fstat` notices by the size.
        var before = stat()
        #expect(stat(pathB, &before) == 0)
        try directory.write("b.ts", patternBytes(count: 10, seed: 4))
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, pathB, &times, 0) == 0)
        #expect(try harness.send(get("/live/demo/v1/seg.ts")).status == 404)
        #expect(Self.openFiles(under: directory.path).isEmpty)
        #expect(harness.fileHeads.value.heldCount == 0)
    }

    /// A static file replaced by a rename over it (how deploy tools write), with the same size and
    /// modification time: only the old file's link count says it changed.
    @Test func aStaticFileRenamedOverIsNoticedAtOnce() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try directory.write("public/page.js", Array("first".utf8))
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
        let harness = try PipelineHarness(publicDirectory: directory.path + "/public")
        defer { harness.finish() }
        #expect(try harness.send(get("/page.js")).text == "first")
        #expect(Self.openFiles(under: directory.path) == [path])

        let staged = try directory.write("staged.js", Array("other".utf8))
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: staged)
        #expect(rename(staged, path) == 0)
        let second = try harness.send(get("/page.js"))
        #expect(second.text == "other")
        #expect(Self.openFiles(under: directory.path) == [path], "the replaced file's descriptor closed")
        #expect(harness.fullPath.responsesFinished == 0)
    }

    @Test func aStaticFileIsOpenedAgainInEachNewSecond() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("public/a.txt", Array("hello".utf8))
        let clock = Mutex<Int64>(Fixture.publishedAt + 100)
        let harness = try PipelineHarness(publicDirectory: directory.path + "/public", now: { clock.withLock { $0 } })
        defer { harness.finish() }
        #expect(try harness.send(get("/a.txt")).text == "hello")
        // The directory swapped for another: the old file is still linked (in `old`), so `fstat`
        // of its descriptor sees no change…
        try FileManager.default.moveItem(atPath: directory.path + "/public", toPath: directory.path + "/old")
        try directory.write("public/a.txt", Array("HELLO".utf8))
        #expect(try harness.send(get("/a.txt")).text == "hello", "kept within the second")
        // …and in the next second the path is opened again.
        clock.withLock { $0 += 1 }
        #expect(try harness.send(get("/a.txt")).text == "HELLO")
        #expect(Self.openFiles(under: directory.path) == [directory.path + "/public/a.txt"])
    }

    @Test func atMostTheCapacityOfFilesIsKeptOpen() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let capacity = PreencodedFileHeads.heldCapacity
        for index in 0..<(capacity + 20) { try directory.write("public/\(index).txt", Array("file \(index)".utf8)) }
        let harness = try PipelineHarness(publicDirectory: directory.path + "/public")
        defer { harness.finish() }
        for round in 0..<2 {
            for index in 0..<(capacity + 20) {
                #expect(try harness.send(get("/\(index).txt")).text == "file \(index)", "round \(round)")
            }
        }
        #expect(Self.openFiles(under: directory.path).count == capacity)
        #expect(harness.fileHeads.value.heldCount == capacity)
    }
}

@Suite("Preencoded file heads")
struct PreencodedFileHeadsTests {
    private func entry(_ name: String, file: OpenFile) -> PreencodedFileHeads.Entry {
        var response = OriginResponse(status: .ok, body: .file(file, offset: 0, count: file.size))
        response.headers.add(name: "ETag", value: "\"x\"")
        return PreencodedFileHeads.Entry(
            target: Array(name.utf8), uri: name, route: .staticFile(path: [name]), file: file, response: response)
    }

    private func find(_ heads: PreencodedFileHeads, _ name: String) -> PreencodedFileHeads.Entry? {
        Array(name.utf8).withUnsafeBufferPointer { heads.entry(for: $0, hash: PreencodedPlaylists.hash($0)) }
    }

    /// Two generations: the newest entries and the ones found since the last turnover stay; the
    /// rest are dropped, so the cache holds at most two generations' worth.
    @Test func hotEntriesSurviveTurnoverAndTheRestAreDropped() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try directory.write("f", [1, 2, 3])
        guard case .success(let file) = OpenFile.open(ConfinedPath(file: path, symlinks: .never)) else {
            Issue.record("cannot open \(path)")
            return
        }
        defer { file.close() }
        let heads = PreencodedFileHeads()
        let capacity = PreencodedFileHeads.generationCapacity
        heads.remember(entry("/hot", file: file))
        for index in 0..<(3 * capacity) {
            heads.remember(entry("/cold\(index)", file: file))
            if index % (capacity / 2) == 0 { #expect(find(heads, "/hot") != nil, "hot entry lost at \(index)") }
            #expect(heads.count <= 2 * capacity)
        }
        #expect(find(heads, "/hot") != nil)
        #expect(find(heads, "/cold0") == nil)
        #expect(find(heads, "/cold\(3 * capacity - 1)") != nil)

        let hot = try #require(find(heads, "/hot"))
        heads.forget(hot)
        #expect(find(heads, "/hot") == nil)
    }

    /// A kept file dropped while a response is sending it stays open until that response is done;
    /// entries that leave the cache (forgotten, or in a generation dropped) close theirs.
    @Test func keptFilesCloseWhenDroppedAndUnused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try directory.write("f", [1, 2, 3])
        func open() throws -> OpenFile {
            guard case .success(let file) = OpenFile.open(ConfinedPath(file: path, symlinks: .never)) else { throw CancellationError() }
            return file
        }
        let heads = PreencodedFileHeads()
        let first = try open()
        let hot = entry("/hot", file: first)
        heads.remember(hot)
        let sending = heads.hold(first, for: hot, now: 1)
        #expect(heads.heldCount == 1 && FileFastPathTests.openFiles(under: directory.path).count == 1)
        heads.forget(hot)
        #expect(heads.heldCount == 0)
        #expect(FileFastPathTests.openFiles(under: directory.path).count == 1, "still being sent")
        sending.done()
        #expect(FileFastPathTests.openFiles(under: directory.path).isEmpty, "closed by its last response")

        // Entries in a dropped generation close their files.
        for index in 0..<10 {
            let file = try open()
            let cold = entry("/cold\(index)", file: file)
            heads.remember(cold)
            heads.hold(file, for: cold, now: 1).done()
        }
        #expect(heads.heldCount == 10 && FileFastPathTests.openFiles(under: directory.path).count == 10)
        for index in 0..<(2 * PreencodedFileHeads.generationCapacity) {
            heads.remember(entry("/filler\(index)", file: first))
        }
        #expect(heads.heldCount == 0)
        #expect(FileFastPathTests.openFiles(under: directory.path).isEmpty)
    }

    @Test(arguments: [Int64(0), 7, 10, 99, 100, 192_512, 104_857_599, Int64.max])
    func decimalsAreWrittenAsText(value: Int64) {
        var buffer = ByteBuffer()
        buffer.writeStaticString("x")
        buffer.writeDecimal(value)
        #expect(buffer.readString(length: buffer.readableBytes) == "x\(value)")
    }
}

/// A channel whose rendition `v1` lists `seg.ts` (a.ts, 3000 bytes, ETag "a"), with b.ts (2000
/// bytes) beside it, and a harness serving it.
private struct SegmentWindow {
    let directory: TemporaryDirectory
    let pathA: String
    let pathB: String
    let registry = ChannelRegistry()
    let harness: PipelineHarness

    init() throws {
        directory = try TemporaryDirectory()
        pathA = try directory.write("a.ts", patternBytes(count: 3000, seed: 3))
        pathB = try directory.write("b.ts", patternBytes(count: 2000, seed: 4))
        harness = try PipelineHarness(content: registry)
        try publish(["seg.ts": segmentFile(path: pathA, length: 3000, tag: "a")])
    }

    /// Publishes the channel with `segments` as `v1`'s.
    func publish(_ segments: [String: SegmentFile]) throws {
        var demo = try #require(Fixture.content().snapshot(of: "demo"))
        demo.segments["v1"] = segments
        registry.publish(demo)
    }

    func remove() { directory.remove() }
}
