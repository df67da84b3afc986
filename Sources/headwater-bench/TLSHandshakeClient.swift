import ArgumentParser
import Foundation

/// Runs `Tests/tools/tls-handshake-client.c` (built by the bench with `cc -O2` at start) for the
/// full-handshake row: `connections` threads, each connecting, doing a full TLS handshake, sending
/// one `GET` with `Connection: close` and reading the response to the close, for `seconds`. It
/// prints the same `HEADWATER …` line as wrk's script.
///
/// Why a client of its own: wrk with `Connection: close` reconnects, but offers the previous
/// session on each new handshake (it keeps it across `SSL_clear`), so after the first handshake per
/// connection it measures TLS 1.3 resumptions; `openssl s_time -new` runs one connection per
/// process and counts whole seconds. This one never offers a session.
struct HandshakeClientRunner: LoadGenerator {
    let binary: String
    let taskset: String?
    let connections: Int

    private func arguments(url: String, seconds: Int, headers: [String]) throws -> [String] {
        let origin = H2LoadRunner.origin(of: url)
        let address = origin.components(separatedBy: "://").last ?? origin
        guard let colon = address.lastIndex(of: ":") else { throw ValidationError("no port in \(url)") }
        let path = String(url.dropFirst(origin.count))
        return [String(address[..<colon]), String(address[address.index(after: colon)...]), path.isEmpty ? "/" : path, String(seconds),
            String(connections)] + headers
    }

    func commandLine(url: String, seconds: Int, headers: [String]) -> String {
        BenchCommand.commandLine(
            (taskset.map { [$0, "-c", "1"] } ?? []) + [binary] + ((try? arguments(url: url, seconds: seconds, headers: headers)) ?? [url]))
    }

    func run(
        url: String, seconds: Int, headers: [String], environment: [String: String], serverCPU: () throws -> Double
    ) throws -> WrkResult {
        let serverBefore = try serverCPU()
        let clientBefore = ProcessStat.childrenCPUSeconds()
        let clock = ContinuousClock()
        let start = clock.now
        let (status, text) = try BenchCommand.execute(
            binary, try arguments(url: url, seconds: seconds, headers: headers), taskset: taskset, environment: environment,
            limit: seconds + 30)
        let wall = BenchTools.seconds(clock.now - start)
        let serverAfter = try serverCPU()
        let clientAfter = ProcessStat.childrenCPUSeconds()
        guard status == 0 else { throw ValidationError("tls-handshake-client failed (status \(status)):\n\(text)") }
        return try WrkResult(
            output: text, tool: "tls-handshake-client", serverCPUSeconds: serverAfter - serverBefore,
            clientCPU: (clientAfter - clientBefore) / wall)
    }
}

extension BenchTools {
    /// `cc -O2 -o <directory>/<name> <source> <libraries>`: the bench's C tools, built for this
    /// machine at the start of a run. Returns the binary's path.
    static func compile(cc: String, source: String, into directory: URL, libraries: [String] = []) throws -> String {
        let binary = directory.appendingPathComponent(URL(fileURLWithPath: source).deletingPathExtension().lastPathComponent).path
        let arguments = ["-O2", "-o", binary, source] + libraries
        let (status, output) = try BenchCommand.execute(cc, arguments, taskset: nil, environment: [:], limit: 120)
        guard status == 0 else {
            throw ValidationError("\(([cc] + arguments).joined(separator: " ")) failed:\n\(output)")
        }
        print("built:     \(([cc] + arguments).joined(separator: " "))")
        return binary
    }
}
