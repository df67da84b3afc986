import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeadwaterRuntime
import NIOCore
import NIOHTTP1

/// The bench's own requests to a server (sessions, snapshots, checks), with AsyncHTTPClient.
struct LoopbackClient {
    let client: HTTPClient
    let base: String

    /// Status, response headers and the body as received (not decompressed).
    func fetch(_ path: String, headers: [(String, String)] = []) async throws -> (Int, HTTPHeaders, [UInt8]) {
        var request = HTTPClientRequest(url: base + path)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 16 << 20)
        return (Int(response.status.code), response.headers, Array(body.readableBytesView))
    }

    /// `PUT` (the push ingest): status and the response body.
    func put(_ path: String, body: [UInt8], headers: [(String, String)] = []) async throws -> (Int, [UInt8]) {
        var request = HTTPClientRequest(url: base + path)
        request.method = .PUT
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .seconds(30))
        let received = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), Array(received.readableBytesView))
    }

    /// Status, Content-Encoding and the body as received (not decompressed).
    func get(_ path: String, gzip: Bool = false) async throws -> (Int, String?, [UInt8]) {
        let (status, headers, body) = try await fetch(path, headers: gzip ? [("Accept-Encoding", "gzip")] : [])
        return (status, headers.first(name: "content-encoding"), body)
    }

    /// What the stitched playlist at `path` shows now: `ads` (a pod), `break` (a break that started
    /// before the session, so the channel's content in its slots), or `content`.
    func window(_ path: String) async throws -> String {
        let (_, encoding, body) = try await get(path, gzip: true)
        return OriginComparison.window(encoding == "gzip" ? Gzip.decompress(body) ?? [] : body)
    }

    /// Polls `path` until it answers 200 (and the server process is still running).
    func waitUntilReady(process: Process, path: String = "/readyz", timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard process.isRunning else { throw ValidationError("the server exited (status \(process.terminationStatus))") }
            if let (status, _, _) = try? await get(path), status == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ValidationError("the server was not ready within \(timeout)")
    }

    /// Starts `count` viewer sessions as players do (the multivariant playlist of /ssai, with
    /// device=tv, phone, other in turn) and returns each session's `rendition` media playlist path.
    func openSessions(count: Int, channel: String, rendition: String) async throws -> [String] {
        var paths: [String] = []
        paths.reserveCapacity(count)
        let devices = ["tv", "phone", "other"]
        for index in 0..<count {
            let master = "/ssai/\(channel)/master.m3u8?device=\(devices[index % devices.count])"
            let (status, _, body) = try await get(master)
            guard status == 200 else { throw ValidationError("GET \(master): \(status) \(String(decoding: body, as: UTF8.self))") }
            guard let path = Self.mediaPath(in: body, rendition: rendition, relativeTo: "/ssai/\(channel)/") else {
                throw ValidationError("GET \(master): no \(rendition).m3u8?session=… URI in the multivariant playlist")
            }
            paths.append(path)
        }
        return paths
    }

    /// The absolute path of the `rendition` media playlist URI in a multivariant playlist.
    static func mediaPath(in body: [UInt8], rendition: String, relativeTo directory: String) -> String? {
        for line in String(decoding: body, as: UTF8.self).split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let uri = String(line)
            let path = uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? uri
            guard path == "\(rendition).m3u8" || path.hasSuffix("/\(rendition).m3u8"), uri.contains("session=") else { continue }
            return uri.hasPrefix("/") ? uri : directory + uri
        }
        return nil
    }
}
