import HeadwaterRuntime
import HeadwaterTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `SystemdNotifier` against a real `AF_UNIX` datagram socket standing in for systemd's: the exact
/// datagrams it receives are the protocol.
@Suite("SystemdNotifier")
struct SystemdNotifierTests {
    @Test("without NOTIFY_SOCKET every notification is a no-op")
    func noSocket() throws {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.isEnabled)
        #expect(notifier.socket == nil)
        #expect(notifier.watchdogInterval == nil)
        try notifier.ready(status: "serving")
        try notifier.reloading()
        try notifier.reloaded()
        try notifier.stopping()
        try notifier.status("idle")
        try notifier.watchdog()
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]).isEnabled == false)
    }

    @Test("a socket file receives READY, RELOADING with MONOTONIC_USEC, READY, STATUS and STOPPING")
    func pathSocket() throws {
        let receiver = try DatagramReceiver.inTemporaryDirectory()
        defer { receiver.remove() }
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        #expect(notifier.socket == .path(receiver.notifySocket))

        try notifier.ready(status: "serving 2 channels on 127.0.0.1:8080")
        #expect(try receiver.receive() == "READY=1\nSTATUS=serving 2 channels on 127.0.0.1:8080")

        try notifier.ready()
        #expect(try receiver.receive() == "READY=1")

        let before = monotonicMicroseconds()
        try notifier.reloading()
        let after = monotonicMicroseconds()
        let reloading = try receiver.receive().split(separator: "\n", omittingEmptySubsequences: false)
        #expect(reloading.count == 2, "\(reloading)")
        #expect(reloading.first == "RELOADING=1")
        let stamp = try #require(reloading.last)
        #expect(stamp.hasPrefix("MONOTONIC_USEC="), "\(stamp)")
        let digits = stamp.dropFirst("MONOTONIC_USEC=".count)
        #expect(!digits.isEmpty && digits.allSatisfy(\.isASCII) && digits.allSatisfy(\.isNumber), "\(stamp)")
        // CLOCK_MONOTONIC now, not the wall clock or boot time.
        let value = try #require(UInt64(digits))
        #expect(before <= value && value <= after, "\(before) ≤ \(value) ≤ \(after)")

        try notifier.reloading(status: "reloading /etc/headwater/headwater.yaml")
        #expect(try receiver.receive().hasSuffix("\nSTATUS=reloading /etc/headwater/headwater.yaml"))

        try notifier.reloaded(status: "configuration rejected, still serving the previous one")
        #expect(try receiver.receive() == "READY=1\nSTATUS=configuration rejected, still serving the previous one")

        try notifier.status("2 channels live")
        #expect(try receiver.receive() == "STATUS=2 channels live")

        try notifier.stopping()
        #expect(try receiver.receive() == "STOPPING=1")

        try notifier.stopping(status: "draining 3 responses")
        #expect(try receiver.receive() == "STOPPING=1\nSTATUS=draining 3 responses")
    }

    @Test("an abstract socket (NOTIFY_SOCKET=@name) receives the datagrams too")
    func abstractSocket() throws {
        #if os(Linux)
        let name = "headwater-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let receiver = try DatagramReceiver.abstract(name)
        defer { receiver.remove() }
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "@" + name])
        #expect(notifier.socket == .abstract(name))
        try notifier.ready(status: "serving")
        #expect(try receiver.receive() == "READY=1\nSTATUS=serving")
        try notifier.stopping()
        #expect(try receiver.receive() == "STOPPING=1")
        #endif
    }

    @Test("a line break in a status cannot inject another assignment")
    func statusNewlines() throws {
        let receiver = try DatagramReceiver.inTemporaryDirectory()
        defer { receiver.remove() }
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        try notifier.status("bad config\nREADY=1")
        #expect(try receiver.receive() == "STATUS=bad config READY=1")
    }

    @Test("watchdog: WATCHDOG_USEC gives the interval, WATCHDOG=1 is sent; another process's WATCHDOG_PID is ignored")
    func watchdog() throws {
        let receiver = try DatagramReceiver.inTemporaryDirectory()
        defer { receiver.remove() }
        let notifier = SystemdNotifier(environment: [
            "NOTIFY_SOCKET": receiver.notifySocket, "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid())",
        ])
        #expect(notifier.watchdogInterval == .seconds(30))
        try notifier.watchdog()
        #expect(try receiver.receive() == "WATCHDOG=1")

        let inherited = SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid() + 1)"])
        #expect(inherited.watchdogInterval == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000"]).watchdogInterval == .seconds(30))
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "0"]).watchdogInterval == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "soon"]).watchdogInterval == nil)
    }

    @Test("an unusable NOTIFY_SOCKET, or nobody listening, throws with the reason instead of failing silently")
    func failures() throws {
        for value in ["run/systemd/notify", "vsock:2:1234", "@", "/" + String(repeating: "x", count: 200)] {
            let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": value])
            #expect(notifier.isEnabled)
            #expect(notifier.socket == nil)
            let error = #expect(throws: SystemdNotifier.NotifyError.self) { try notifier.ready() }
            #expect(error?.message.contains("NOTIFY_SOCKET=") == true, "\(value): \(error?.message ?? "")")
        }
        let missing = "/nonexistent-\(getpid())/notify"
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": missing])
        let error = #expect(throws: SystemdNotifier.NotifyError.self) { try notifier.ready() }
        #expect(error?.message.hasPrefix("sd_notify to \(missing): ") == true, "\(error?.message ?? "")")
    }
}

/// `CLOCK_MONOTONIC` in µs, read independently of the notifier.
private func monotonicMicroseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000 + UInt64(spec.tv_nsec) / 1_000
}

/// A bound `AF_UNIX` datagram socket, as systemd's notification socket is, with a receive time-out
/// so a missing datagram fails the test instead of hanging it.
