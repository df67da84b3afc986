import Foundation
@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterTesting
import NIOCore
import NIOEmbedded
import NIOPosix
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Upload bodies are written off the event loop, in batches, with back-pressure (issue 18 §3): a
/// body of tiny chunks costs a few writes, not one per chunk; while a write lags, the connection
/// stops reading; an abort waits for the write in flight; and an upload of 200,000 one-byte chunks
/// does not hold up a playlist request on the same (only) event loop.
@Suite("Ingest off the event loop")
struct IngestOffLoopTests {
    @Test("a body of 5,000 one-byte chunks in one read reaches the sink as one batch")
    func chunksAreBatched() throws {
        let sink = RecordingSink()
        let harness = try PipelineHarness(ingest: sink)
        defer { harness.finish() }
        let body = Self.letters(5000)
        let response = try harness.send(
            "PUT /ingest/demo/v1/seg1.ts HTTP/1.1\r\nHost: o\r\nAuthorization: Bearer secret\r\nTransfer-Encoding: chunked\r\n\r\n"
                + Self.oneByteChunks(body) + "0\r\n\r\n")
        #expect(response.status == 201)
        #expect(sink.body == body)
        let writes = sink.snapshot.filter { if case .chunk = $0 { true } else { false } }
        #expect(writes.count == 1, "one write per read, not per chunk: \(writes.count)")
        #expect(sink.snapshot.filter { $0 == .finish }.count == 1, "finished once (the sink's futures complete at once)")
    }

    @Test("while a batch is being written and the next is full, reads are held; they resume when the write completes")
    func backPressure() throws {
        let sink = HeldSink()
        let harness = try PipelineHarness(ingest: sink)
        defer { harness.finish() }
        let reads = ReadCounter()
        try harness.channel.pipeline.syncOperations.addHandler(reads, position: .first)
        try harness.channel.writeInbound(
            ByteBuffer(
                string:
                    "PUT /ingest/demo/v1/seg1.ts HTTP/1.1\r\nHost: o\r\nAuthorization: Bearer secret\r\nContent-Length: \(Self.bodyBytes)\r\n\r\n"
            ))
        var sent = 0
        func send(_ count: Int) throws {
            try harness.channel.writeInbound(ByteBuffer(bytes: patternBytes(count: count, seed: UInt64(sent))))
            sent += count
        }
        try send(64 * 1024)  // the first read: handed over at once
        #expect(sink.writes == [64 * 1024])
        harness.channel.read()
        #expect(reads.count == 1, "one batch in flight, the next not full: reading goes on")

        // The next batch fills while the first is being written: reads are held.
        while sent < 64 * 1024 + IngestBodyWriter.batchBytes { try send(64 * 1024) }
        #expect(sink.writes == [64 * 1024], "one write at a time")
        harness.channel.read()
        harness.channel.read()
        #expect(reads.count == 1, "held while the first batch is written and the next is full")

        sink.completeWrite()  // the full batch goes out; the held read is let through
        #expect(sink.writes == [64 * 1024, IngestBodyWriter.batchBytes])
        #expect(reads.count == 2)

        let rest = Self.bodyBytes - sent
        try send(rest)  // the rest, and the end of the body
        sink.completeWrite()
        #expect(sink.writes == [64 * 1024, IngestBodyWriter.batchBytes, rest])
        #expect(sink.events.last == "write")
        sink.completeWrite()
        #expect(sink.events.last == "finish", "finished once the last batch is written: \(sink.events)")
        #expect(Self.responses(harness).isEmpty, "answered only when the upload has finished")
        sink.completeFinish()
        #expect(Self.responses(harness).map(\.status) == [201])
    }

    @Test("a client gone while a batch is being written: the upload is aborted once the write completes, never finished")
    func abortWaitsForTheWriteInFlight() throws {
        let sink = HeldSink()
        let harness = try PipelineHarness(ingest: sink)
        try harness.channel.writeInbound(
            ByteBuffer(
                string:
                    "PUT /ingest/demo/v1/seg1.ts HTTP/1.1\r\nHost: o\r\nAuthorization: Bearer secret\r\nContent-Length: 100000\r\n\r\n"
                    + String(repeating: "x", count: 1000)))
        #expect(sink.events == ["begin", "write"])
        harness.channel.pipeline.fireChannelInactive()
        #expect(sink.events == ["begin", "write"], "not while the write is in flight")
        sink.completeWrite()
        #expect(sink.events == ["begin", "write", "abort"])
        harness.finish()
    }

