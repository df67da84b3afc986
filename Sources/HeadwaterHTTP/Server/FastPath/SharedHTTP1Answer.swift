import NIOCore
import Synchronization

/// One answer that a publish gives to a group of equal held requests (``HeldRequests``), as the
/// HTTP/1.1 bytes its first writer made: head and body in one buffer. Every other connection of
/// the group writes the same bytes (a reference to the same storage, not a copy) instead of
/// encoding the same fields and copying the same body again. Good for the second it was encoded
/// in (its `Date` and `Expires`) and for the method it was encoded for (a `HEAD` has no body).
///
/// Made, filled and read on the event loop of the table that released the group; the lock (never
/// contended) keeps ``OriginResponse``, which carries it, `Sendable`.
final class SharedHTTP1Answer: Sendable {
    private let encoded = Mutex<(second: Int64, isHead: Bool, bytes: ByteBuffer)?>(nil)

    /// The bytes encoded for `isHead` in `second`, if a writer kept them.
    func bytes(second: Int64, isHead: Bool) -> ByteBuffer? {
        encoded.withLock { encoded in
            guard let encoded, encoded.second == second, encoded.isHead == isHead else { return nil }
            return encoded.bytes
        }
    }

    /// Keeps what a writer encoded, for the group's other connections.
    func keep(_ bytes: ByteBuffer, second: Int64, isHead: Bool) {
        encoded.withLock { $0 = (second, isHead, bytes) }
    }
}
