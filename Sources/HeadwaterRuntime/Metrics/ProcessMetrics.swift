#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Prometheus
import Synchronization

/// What the kernel says about this process, in the units of the standard `process_*` metrics
/// (the names every Prometheus client library exports, so stock dashboards and alerts work).
/// Read from `/proc` when `/metrics` is scraped; Linux only (``now()`` is `nil` elsewhere).
package struct ProcessSample: Sendable, Hashable {
    /// User and system CPU time, seconds.
    var cpuSeconds: Double
    var residentMemoryBytes: Double
    var virtualMemoryBytes: Double
    /// Start time, seconds since the Unix epoch.
    var startTimeSeconds: Double
    /// Open file descriptors (sockets, segment files, the log), not counting the one that lists them.
    var openFileDescriptors: Double
    /// The soft `RLIMIT_NOFILE`: the most descriptors the process may have open.
    var maxFileDescriptors: Double

    /// The fields of `/proc/self/stat` after the command name: `stat` is the whole line, whose
    /// command name (in parentheses) may itself hold spaces and parentheses, so fields are counted
    /// from the last `)`. `bootTime` is `/proc/stat`'s `btime`, `ticksPerSecond` `_SC_CLK_TCK`.
    /// `nil` when the line is not one (too few fields, non-numbers).
    static func parse(
        stat: String, bootTime: Double, ticksPerSecond: Double, pageSize: Double
    ) -> (cpuSeconds: Double, startTimeSeconds: Double, virtualBytes: Double, residentBytes: Double)? {
        guard let close = stat.lastIndex(of: ")"), ticksPerSecond > 0 else { return nil }
        // Field 3 (state) is the first after the name; proc(5) numbers fields from 1.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        func field(_ number: Int) -> Double? {
            let index = number - 3
            return fields.indices.contains(index) ? Double(fields[index]) : nil
        }
        guard let user = field(14), let system = field(15), let start = field(22), let virtual = field(23),
            let resident = field(24)
        else { return nil }
        return ((user + system) / ticksPerSecond, bootTime + start / ticksPerSecond, virtual, resident * pageSize)
    }

    /// `btime` (boot time, seconds since the epoch) from the text of `/proc/stat`.
    static func bootTime(procStat: String) -> Double? {
        for line in procStat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst("btime ".count))
        }
        return nil
    }

    /// This process, now; `nil` where there is no `/proc` (macOS) or it cannot be read.
    static func now() -> ProcessSample? {
        #if os(Linux)
        guard let stat = readSmallFile("/proc/self/stat"), let procStat = readSmallFile("/proc/stat"),
            let boot = bootTime(procStat: procStat),
            let parsed = parse(
                stat: stat, bootTime: boot, ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK))),
                pageSize: Double(sysconf(Int32(_SC_PAGESIZE))))
        else { return nil }
        var limit = rlimit()
        let maxFDs = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Double(limit.rlim_cur) : 0
        return ProcessSample(
            cpuSeconds: parsed.cpuSeconds, residentMemoryBytes: parsed.residentBytes,
            virtualMemoryBytes: parsed.virtualBytes, startTimeSeconds: parsed.startTimeSeconds,
            openFileDescriptors: Double(countOpenFileDescriptors()), maxFileDescriptors: maxFDs)
        #else
        return nil
        #endif
    }

    #if os(Linux)
    /// A file of `/proc` (at most 64 KiB), or `nil`. Those files report a size of 0, so it is read
    /// until the end rather than by `stat`.
    package static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 64 * 1024 {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The entries of `/proc/self/fd`, less the descriptor open to list them.
    private static func countOpenFileDescriptors() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in
                name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
            }
            if !isDot { count += 1 }
        }
        return max(0, count - 1)
    }
    #endif
}

/// The `process_*` series of one registry, set from a fresh ``ProcessSample`` at every scrape.
final class ProcessMetrics: Sendable {
    private let cpuSeconds: Prometheus.Counter
    private let residentMemory: Prometheus.Gauge
    private let virtualMemory: Prometheus.Gauge
    private let startTime: Prometheus.Gauge
    private let openFDs: Prometheus.Gauge
    private let maxFDs: Prometheus.Gauge
    /// The CPU seconds already added to the counter, which only goes up by increments.
    private let countedCPUSeconds = Mutex(0.0)

    /// `nil` where the process cannot be observed (no `/proc`): then no `process_*` series exist,
    /// rather than zeros that would read as facts.
    init?(registry: PrometheusCollectorRegistry) {
        guard ProcessSample.now() != nil else { return nil }
        func gauge(_ name: String, _ help: String) -> Prometheus.Gauge {
            registry.makeGauge(descriptor: OriginMetrics.descriptor(name, help: help), labels: [])
        }
        cpuSeconds = registry.makeCounter(
            descriptor: OriginMetrics.descriptor(
                "process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds."),
            labels: [])
        residentMemory = gauge("process_resident_memory_bytes", "Resident memory size in bytes.")
        virtualMemory = gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.")
        startTime = gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.")
        openFDs = gauge("process_open_fds", "Number of open file descriptors.")
        maxFDs = gauge("process_max_fds", "Maximum number of open file descriptors.")
    }

    /// Reads the process now and sets every series (a failed read leaves the last values).
    func update() {
        guard let sample = ProcessSample.now() else { return }
        countedCPUSeconds.withLock { counted in
            let delta = sample.cpuSeconds - counted
            guard delta > 0 else { return }
            cpuSeconds.increment(by: delta)
            counted = sample.cpuSeconds
        }
        residentMemory.set(to: sample.residentMemoryBytes)
        virtualMemory.set(to: sample.virtualMemoryBytes)
        startTime.set(to: sample.startTimeSeconds)
        openFDs.set(to: sample.openFileDescriptors)
        maxFDs.set(to: sample.maxFileDescriptors)
    }
}
