import Prometheus

extension OriginMetrics {
    /// A client connection was accepted (fast path and NIO path alike: both serve on the
    /// connection the server accepted). Pair with ``connectionClosed()``.
    public func connectionOpened() { openConnections.increment() }

    /// A connection counted by ``connectionOpened()`` closed.
    public func connectionClosed() { openConnections.decrement() }

    /// The build's version and toolchain: `headwater_build_info{version,swift_version,os,arch} 1`,
    /// to join on (`* on(instance) group_left(version) headwater_build_info`) and to see a rollout.
    func registerBuildInfo() {
        registry.makeGauge(
            descriptor: Self.descriptor(
                "headwater_build_info", help: "Always 1; the labels say which Headwater build is running."),
            labels: [
                ("version", HeadwaterVersion.current), ("swift_version", Self.swiftVersion),
                ("os", Self.operatingSystem), ("arch", Self.architecture),
            ]
        ).set(to: 1)
    }

    /// Requests held until a later playlist version (blocking reload) changed by `delta`:
    /// `headwater_held_requests`.
    public func heldRequestsChanged(by delta: Int) {
        heldRequests.increment(by: Double(delta))
    }

    /// The version of the compiler that built this binary, to the minor version.
    static var swiftVersion: String {
        #if compiler(>=7.0)
        ">=7.0"
        #elseif compiler(>=6.5)
        ">=6.5"
        #elseif compiler(>=6.4)
        "6.4"
        #elseif compiler(>=6.3)
        "6.3"
        #elseif compiler(>=6.2)
        "6.2"
        #elseif compiler(>=6.1)
        "6.1"
        #else
        "6.0"
        #endif
    }

    static var operatingSystem: String {
        #if os(Linux)
        "linux"
        #elseif os(macOS)
        "macos"
        #else
        "other"
        #endif
    }

    static var architecture: String {
        #if arch(x86_64)
        "x86_64"
        #elseif arch(arm64)
        "aarch64"
        #else
        "other"
        #endif
    }
}

extension OriginMetrics {
    /// `headwater_http_deadline_closes_total{deadline}`: connections the server closed because a
    /// deadline passed (`request_head`, `request_body`, `send`; README "Limits").
    public func deadlineCloses<Deadline>(_ deadlines: Deadline.Type) -> LabelledCounters<Deadline>
    where Deadline: RawRepresentable & CaseIterable & Hashable & Sendable, Deadline.RawValue == String {
        counters(
            "headwater_http_deadline_closes_total",
            help: "Client connections closed because a deadline passed: a request head or body too slow, or a response the client did not read.",
            by: "deadline", values: deadlines)
    }

    /// `headwater_http_connections_refused_total{reason}`: connections answered `503` (or closed,
    /// on TLS) at once because a connection cap was reached.
    public func connectionRefusals<Reason>(_ reasons: Reason.Type) -> LabelledCounters<Reason>
    where Reason: RawRepresentable & CaseIterable & Hashable & Sendable, Reason.RawValue == String {
        counters(
            "headwater_http_connections_refused_total",
            help: "Client connections refused at accept because a connection cap was reached (503 with Retry-After, or closed on TLS).",
            by: "reason", values: reasons)
    }
}
