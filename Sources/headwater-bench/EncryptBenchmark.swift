import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HeadwaterRuntime

/// What AES-128 costs Headwater per segment, against OpenSSL's own figure on this machine in the
/// same run: `SegmentEncryptor` on a file (read, encrypt in 64 KiB chunks, write, rename: what an
/// encrypted channel does once per segment) and in memory, `openssl speed -evp aes-128-cbc` at
/// 16 KiB blocks, and the key derivation a key request pays (HKDF-SHA256).
struct EncryptBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encrypt",
        abstract: "AES-128 segment encryption (µs per MiB) against openssl speed, and key derivation (µs per key)."
    )

    @Option(help: "Minimum measuring time per case, in milliseconds.") var milliseconds = 600
    @Option(help: "The openssl binary.") var openssl = "openssl"

    func run() throws {
        let keys = try ContentKeys(secret: Array(repeating: 7, count: 32))
        let key = keys.key(channel: "demo", index: 1)
        let iv = keys.iv(channel: "demo", rendition: "v1", mediaSequence: 42)
        let mebibyte = 1 << 20
        var generator = SystemRandomNumberGenerator()
        let clear = (0..<mebibyte).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("headwater-bench-encrypt-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("clear.ts").path
        let destination = directory.appendingPathComponent("encrypted.ts").path
        try Data(clear).write(to: URL(fileURLWithPath: source))

        print("headwater-bench encrypt — AES-128-CBC (PKCS#7), median of 5 rounds, 1 MiB of random bytes")
        print(pad("case", 44) + leftPad("µs/MiB", 10) + leftPad("MB/s", 9))
        let file = Measurement.run(minimumDuration: .milliseconds(milliseconds)) {
            blackHole(try? SegmentEncryptor.encryptFile(at: source, to: destination, key: key, iv: iv))
        }
        let memory = Measurement.run(minimumDuration: .milliseconds(milliseconds)) {
            blackHole(SegmentEncryptor.encrypt(clear, key: key, iv: iv))
        }
        func row(_ name: String, microsecondsPerMiB: Double) {
            print(
                pad(name, 44) + leftPad(format(microsecondsPerMiB, decimals: 0), 10)
                    + leftPad(format(Double(mebibyte) / microsecondsPerMiB, decimals: 0), 9))
        }
        row("Headwater, file to file (what a segment costs)", microsecondsPerMiB: file.nanosecondsPerIteration / 1000)
        row("Headwater, in memory", microsecondsPerMiB: memory.nanosecondsPerIteration / 1000)
        if let openssl = try Self.opensslMicrosecondsPerMiB(openssl) {
            row("openssl speed -evp aes-128-cbc (16 KiB blocks)", microsecondsPerMiB: openssl)
            print("Headwater ÷ openssl: file \(format(file.nanosecondsPerIteration / 1000 / openssl, decimals: 2))×, in memory \(format(memory.nanosecondsPerIteration / 1000 / openssl, decimals: 2))×")
        } else {
            print("(openssl speed did not run: no comparison)")
        }
        let derive = Measurement.run(minimumDuration: .milliseconds(milliseconds)) {
            blackHole(keys.key(channel: "demo", index: 12_345))
        }
        print("key derivation (HKDF-SHA256, per key request): \(format(derive.nanosecondsPerIteration / 1000, decimals: 2)) µs")
    }

    /// µs per MiB from `openssl speed -evp aes-128-cbc -bytes 16384 -seconds 1`'s summary line
    /// (`AES-128-CBC  <k bytes per second>k`).
    static func opensslMicrosecondsPerMiB(_ openssl: String) throws -> Double? {
        guard let text = runWithSignalsReset([openssl, "speed", "-evp", "aes-128-cbc", "-bytes", "16384", "-seconds", "1"]) else {
            return nil
        }
        guard let line = text.split(separator: "\n").last(where: { $0.uppercased().hasPrefix("AES-128-CBC") }),
            let last = line.split(separator: " ").last, last.hasSuffix("k"), let kilobytes = Double(last.dropLast())
        else { return nil }
        return Double(1 << 20) / (kilobytes * 1000) * 1e6
    }

    /// Runs `arguments` (looked up in `PATH`) and returns its standard output, or `nil` when it
    /// fails. `openssl speed` times itself with `alarm(2)`, and a child inherits its parent's
    /// blocked signals: spawned from a thread that blocks `SIGALRM`, it would never stop. So the
    /// child starts with no signal blocked and `SIGALRM` at its default.
    static func runWithSignalsReset(_ arguments: [String]) -> String? {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var alarm = sigset_t()
        sigemptyset(&alarm)
        sigaddset(&alarm, SIGALRM)
        posix_spawnattr_setsigdefault(&attributes, &alarm)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environ)
        close(pipeEnds[1])
        defer { close(pipeEnds[0]) }
        guard spawned == 0 else { return nil }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress!, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            output += chunk[..<count]
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return status == 0 ? String(decoding: output, as: UTF8.self) : nil
    }
}
