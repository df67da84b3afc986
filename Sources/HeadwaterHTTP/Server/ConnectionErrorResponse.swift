import HeadwaterLiveWindow
import NIOCore
import NIOHTTP1

/// The last words on an HTTP/1 connection the server is closing on its own account — a connection
/// over the cap (`503` with `Retry-After`), a request head or upload that missed its deadline
/// (`408`): the same head fields and one-line body as every refusal (``OriginResponse/refused``),
/// with `Connection: close`, written by the one HTTP/1 writer.
enum ConnectionErrorResponse {
    static func bytes(
        _ status: HTTPResponseStatus, _ reason: String, retryAfterSeconds: Int? = nil, now: Int64,
        dates: inout ResponseDates, allocator: ByteBufferAllocator
    ) -> ByteBuffer {
        var body = ByteBuffer(string: "\(status.code) \(status.reasonPhrase): \(reason)\n")
        var response = OriginResponse(
            status: status,
            headers: [
                "Content-Type": ContentType.plainText.value, "X-Content-Type-Options": "nosniff",
            ],
            body: .bytes(body),
            cachePolicy: CachePolicy(.health)
        )
        if let retryAfterSeconds { response.headers.add(name: "Retry-After", value: String(retryAfterSeconds)) }
        var bytes = allocator.buffer(capacity: 256 + body.readableBytes)
        HTTP1ResponseWriter.writeStatusLine(status, to: &bytes)
        OriginHTTPHandler.forEachResponseField(
            of: response, bodyLength: Int64(body.readableBytes), keepAlive: false, version: .http1_1, now: now,
            cors: false, dates: &dates
        ) { name, value in HTTP1ResponseWriter.writeField(name, value, to: &bytes) }
        bytes.writeStaticString("\r\n")
        bytes.writeBuffer(&body)
        return bytes
    }
}