    @Test("a failed write refuses the upload with its refusal, aborts it and drops the rest of the body")
    func failedWriteRefuses() throws {
        let sink = HeldSink()
        let harness = try PipelineHarness(ingest: sink)
        defer { harness.finish() }
        try harness.channel.writeInbound(
            ByteBuffer(
                string:
                    "PUT /ingest/demo/v1/seg1.ts HTTP/1.1\r\nHost: o\r\nAuthorization: Bearer secret\r\nContent-Length: 100000\r\n\r\n"
                    + String(repeating: "x", count: 1000)))
        sink.failWrite(Refusal(.insufficientStorage, "the state directory's file system is full"))
        let response = try #require(Self.responses(harness).first)
        #expect(response.status == 507)
        #expect(response.text == "507 Insufficient Storage: the state directory's file system is full\n")
        #expect(response.header("Connection") == "close")
        #expect(sink.events == ["begin", "write", "abort"])
        _ = try? harness.channel.writeInbound(ByteBuffer(string: String(repeating: "y", count: 5000)))
        #expect(sink.events == ["begin", "write", "abort"], "the rest is dropped")
    }

    /// The disk work runs on the sink's thread pool, not on the event loop: with the pool's one
    /// thread held, an upload's body is received but nothing of it is written and it is not
    /// answered, while the loop (the server's only one) goes on answering playlists; once the
    /// pool is free, the upload completes.
    @Test("with the thread pool held, an upload waits and the event loop still answers; then the upload completes")
    func uploadWorkRunsOnThePool() async throws {
        let origin = try PushOrigin()
        defer { origin.remove() }
        try origin.publish(segments: 3)
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let gate = DispatchSemaphore(value: 0)
        pool.submit { _ in gate.wait() }
        let body = patternBytes(count: 100_000, seed: 9)
        try await withServer(
            content: origin.registry, ingest: PushIngestSink(origin.ingest, pool: pool),
            configure: { $0.eventLoopThreads = 1 }
        ) { port in
            async let upload = RawClient.exchange(
                port: port, head: PushOrigin.uploadHead("x_03.ts", fields: "Content-Length: \(body.count)\r\n"),
                body: body)
            let directory = origin.stateDirectory + "/push/\(PushOrigin.channel)"
            var partial: [String] = []
            for _ in 0..<200 where partial.isEmpty {  // the upload has begun: its file is created
                try await Task.sleep(for: .milliseconds(10))
                partial = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".part") }
            }
            try #require(partial.count == 1, "the upload's file: \(partial)")
            try await Task.sleep(for: .milliseconds(200))
            let playlist = try await RawClient.exchange(port: port, head: PushOrigin.playlistRequest)
            #expect(playlist?.status == 200, "the loop answers while the pool is held")
            let size = try FileManager.default.attributesOfItem(atPath: directory + "/" + partial[0])[.size] as? Int
            #expect(size == 0, "nothing written while the pool is held")
            gate.signal()
            #expect(try await upload?.status == 201)
        }
        try await pool.shutdownGracefully()
    }

    /// The event loop stays responsive: the server has one event loop thread; one client uploads a
    /// segment as 200,000 one-byte chunks while another requests the playlist over and over. Before
    /// the change each chunk was a `write(2)` on the loop and a socket read's ~170,000 chunks were
    /// handled in one go: playlist requests waited for hundreds of milliseconds. Over HTTP/2 (one
    /// DATA frame per byte) an unpaced connection spent 1.0 s of CPU in one turn (p99 4.4 s);
    /// paced, 30 ms in a debug build.
    /// How the test's upload sends its one-byte pieces.
    enum OneByteFraming: String, CustomTestStringConvertible, CaseIterable, Sendable {
        /// HTTP/1.1 chunks, `1\r\nX\r\n`.
        case chunks = "HTTP/1.1 chunks"
        /// HTTP/2 DATA frames over h2c, one per byte.
        case h2DataFrames = "HTTP/2 DATA frames"
        var testDescription: String { rawValue }
    }

    @Test(
        "a playlist is answered within the bound while an upload of 200,000 one-byte chunks runs on the same event loop",
        .serialized, arguments: OneByteFraming.allCases)
    func eventLoopStaysResponsive(framing: OneByteFraming) async throws {
        let origin = try PushOrigin()
        defer { origin.remove() }
        try origin.publish(segments: 3)
        let chunks = 200_000
        let stalls = LoopStallProbe()
        let measured = try await withServer(
            content: origin.registry, ingest: ProbingSink(inner: origin.sink, probe: stalls),
            configure: { $0.eventLoopThreads = 1 }
        ) { port in
            let upload = UploadProgress()
            async let latencies = RawClient.connect(port: port).run { inbound, outbound in
                var inbound = inbound
                var bytes: [UInt8] = []
                var latencies: [Duration] = []
                let clock = ContinuousClock()
                while upload.phase != .done {
                    let during = upload.phase == .sending
                    let started = clock.now
                    try await outbound.write(ByteBuffer(string: PushOrigin.playlistRequest))
                    let response = try await inbound.nextResponse(buffered: &bytes)
                    if during { latencies.append(clock.now - started) }
                    try #require(response?.status == 200)
                }
                return latencies
            }
            if framing == .h2DataFrames {
                let started = ContinuousClock.now
                upload.phase = .sending
                let status: Int
                do {
                    status = try await H2cUploadClient.upload(
                        port: port, path: "/ingest/\(PushOrigin.channel)/x_03.ts", authorization: "Bearer \(PushOrigin.token)",
                        body: Self.letters(chunks))
                } catch {
                    upload.phase = .done  // so the playlist requests end too
                    throw error
                }
                let elapsed = ContinuousClock.now - started
                upload.phase = .done
                return ((status: status, elapsed: elapsed), try await latencies)
            }
            let result = try await RawClient.connect(port: port).run { inbound, outbound in
                defer { upload.phase = .done }
                var inbound = inbound
                let started = ContinuousClock.now
                try await outbound.write(ByteBuffer(string: PushOrigin.uploadHead("x_03.ts", fields: "Transfer-Encoding: chunked\r\n")))
                upload.phase = .sending
                let framing = Array(Self.oneByteChunks(Self.letters(chunks)).utf8)
                for start in stride(from: 0, to: framing.count, by: 64 * 1024) {
                    try await outbound.write(ByteBuffer(bytes: framing[start..<min(start + 64 * 1024, framing.count)]))
                }
                try await outbound.write(ByteBuffer(string: "0\r\n\r\n"))
                var bytes: [UInt8] = []
                let status = try await inbound.nextResponse(buffered: &bytes)?.status ?? 0
                return (status: status, elapsed: ContinuousClock.now - started)
            }
            return (result, try await latencies)
        }
        let (upload, latencies) = measured
        #expect(upload.status == 201)
        let sorted = latencies.sorted()
        let p99 = sorted[max(0, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        let longestTurn = stalls.longest
        let report =
            "\(chunks) one-byte chunks (\(framing.rawValue)) uploaded in \(upload.elapsed); \(sorted.count) playlist requests meanwhile: "
            + "p50 \(sorted[sorted.count / 2]), p99 \(p99), max \(sorted.last!); longest turn of the loop \(longestTurn) of CPU"
        print("IngestOffLoopTests: \(report)")
        #expect(sorted.count >= 20, "too few playlist requests overlapped the upload: \(report)")
        #expect(p99 < Self.p99Bound, "\(report)")
        #expect(longestTurn < Self.turnBound, "\(report)")
    }

    /// The bound on the playlists' p99 while the upload runs. A release build stays well under
    /// 10 ms (issue 18's goal). A debug build handles each chunk about ten times slower — one turn
    /// of the loop's 4 KiB of one-byte chunks takes ~10 ms there — so its bound is one the old code
    /// (a `write(2)` per chunk, up to 1 MiB of chunks per turn) failed by far: p99 0.43–0.91 s in
    /// three debug runs, against 0.02 s now.
    ///
    /// Wall-clock latencies also count the time the loop's thread waits for a CPU, so on a loaded
    /// machine they grow whatever the server does. ``turnBound`` bounds what the server itself
    /// does: the CPU time of the longest stretch its loop spent without getting back to its
    /// scheduled tasks (``LoopStallProbe``), which other processes cannot inflate. The old code
    /// spent hundreds of milliseconds of CPU in one turn in a debug build (a 1 MiB read of chunks).
    #if DEBUG
    static let p99Bound = Duration.milliseconds(200)
    static let turnBound = Duration.milliseconds(60)
    #else
    static let p99Bound = Duration.milliseconds(10)
    static let turnBound = Duration.milliseconds(5)
    #endif

    static let bodyBytes = 600_000

    /// `count` pseudo-random capital letters.
    static func letters(_ count: Int) -> [UInt8] { patternBytes(count: count).map { $0 % 26 + UInt8(ascii: "A") } }

    /// `letters` as a chunked body of one-byte chunks, without the last chunk.
    static func oneByteChunks(_ letters: [UInt8]) -> String {
        var text = ""
        text.reserveCapacity(letters.count * 6)
        for letter in letters { text += "1\r\n" + String(UnicodeScalar(letter)) + "\r\n" }
        return text
    }

    /// The responses written so far.
    static func responses(_ harness: PipelineHarness) -> [RawResponse] {
        var bytes: [UInt8] = []
        while let part = try? harness.channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(let buffer) = part { bytes.append(buffer) }
        }
        return RawResponse.parseAll(bytes).0
    }
}

