import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The floor of a blocking-reload release over HTTP/1.1: `Tests/tools/floor-server.c` in its hold
/// mode, on the same CPU as Headwater, holding the same count of requests on idle keep-alive
/// connections until a signal, then answering every one at once with Headwater's bytes for the
/// playlist from memory (no parsing, no routing, no log). Its figures are what writing that many
/// answers costs on this machine, kernel and loopback included: a p99 below it is out of reach
/// for any server here, and Headwater ÷ floor is the price of the rest.
extension OriginComparison {
    func releaseFloorHTTP1(count: Int) async throws -> Release {
        guard let cc = tools.cc else { throw ValidationError("no C compiler for the floor: bash Tests/tools/install-bench-tools.sh") }
        let binary = try BenchTools.compile(cc: cc, source: tools.floorSource, into: fixture.directory)
        let responseFile = fixture.directory.appendingPathComponent("floor-blocking-response.bin")
        let answer = try RawHTTP.get(port: headwaterPort, path: Self.sharedPath, headers: [Self.gzipHeader])
        try Data(answer).write(to: responseFile)
        let port = try BenchTools.freePort()
        let server = try ServerProcess.start(
            name: "floor-hold", executable: binary, arguments: [String(port), responseFile.path, "hold"], taskset: tools.taskset,
            log: fixture.directory.appendingPathComponent("floor-hold.log"))
        defer { server.stop() }
        let deadline = ContinuousClock.now + .seconds(10)
        while (try? RawHTTP.get(port: port, path: Self.sharedPath)) == nil {
            guard server.isRunning, ContinuousClock.now < deadline else {
                throw ValidationError("the floor server (hold) did not answer on port \(port) (\(server.logTail()))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }

        let idleClients = try await openIdleClients(count: count, port: port, serverPID: server.pid)
        defer { idleClients.connections.closeAll() }
        let (client, before, idle) = (idleClients.client, idleClients.residentBefore, idleClients.residentIdle)
        try client.send(Self.blockingRequest(msn: 1, port: port))
        try await Task.sleep(for: .milliseconds(500))  // as long as Headwater's last request waits at least
        let held = try ProcessStat.residentKiB(of: server.pid)
        let early = client.readableNow()
        let cpuBefore = try ProcessStat.cpuNanoseconds(of: server.pid)
        let release = HeldRequestClient.wallMicroseconds()
        guard kill(server.pid, SIGUSR1) == 0 else { throw ValidationError("could not signal the floor server: errno \(errno)") }
        let responses = try client.receive(timeoutSeconds: 20)
        let cpuAfter = try ProcessStat.cpuNanoseconds(of: server.pid)

        if early > 0 { problems.append("blocking reload, floor: \(early) responses before the signal (not held)") }
        checkAllOK(responses, protocolName: "floor")
        return Release(
            latencies: responses.map { $0.completedMicros - release }.sorted(),
            bytesPerHeld: Double(held - idle) * 1024 / Double(count), bytesPerConnectionAndHeld: Double(held - before) * 1024 / Double(count),
            cpuMicrosPerRequest: Double(cpuAfter - cpuBefore) / 1000 / Double(count), heldGauge: nil, sentAhead: release - client.sentMicros)
    }
}
