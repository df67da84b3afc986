import ArgumentParser
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Small helpers the loopback benchmarks (`ssai`, `all`) share: finding tools, ports, limits.
enum BenchTools {
    static func executable(named name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"] {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// This executable's path, symbolic links resolved.
    static var ownPath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// `headwater` next to this executable: the release server when this is the release bench.
    static func siblingServer() -> String {
        URL(fileURLWithPath: ownPath).deletingLastPathComponent().appendingPathComponent("headwater").path
    }

    /// A port the kernel had free a moment ago (the server binds it right after).
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ValidationError("socket() failed: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw ValidationError("cannot bind 127.0.0.1:0: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Raises this process's open-file soft limit to its hard limit (children inherit it); returns
    /// the new soft limit.
    @discardableResult
    static func raiseFileLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return UInt64(limit.rlim_cur)
    }

    /// Runs a short command and returns its stdout and stderr, or `nil` when it fails or takes
    /// longer than 10 s.
    static func output(of executable: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        guard (try? process.run()) != nil else { return nil }
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(10), execute: watchdog)
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        watchdog.cancel()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// Figures about a process read from /proc.
enum ProcessStat {
    /// utime + stime of a process, all threads (/proc/<pid>/stat fields 14 and 15), in seconds.
    static func cpuSeconds(of pid: Int32) throws -> Double {
        let fields = try statFields(of: pid)
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw ValidationError("cannot read /proc/\(pid)/stat")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Time on CPU of every thread of a process, in nanoseconds (the first field of each
    /// /proc/<pid>/task/<tid>/schedstat): for spans too short for /proc/<pid>/stat's clock ticks
    /// (10 ms), such as the release of the blocking-reload row.
    static func cpuNanoseconds(of pid: Int32) throws -> Int64 {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        var total: Int64 = 0
        for task in tasks {
            // A thread may end between the listing and the read.
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8) else { continue }
            guard let first = text.split(separator: " ").first, let nanoseconds = Int64(first) else {
                throw ValidationError("cannot read /proc/\(pid)/task/\(task)/schedstat")
            }
            total += nanoseconds
        }
        return total
    }

    /// The fields of /proc/<pid>/stat after the command name: field 3 (state) is element 0.
    private static func statFields(of pid: Int32) throws -> [Substring] {
        let text = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        guard let close = text.lastIndex(of: ")") else { throw ValidationError("cannot read /proc/\(pid)/stat") }
        return text[text.index(after: close)...].split(separator: " ")
    }

    /// The processes whose parent is `pid` (nginx's workers), from a scan of /proc.
    static func children(of pid: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int32? in
            guard let child = Int32(entry), let fields = try? statFields(of: child), fields.count > 1,
                Int32(fields[1]) == pid
            else { return nil }
            return child
        }.sorted()
    }

    /// VmRSS from /proc/<pid>/status, in KiB.
    static func residentKiB(of pid: Int32) throws -> Int {
        let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let value = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) })
        else { throw ValidationError("no VmRSS in /proc/\(pid)/status") }
        return value
    }

    /// CPU time of this process's waited-for children (wrk, once it exited).
    static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// A server the bench started (Headwater or nginx), pinned to a CPU with `taskset` when there is
/// one. `taskset` execs the server, so the process id is the server's.
struct ServerProcess {
    let name: String
    let process: Process
    /// The server's standard error.
    let log: URL

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    static func start(
        name: String, executable: String, arguments: [String], taskset: String?, cpu: Int = 0,
        environment: [String: String] = [:], log: URL
    ) throws -> ServerProcess {
        let process = Process()
        if let taskset {
            process.executableURL = URL(fileURLWithPath: taskset)
            process.arguments = ["-c", String(cpu), executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")  // Headwater's access log
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        try process.run()
        BenchCleanup.shared.track(pid: process.processIdentifier)
        return ServerProcess(name: name, process: process, log: log)
    }

    /// The server's processes: itself and its children (nginx's master and workers).
    func processIDs() -> [Int32] { [pid] + ProcessStat.children(of: pid) }

    /// CPU seconds (user + system) of all the server's processes so far.
    func cpuSeconds() throws -> Double {
        try processIDs().reduce(0) { $0 + (try ProcessStat.cpuSeconds(of: $1)) }
    }

    /// SIGTERM (nginx: fast shutdown; Headwater: graceful), then SIGKILL after 10 s; children
    /// still alive after that (an nginx worker whose master was killed) are killed too.
    func stop() {
        let children = ProcessStat.children(of: pid)
        if process.isRunning {
            process.terminate()
            let deadline = ContinuousClock.now + .seconds(10)
            while process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
            if process.isRunning { kill(pid, SIGKILL) }
            process.waitUntilExit()
        }
        for child in children where kill(child, 0) == 0 { kill(child, SIGKILL) }
        BenchCleanup.shared.untrack(pid: pid)
    }

    /// The last lines of the server's standard error.
    func logTail(_ lines: Int = 20) -> String {
        guard let text = try? String(contentsOf: log, encoding: .utf8), !text.isEmpty else { return "" }
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }
}

/// What must not outlive the bench when it is interrupted (SIGINT, SIGTERM, SIGHUP): the servers it
/// started and its temporary directory (with a 100 MiB file in it). Normal exits and errors clean
/// up where the work is done; this covers signals.
final class BenchCleanup: Sendable {
    static let shared = BenchCleanup()

    private struct State {
        var pids: Set<Int32> = []
        var directories: Set<String> = []
    }

    private let state = Mutex(State())

    func track(pid: Int32) { state.withLock { _ = $0.pids.insert(pid) } }
    func untrack(pid: Int32) { state.withLock { _ = $0.pids.remove(pid) } }
    func track(directory: String) { state.withLock { _ = $0.directories.insert(directory) } }

    /// Removes a tracked directory. Under the lock, so that a signal's clean-up and the normal
    /// one never delete the same tree at once (each would stop at the other's deletions).
    func remove(directory: String) {
        state.withLock { state in
            Self.delete(directory)
            state.directories.remove(directory)
        }
    }

    /// Kills every tracked server (and its children) and removes every tracked directory.
    func cleanUpNow() {
        state.withLock { state in
            for pid in state.pids {
                let children = ProcessStat.children(of: pid)
                kill(pid, SIGKILL)
                for child in children { kill(child, SIGKILL) }
            }
            for directory in state.directories { Self.delete(directory) }
            state = State()
        }
    }

    private static func delete(_ directory: String) {
        for _ in 0..<3 where FileManager.default.fileExists(atPath: directory) {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// On SIGINT, SIGTERM or SIGHUP: clean up and exit with 128 + the signal. Keep the returned
    /// sources alive for as long as the handlers should be.
    func installSignalHandlers() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                print("\ninterrupted (signal \(number)): stopping the servers and removing the temporary files")
                BenchCleanup.shared.cleanUpNow()
                exit(128 + number)
            }
            source.resume()
            return source
        }
    }
}

/// What the header says about the machine.
struct Machine {
    var cores: Int
    var model: String
    var loadAverage: String

    static func current() -> Machine {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        let load = ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "")
            .split(separator: " ").prefix(3).joined(separator: " ")
        return Machine(cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), model: model, loadAverage: load)
    }
}
