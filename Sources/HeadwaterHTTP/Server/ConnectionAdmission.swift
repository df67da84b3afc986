/// The connection caps of the public listeners (``ConnectionLimits/maxConnections``,
/// ``ConnectionLimits/maxConnectionsPerClient``), as a value: connections counted in, in total and
/// per client address, and the verdict for the next one. ``ConnectionTracker`` keeps one under its
/// lock; the refusal itself (a `503`, the count, the log line) is the listener's.
struct ConnectionAdmission {
    /// Why a connection was refused; the raw value is the metric's label.
    enum Refusal: String, CaseIterable, Sendable {
        /// ``ConnectionLimits/maxConnections`` are open.
        case capacity
        /// ``ConnectionLimits/maxConnectionsPerClient`` are open from the same address.
        case clientCapacity = "client_capacity"
    }

    let limits: ConnectionLimits
    private(set) var open = 0
    private(set) var openByClient: [String: Int] = [:]

    init(limits: ConnectionLimits) { self.limits = limits }

    /// Counts the connection in and returns `nil`, or returns why it is refused (and counts nothing).
    /// - Parameter client: the peer's address; `nil` (a Unix socket) is capped only in total.
    mutating func admit(client: String?) -> Refusal? {
        guard open < limits.maxConnections else { return .capacity }
        if let client, limits.maxConnectionsPerClient > 0 {
            let count = openByClient[client, default: 0]
            guard count < limits.maxConnectionsPerClient else { return .clientCapacity }
            openByClient[client] = count + 1
        }
        open += 1
        return nil
    }

    /// A connection ``admit(client:)`` counted in has closed.
    mutating func release(client: String?) {
        open -= 1
        guard let client, limits.maxConnectionsPerClient > 0, let count = openByClient[client] else { return }
        openByClient[client] = count > 1 ? count - 1 : nil
    }
}
