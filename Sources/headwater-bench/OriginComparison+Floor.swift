import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The floor: `Tests/tools/floor-server.c`, an epoll loop that answers every request with
/// Headwater's own bytes for the shared gzip playlist from memory, built with `cc -O2` at the
/// start of the run. What it spends per request is what the kernel and a keep-alive loop cost on
/// this machine; Headwater ÷ floor is the price of everything else (HTTP parsing, routing, the
/// live window, the access log), which nginx's ratio alone does not show.
extension OriginComparison {
    /// The target: Headwater's CPU per request at most this many times the floor's.
    static let floorTarget = 1.25

    /// Compiles the floor server into the run's directory and starts it on CPU 0, like the others.
    func startFloor() async throws {
        guard let cc = tools.cc else { throw ValidationError("no C compiler for the floor: bash Tests/tools/install-bench-tools.sh") }
        let binary = try BenchTools.compile(cc: cc, source: tools.floorSource, into: fixture.directory)
        floorPort = try BenchTools.freePort()
        let response = fixture.directory.appendingPathComponent("floor-response.bin")
        floor = try ServerProcess.start(
            name: "floor", executable: binary, arguments: [String(floorPort), response.path], taskset: tools.taskset,
            log: fixture.directory.appendingPathComponent("floor.log"))
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            if let answer = try? RawHTTP.get(port: floorPort, path: Self.sharedPath, headers: [Self.gzipHeader]) {
                guard answer == snapshot.floorResponse else { throw ValidationError("the floor server's answer is not Headwater's bytes") }
                break
            }
            guard floor?.isRunning == true, ContinuousClock.now < deadline else {
                throw ValidationError("the floor server did not answer on \(floorBase) (\(floor?.logTail() ?? ""))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        print("floor:     listening on \(floorBase), pid \(floor!.pid), answering Headwater's bytes")
    }

    /// The shared gzip playlist at 64 connections on Headwater, nginx and the floor in turn, with the
    /// shared playlist row's wrk command: Headwater ÷ floor beside Headwater ÷ nginx, from the
    /// same rounds.
    func floorRow() throws {
        guard let headwater, let nginx, let floor else { throw ValidationError("the servers are not running") }
        let runner = WrkRunner(wrk: tools.wrk, taskset: tools.taskset, script: tools.wrkScript, connections: 64)
        let identity = Double(snapshot.shared.count)
        let (medians, failed) = try compare(
            "floor: shared \(Self.sharedPath), gzip, 64 connections, on Headwater, nginx and the floor server (epoll, C, from memory)",
            [
                Contender(name: "headwater", url: headwaterBase + Self.sharedPath, server: headwater),
                Contender(name: "nginx", url: nginxBase + Self.sharedPath, server: nginx),
                Contender(name: "floor", url: floorBase + Self.sharedPath, server: floor),
            ], load: runner, headers: [Self.gzipHeader], check: Self.bytesCheck(0, identity, "gzip, under the identity size"))
        let (headwaterRun, nginxRun, floorRun) = (medians[0], medians[1], medians[2])
        let (rate, cpu) = Self.ratios((headwaterRun, floorRun, failed), .requests)
        let (nginxRate, nginxCPU) = Self.ratios((headwaterRun, nginxRun, failed), .requests)
        print(
            "  Headwater ÷ floor: CPU per request \(format(cpu, decimals: 2)) (target ≤ \(format(Self.floorTarget, decimals: 2))), "
                + "req/s \(format(rate, decimals: 2)); Headwater ÷ nginx in the same rounds: CPU \(format(nginxCPU, decimals: 2)), "
                + "req/s \(format(nginxRate, decimals: 2)); nginx ÷ floor CPU \(format(nginxRun.serverMicrosecondsPerRequest / floorRun.serverMicrosecondsPerRequest, decimals: 2))")
        rows.append(
            ResultRow(
                workload: "floor: shared playlist, gzip, c64 (H ÷ floor)", headwater: Self.figures(headwaterRun, .requests),
                nginx: "floor: " + Self.figures(floorRun, .requests), rateRatio: format(rate, decimals: 2), cpuRatio: format(cpu, decimals: 2),
                target: "CPU ≤ \(format(Self.floorTarget, decimals: 2))× floor (H/n here: CPU \(format(nginxCPU, decimals: 2)), req/s \(format(nginxRate, decimals: 2)))",
                verdict: failed ? .failed : cpu <= Self.floorTarget ? .met : .notMet))
    }
}