/// Where the upload of ``IngestOffLoopTests/eventLoopStaysResponsive()`` is, for the thread that
/// measures the playlist requests.
final class UploadProgress: Sendable {
    enum Phase: Int { case connecting, sending, done }
    private let value = Atomic<Int>(Phase.connecting.rawValue)

    var phase: Phase {
        get { Phase(rawValue: value.load(ordering: .relaxed))! }
        set { value.store(newValue.rawValue, ordering: .relaxed) }
    }
}

/// Counts the `read`s that reach the front of the pipeline (the socket, on a real connection).
final class ReadCounter: ChannelOutboundHandler {
    typealias OutboundIn = Never
    private(set) var count = 0

    func read(context: ChannelHandlerContext) {
        count += 1
        context.read()
    }
}

@available(*, unavailable)
extension ReadCounter: Sendable {}

/// An ingest sink whose writes and finishes complete when the test says so.
final class HeldSink: IngestSink {
    private struct State {
        var events: [String] = []
        var writes: [Int] = []
        var pendingWrite: EventLoopPromise<Void>?
        var pendingFinish: EventLoopPromise<Void>?
    }

    private let state = Mutex(State())

    /// What was called, in order: `begin`, `write`, `finish`, `abort`.
    var events: [String] { state.withLock { $0.events } }
    /// The size of each batch handed over, in order.
    var writes: [Int] { state.withLock { $0.writes } }

