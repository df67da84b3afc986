import Foundation
import HeadwaterTesting
import Synchronization
import Testing

extension RealClients {
    /// `kill -HUP` (what `systemctl reload` sends) while players keep requesting: a valid new file is
    /// applied without a restart, an invalid one is refused whole and the old configuration serves on.
    @Suite("headwater serve: reload", .serialized)
    struct ReloadCommandTests {
        static func config(_ channels: String) -> String {
            let repository = ServeCommandTests.repository.path
            return """
                server:
                  public: \(repository)/Public
                  slate: \(repository)/Public/slate/master.m3u8
                channels:
                  demo:
                    source:
                      type: loop
                      package: \(repository)/Public/demo/master.m3u8
                \(channels)
                """
        }

        @Test("SIGHUP under load: a valid file adds a channel, an invalid one is refused; requests keep succeeding, nothing restarts")
        func reloadUnderLoad() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-reload-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("headwater.yaml")
            try Self.config("").write(to: file, atomically: true, encoding: .utf8)
            let (server, port, log) = try ServeCommandTests.startServer(config: file.path)
            defer { if server.isRunning { server.terminate() } }

            // Players: playlist reloads as fast as one connection goes, for the whole test.
            let failures = Mutex<[String]>([])
            let requests = Mutex(0)
            let sequences = Mutex<[Int]>([])
            let stop = Atomic(false)
            let load = Thread {
                while !stop.load(ordering: .relaxed) {
                    let response = ServeCommandTests.get(port: port, path: "/live/demo/v1.m3u8")
                    requests.withLock { $0 += 1 }
                    guard response.hasPrefix("HTTP/1.1 200"), let range = response.range(of: "#EXT-X-MEDIA-SEQUENCE:") else {
                        failures.withLock { $0.append(String(response.prefix(80))) }
                        continue
                    }
                    let number = Int(response[range.upperBound...].prefix { $0.isNumber }) ?? -1
                    sequences.withLock { $0.append(number) }
                }
            }
            load.start()
            defer { stop.store(true, ordering: .relaxed) }
            Thread.sleep(forTimeInterval: 1)

            // Valid: a second channel appears without a restart.
            try Self.config("""
                  second:
                    source:
                      type: loop
                      package: \(ServeCommandTests.repository.path)/Public/demo/master.m3u8
                    window: 12
                """).write(to: file, atomically: true, encoding: .utf8)
            kill(server.processIdentifier, SIGHUP)
            var added = false
            for _ in 0..<50 where !added {
                Thread.sleep(forTimeInterval: 0.1)
                added = ServeCommandTests.get(port: port, path: "/live/second/v0.m3u8").hasPrefix("HTTP/1.1 200")
            }
            #expect(added, "the new channel is served after SIGHUP")

            // Invalid: refused whole, both channels still served.
            try "channels:\n  demo:\n    source: {type: tape}\n    window: 2\n".write(to: file, atomically: true, encoding: .utf8)
            kill(server.processIdentifier, SIGHUP)
            Thread.sleep(forTimeInterval: 1.5)
            #expect(ServeCommandTests.get(port: port, path: "/live/second/v0.m3u8").hasPrefix("HTTP/1.1 200"))
            stop.store(true, ordering: .relaxed)
            Thread.sleep(forTimeInterval: 0.3)

            #expect(server.isRunning, "nothing restarted")
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
            #expect(requests.withLock { $0 } > 20, "the load ran: \(requests.withLock { $0 }) requests")
            let seen = sequences.withLock { $0 }
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 <= $1 }, "the demo's media sequence never went back")
            server.terminate()
            server.waitUntilExit()
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: log)
            #expect(text.contains("configuration reloaded"), "\(text.suffix(600))")
            #expect(text.contains("channels.demo.source.type: unknown source type \"tape\""), "each problem is logged")
            #expect(text.contains("channels.demo.window: must be between 6 and 86400, got 2"))
            #expect(text.contains("the previous configuration keeps serving"))
            let starts = text.split(separator: "\n").filter { $0.hasSuffix("] listening") }
            #expect(starts.count == 2, "started once: one listening line from serve, one from the HTTP server")
        }
    }

    /// `Type=notify`: what systemd hears from `headwater serve` over `NOTIFY_SOCKET`.
    @Suite("headwater serve: sd_notify", .serialized)
    struct NotifyCommandTests {
        @Test("READY=1 once listening; SIGHUP gives RELOADING=1 then READY=1; SIGTERM gives STOPPING=1")
        func lifecycle() throws {
            let receiver = try DatagramReceiver.inTemporaryDirectory()
            defer { receiver.remove() }
            let (server, _, log) = try ServeCommandTests.startServer(environment: ["NOTIFY_SOCKET": receiver.notifySocket])
            defer { if server.isRunning { server.terminate() } }
            defer { try? FileManager.default.removeItem(at: log) }
            let ready = try receiver.receive()
            #expect(ready.split(separator: "\n").contains("READY=1"), "\(ready)")
            kill(server.processIdentifier, SIGHUP)
            let reloading = try receiver.receive()
            #expect(reloading.contains("RELOADING=1") && reloading.contains("MONOTONIC_USEC="), "\(reloading)")
            let reloaded = try receiver.receive()
            #expect(reloaded.split(separator: "\n").contains("READY=1"), "\(reloaded)")
            #expect(reloaded.contains("configuration reloaded"), "\(reloaded)")
            server.terminate()
            let stopping = try receiver.receive()
            #expect(stopping.split(separator: "\n").contains("STOPPING=1"), "\(stopping)")
            server.waitUntilExit()
            #expect(server.terminationStatus == 0)
        }
    }
}
