import NIOCore
import NIOEmbedded
import Testing

@testable import HeadwaterHTTP

/// What reaches the socket from below HTTP/2 (``FlushCoalescing``): one flush per read burst, and
/// one per event-loop task outside reads (a publish answering many held streams of a connection).
@Suite struct FlushCoalescingTests {
    /// Counts the flushes that pass it, standing in for the socket.
    final class FlushCounter: ChannelOutboundHandler {
        typealias OutboundIn = IOData
        var flushes = 0

        func flush(context: ChannelHandlerContext) {
            flushes += 1
            context.flush()
        }
    }

    let channel = EmbeddedChannel()
    let counter = FlushCounter()
    let coalescing = FlushCoalescing()

    init() throws {
        try channel.pipeline.syncOperations.addHandlers([counter, coalescing])
    }

    func write(_ text: String) {
        channel.write(IOData.byteBuffer(ByteBuffer(string: text)), promise: nil)
        channel.flush()
    }

    @Test("flushes asked for by one task outside a read leave as one, at the end of that task")
    func outsideReadsOneFlushPerTask() throws {
        for index in 0..<100 { write("stream \(index)\n") }
        #expect(counter.flushes == 0, "held until the task that asked ends")
        #expect(try channel.readOutbound(as: IOData.self) == nil)
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 1)
        var written = 0
        while try channel.readOutbound(as: IOData.self) != nil { written += 1 }
        #expect(written == 100, "every write went out, in one flush")

        write("later\n")  // a later task: a flush of its own
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 2)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test("flushes during a read burst leave once, at read complete; a scheduled one is not repeated")
    func readBurstFlushesAtReadComplete() throws {
        write("before the read\n")  // scheduled, not yet run
        channel.pipeline.fireChannelRead(ByteBuffer(string: "frames"))
        write("during the read\n")
        #expect(counter.flushes == 0)
        channel.pipeline.fireChannelReadComplete()
        #expect(counter.flushes == 1)
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 1, "the scheduled flush found nothing left to do")
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test("a close flushes what is pending first")
    func closeFlushesPending() throws {
        write("goaway\n")
        channel.close(promise: nil)
        #expect(counter.flushes == 1)
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 1)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test("a handler removed with a flush scheduled flushes first")
    func removalFlushesPending() throws {
        write("last frames\n")
        _ = channel.pipeline.syncOperations.removeHandler(coalescing)
        #expect(counter.flushes == 1)
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 1, "not again once removed")
        #expect(try channel.readOutbound(as: IOData.self) != nil)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }
}