    func authorize(channel: String, authorization: String?) throws(Refusal) {}

    func begin(channel: String, path: [String], method: IngestMethod, contentLength: Int64?) throws(Refusal)
        -> any IngestUpload
    {
        state.withLock { $0.events.append("begin") }
        return Upload(sink: self)
    }

    func completeWrite() { state.withLock { $0.pendingWrite.take() }?.succeed() }

    func failWrite(_ refusal: Refusal) { state.withLock { $0.pendingWrite.take() }?.fail(refusal) }

    func completeFinish() { state.withLock { $0.pendingFinish.take() }?.succeed() }

    struct Upload: IngestUpload {
        let sink: HeldSink

        func write(_ batch: ByteBuffer, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
            let promise = eventLoop.makePromise(of: Void.self)
            sink.state.withLock { state in
                precondition(state.pendingWrite == nil, "a write started before the previous one completed")
                state.events.append("write")
                state.writes.append(batch.readableBytes)
                state.pendingWrite = promise
            }
            return promise.futureResult
        }

        func finish(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
            let promise = eventLoop.makePromise(of: Void.self)
            sink.state.withLock { state in
                state.events.append("finish")
                state.pendingFinish = promise
            }
            return promise.futureResult
        }

        func abort() { sink.state.withLock { $0.events.append("abort") } }
    }
}

/// Watches an event loop from inside: a task runs on it every millisecond and notes the loop
/// thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`); the most CPU spent between two runs is the
/// longest turn of the loop (the I/O it handled before getting back to its tasks), measured in CPU
/// time, so other processes competing for the CPU do not inflate it.
final class LoopStallProbe: Sendable {
    private let longestNanoseconds = Atomic<Int64>(0)
    private let lastNanoseconds = Atomic<Int64>(-1)
    private let started = Atomic<Bool>(false)

    var longest: Duration { .nanoseconds(longestNanoseconds.load(ordering: .relaxed)) }

    /// Starts watching `loop` (once; later calls do nothing); it runs until the loop shuts down.
    func watch(_ loop: any EventLoop) {
        guard started.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        loop.scheduleRepeatedTask(initialDelay: .zero, delay: .milliseconds(1)) { _ in
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            let now = Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
            let last = self.lastNanoseconds.exchange(now, ordering: .relaxed)
            if last >= 0 { self.longestNanoseconds.max(now - last, ordering: .relaxed) }
        }
    }
}

/// Passes everything to `inner`, and starts `probe` on the event loop of the first upload.
struct ProbingSink: IngestSink {
    let inner: any IngestSink
    let probe: LoopStallProbe

    func authorize(channel: String, authorization: String?) throws(Refusal) {
        try inner.authorize(channel: channel, authorization: authorization)
    }

    func begin(channel: String, path: [String], method: IngestMethod, contentLength: Int64?) throws(Refusal)
        -> any IngestUpload
    {
        if let loop = MultiThreadedEventLoopGroup.currentEventLoop { probe.watch(loop) }  // called on the loop
        return try inner.begin(channel: channel, path: path, method: method, contentLength: contentLength)
    }
}
