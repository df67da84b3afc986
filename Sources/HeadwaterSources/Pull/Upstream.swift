import AsyncHTTPClient
import FoundationEssentials
import HeadwaterHLS
import HeadwaterLiveWindow
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The HTTP side of a pull source: GETs with a deadline covering the whole response, failures
/// sorted into ``PullCounters/Failure`` kinds, segments streamed into the store.
struct Upstream: Sendable {
    let client: HTTPClient
    /// For one request, from sending it to the end of the body.
    let timeoutMilliseconds: Int

    /// A stored download: the file, its size and content hash.
    struct Stored: Sendable {
        var path: String
        var length: Int64
        var hash: FNV1a64
    }

    /// The body of `url` (at most `limit` bytes).
    func fetch(_ url: URL, limit: Int) async throws(PullFailure) -> [UInt8] {
        try await run(url) { response throws(PullFailure) in
            guard response.status == .ok else { throw Self.status(response.status, url) }
            var bytes: [UInt8] = []
            do {
                for try await buffer in response.body {
                    guard bytes.count + buffer.readableBytes <= limit else {
                        throw PullFailure(.tooLarge, "\(url) is larger than \(limit) bytes")
                    }
                    bytes.append(contentsOf: buffer.readableBytesView)
                }
            } catch let failure as PullFailure {
                throw failure
            } catch {
                throw Self.classify(error, url)
            }
            return bytes
        }
    }

    /// Downloads `url` (or `range` of it) into `destination` through `destination.part`, renamed
    /// into place once complete: a failed or partial download leaves nothing behind.
    func download(_ url: URL, range: ByteRange?, to destination: String, limit: Int) async throws(PullFailure) -> Stored {
        let temporary = destination + ".part"
        let fd: Int32
        do { fd = try SegmentStorage.create(temporary) } catch { throw PullFailure(.storage, error.message) }
        var headers = HTTPHeaders()
        if let range, let offset = range.offset { headers.add(name: "Range", value: "bytes=\(offset)-\(offset + range.length - 1)") }
        let stored: Stored
        do throws(PullFailure) {
            stored = try await run(url, headers: headers) { response throws(PullFailure) -> Stored in
                // A server that ignores Range answers 200 with the whole resource: skip to the range.
                var skip: UInt64 = 0
                var wanted = UInt64(limit)
                switch response.status {
                case .partialContent where range != nil: wanted = range!.length
                case .ok:
                    if let range {
                        skip = range.offset ?? 0
                        wanted = range.length
                    }
                default: throw Self.status(response.status, url)
                }
                if wanted > UInt64(limit) { throw PullFailure(.tooLarge, "\(url) is larger than \(limit) bytes") }
                var stored = Stored(path: destination, length: 0, hash: FNV1a64())
                do {
                    for try await buffer in response.body {
                        try buffer.withUnsafeReadableBytes { raw throws(PullFailure) in
                            var bytes = raw[...]
                            let dropped = Int(min(skip, UInt64(bytes.count)))
                            skip -= UInt64(dropped)
                            bytes = bytes.dropFirst(dropped)
                            let remaining = Int(clamping: wanted - UInt64(stored.length))
                            if range == nil, bytes.count > remaining {
                                throw PullFailure(.tooLarge, "\(url) is larger than \(limit) bytes")
                            }
                            bytes = bytes.prefix(remaining)
                            let chunk = UnsafeRawBufferPointer(rebasing: bytes)
                            do throws(IngestRefusal) { try SegmentStorage.writeAll(fd, chunk) } catch {
                                throw PullFailure(.storage, error.message)
                            }
                            stored.hash.update(chunk)
                            stored.length += Int64(chunk.count)
                        }
                    }
                } catch let failure as PullFailure {
                    throw failure
                } catch {
                    throw Self.classify(error, url)
                }
                if let range, UInt64(stored.length) != range.length {
                    throw PullFailure(.connection, "\(url): range \(range) ended after \(stored.length) bytes")
                }
                return stored
            }
        } catch {
            close(fd)
            SegmentStorage.remove(temporary)
            throw error
        }
        close(fd)
        do { try SegmentStorage.move(temporary, to: destination) } catch {
            SegmentStorage.remove(temporary)
            throw PullFailure(.storage, error.message)
        }
        return stored
    }

    /// Runs one GET of `url` and `body` on its response, all within ``timeout``.
    private func run<T: Sendable>(
        _ url: URL, headers: HTTPHeaders = [:], _ body: @escaping @Sendable (HTTPClientResponse) async throws(PullFailure) -> T
    ) async throws(PullFailure) -> T {
        var prepared = HTTPClientRequest(url: url.absoluteString)
        prepared.headers = headers
        let request = prepared
        let client = client
        let milliseconds = timeoutMilliseconds
        let result: Result<T, PullFailure> = await withTaskGroup(of: Result<T, PullFailure>?.self) { group in
            group.addTask {
                let response: HTTPClientResponse
                do {
                    response = try await client.execute(request, timeout: .milliseconds(Int64(milliseconds)))
                } catch {
                    return .failure(Self.classify(error, url))
                }
                do throws(PullFailure) {
                    return .success(try await body(response))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                // The client's deadline covers the response head; this one the whole body too (with
                // a little grace, so that the client's own error, e.g. connection refused, wins).
                try? await Task.sleep(for: .milliseconds(milliseconds + 250))
                return nil
            }
            let first = await group.next()!
            group.cancelAll()
            return first ?? .failure(PullFailure(.timeout, "\(url): no complete answer within \(milliseconds) ms"))
        }
        return try result.get()
    }

    static func status(_ status: HTTPResponseStatus, _ url: URL) -> PullFailure {
        PullFailure(.httpStatus, "\(url): HTTP \(status.code) \(status.reasonPhrase)")
    }

    static func classify(_ error: any Error, _ url: URL) -> PullFailure {
        if let failure = error as? PullFailure { return failure }
        if let error = error as? HTTPClientError,
            [.deadlineExceeded, .connectTimeout, .readTimeout, .writeTimeout, .getConnectionFromPoolTimeout].contains(error)
        {
            return PullFailure(.timeout, "\(url): \(error)")
        }
        if error is CancellationError { return PullFailure(.timeout, "\(url): cancelled") }
        return PullFailure(.connection, "\(url): \(error)")
    }
}
