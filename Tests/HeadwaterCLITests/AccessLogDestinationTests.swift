import Foundation
import Synchronization
import Testing

extension RealClients {
    /// `server.access_log` and the server's own log as an operator meets them under systemd: the
    /// access log in a file that logrotate renames and SIGUSR1 reopens, switched by a reload, `off`;
    /// a bad value refused as `file:line: key.path: message`; syslog priorities on standard error
    /// when it is the journal (`JOURNAL_STREAM` names it) and a plain time stamp otherwise.
    @Suite("access log destination and journal priorities", .serialized)
    struct AccessLogDestinationTests {
        /// A directory with `headwater.yaml` serving the demo loop, with `server:` lines `server`.
        static func configuration(server: [String]) throws -> (directory: URL, config: URL) {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-accesslog-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let config = directory.appendingPathComponent("headwater.yaml")
            try write(server: server, to: config)
            return (directory, config)
        }

        static func write(server: [String], to config: URL) throws {
            let text = (["server:"] + server.map { "  " + $0 } + [
                "channels:",
                "  demo:",
                "    source:",
                "      type: loop",
                "      package: \(ServeCommandTests.repository.path)/Public/demo/master.m3u8",
            ]).joined(separator: "\n") + "\n"
            try text.write(to: config, atomically: true, encoding: .utf8)
        }

        static func read(_ url: URL) -> String {
            (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        }

        /// `n` of every access line `"GET /healthz?n=<n> HTTP/1.0" 200 …`, in the order written (the
        /// start-up probes, `/healthz` without `n`, left out); a line that is not a whole access line
        /// is a failure.
        static func requestNumbers(in text: String, file: String) -> [Int] {
            var numbers: [Int] = []
            for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            where !line.contains("\"GET /healthz HTTP/1.0\" 200 ") {
                guard line.hasPrefix("127.0.0.1 - - ["), line.hasSuffix(" cache=- sid=- enc=-"),
                    let start = line.range(of: "\"GET /healthz?n="), let end = line.range(of: " HTTP/1.0\" 200 "),
                    let number = Int(line[start.upperBound..<end.lowerBound])
                else {
                    Issue.record("\(file): not a whole access line: \(line)")
                    continue
                }
                numbers.append(number)
            }
            return numbers
        }

        /// `GET /healthz?n=<n>` for each of `numbers`, `lanes` at a time; every answer must be 200.
        static func request(_ numbers: [Int], port: Int, lanes: Int = 3) {
            let failures = Mutex(0)
            DispatchQueue.concurrentPerform(iterations: lanes) { lane in
                for (index, number) in numbers.enumerated() where index % lanes == lane {
                    if !ServeCommandTests.get(port: port, path: "/healthz?n=\(number)").hasPrefix("HTTP/1.1 200") {
                        failures.withLock { $0 += 1 }
                    }
                }
            }
            #expect(failures.withLock { $0 } == 0, "requests that did not get 200")
        }

        /// Waits up to 10 s for `condition`.
        static func wait(_ what: String, _ condition: () -> Bool) {
            for _ in 0..<200 {
                if condition() { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
            Issue.record("timed out waiting for \(what)")
        }

        /// Whole lines of the test's requests (`?n=`) in `urls`.
        static func lineCount(_ urls: [URL]) -> Int {
            urls.map { url in read(url).split(separator: "\n").count { $0.contains("/healthz?n=") && $0.hasSuffix(" enc=-") } }
                .reduce(0, +)
        }

        @Test("a file: lines arrive; logrotate's rename and SIGUSR1 mid-traffic lose none and split none")
        func fileAndReopenOnSIGUSR1() throws {
            let (directory, config) = try Self.configuration(server: ["access_log: logs/access.log"])
            defer { try? FileManager.default.removeItem(at: directory) }
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("logs"), withIntermediateDirectories: true)
            let current = directory.appendingPathComponent("logs/access.log")
            let rotated = directory.appendingPathComponent("logs/access.log.1")
            let server = try TestServer(config: config.path)
            defer { server.stop() }

            Self.request(Array(0..<300), port: server.port)
            Self.wait("the first 300 lines") { Self.lineCount([current]) >= 300 }
            // logrotate renames the file while requests keep coming, then signals.
            let done = DispatchSemaphore(value: 0)
            Thread {
                Self.request(Array(300..<900), port: server.port)
                done.signal()
            }.start()
            Thread.sleep(forTimeInterval: 0.2)
            try FileManager.default.moveItem(at: current, to: rotated)
            kill(server.process.processIdentifier, SIGUSR1)
            done.wait()
            Self.wait("\"access log reopened\"") { Self.read(server.log).contains("access log reopened") }
            Self.request(Array(900..<1000), port: server.port)
            Self.wait("1,000 lines") { Self.lineCount([rotated, current]) >= 1000 }
            #expect(server.process.isRunning, "SIGUSR1 does not stop the server")

            let old = Self.read(rotated)
            let new = Self.read(current)
            #expect(old.hasSuffix("\n"), "the rotated file ends on a whole line")
            let oldNumbers = Self.requestNumbers(in: old, file: "access.log.1")
            let newNumbers = Self.requestNumbers(in: new, file: "access.log")
            #expect((oldNumbers + newNumbers).sorted() == Array(0..<1000), "each request once: \(oldNumbers.count) old + \(newNumbers.count) new")
            #expect(Set(0..<300).isSubset(of: oldNumbers), "lines written before the rename are in the old file")
            #expect(Set(900..<1000).isSubset(of: newNumbers), "requests after the reopen are in the new file")
            let log = Self.read(server.log)
            #expect(!log.contains("\"GET /healthz"), "no access line on standard output or error:\n\(log.prefix(2000))")
            #expect(log.contains("file.path=\(current.path) [headwater] access log reopened"), "\(log.suffix(1000))")
        }

        @Test("off writes no access line anywhere; a reload to a file takes effect")
        func offThenReloadToAFile() throws {
            let (directory, config) = try Self.configuration(server: ["access_log: off"])
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("access.log")
            let server = try TestServer(config: config.path)
            defer { server.stop() }
            Self.request(Array(0..<50), port: server.port)
            try Self.write(server: ["access_log: access.log"], to: config)
            kill(server.process.processIdentifier, SIGHUP)
            Self.wait("the reload") { Self.read(server.log).contains("access log now goes to \(file.path)") }
            Self.request(Array(50..<60), port: server.port, lanes: 1)
            Self.wait("10 lines") { Self.lineCount([file]) >= 10 }
            // Each request on a connection of its own, so on any event loop: lines in any order.
            #expect(Self.requestNumbers(in: Self.read(file), file: "access.log").sorted() == Array(50..<60))
            let log = Self.read(server.log)
            #expect(!log.contains("\"GET /healthz"), "off: no access line on standard output:\n\(log.prefix(2000))")
        }

        @Test("a bad access_log is a configuration error with file:line; an unopenable one stops serve with 78")
        func badValues() throws {
            let (directory, config) = try Self.configuration(server: ["listen: 127.0.0.1:0", "access_log: stderr"])
            defer { try? FileManager.default.removeItem(at: directory) }
            var result = try HeadwaterProcess.run(["check-config", config.path])
            #expect(result.status == 78)
            #expect(
                result.stderr.contains("\(config.path):3: server.access_log: must be stdout, off or a file path, got \"stderr\""),
                "\(result.stderr)")

            try Self.write(server: ["access_log: /var/log/"], to: config)
            result = try HeadwaterProcess.run(["check-config", config.path])
            #expect(result.status == 78)
            #expect(result.stderr.contains("\(config.path):2: server.access_log: names a directory"), "\(result.stderr)")

            // Valid as written, but its directory does not exist: `serve` says so and exits 78 (EX_CONFIG).
            let missing = directory.appendingPathComponent("missing/access.log").path
            try Self.write(server: ["listen: 127.0.0.1:0", "access_log: \(missing)"], to: config)
            #expect(try HeadwaterProcess.run(["check-config", config.path]).status == 0)
            result = try HeadwaterProcess.run(["serve", "--config", config.path])
            #expect(result.status == 78)
            #expect(
                result.stderr.contains("\(config.path): server.access_log: cannot open the access log \(missing): No such file or directory"),
                "\(result.stderr)")
        }

        /// The device and inode of `url`, as `JOURNAL_STREAM` gives them.
        static func deviceAndInode(_ url: URL) throws -> String {
            var status = stat()
            try #require(stat(url.path, &status) == 0)
            return "\(status.st_dev):\(status.st_ino)"
        }

        /// Starts `headwater serve` on `config` with standard error to `log` (standard output to
        /// /dev/null) and `JOURNAL_STREAM` set to `journalStream`; waits until it answers.
        static func serve(config: URL, log: URL, journalStream: String) throws -> (Process, Int) {
            let port = try ServeCommandTests.freePort()
            let process = Process()
            process.executableURL = HeadwaterProcess.executable
            process.arguments = ["serve", "--listen", "127.0.0.1:\(port)", "--config", config.path]
            process.environment = ProcessInfo.processInfo.environment.merging(["JOURNAL_STREAM": journalStream]) { $1 }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: log)
            try process.run()
            wait("the server to answer") { ServeCommandTests.get(port: port, path: "/healthz").hasPrefix("HTTP/1.1 200") }
            return (process, port)
        }

        /// A warning some request can trigger, here a static file that is a symbolic-link loop
        /// (`open` fails with ELOOP: "cannot open static file"; links followed inside the root, so
        /// it is an error rather than a refused link), logged at request rate: the
        /// journal gets at most 20 of them per 10 s, however many requests come, and the count of
        /// the others with the first line of the next window.
        @Test("a warning logged per request reaches standard error at most 20 times per 10 s")
        func requestDrivenWarningsAreRateLimited() throws {
            let (directory, config) = try Self.configuration(server: ["access_log: off", "public: public", "follow_symlinks: inside"])
            defer { try? FileManager.default.removeItem(at: directory) }
            let publicDirectory = directory.appendingPathComponent("public")
            try FileManager.default.createDirectory(at: publicDirectory, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: publicDirectory.appendingPathComponent("loop").path, withDestinationPath: "loop")
            let log = directory.appendingPathComponent("stderr.log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            var status = stat()
            try #require(stat(log.path, &status) == 0)
            let (server, port) = try Self.serve(config: config, log: log, journalStream: "\(status.st_dev):\(status.st_ino)")
            defer { if server.isRunning { server.terminate() } }
            var notFound = 0
            for _ in 0..<300 where ServeCommandTests.get(port: port, path: "/loop").hasPrefix("HTTP/1.1 404") { notFound += 1 }
            // The next window: the next warning comes with the count of those dropped.
            Thread.sleep(forTimeInterval: 10.5)
            #expect(ServeCommandTests.get(port: port, path: "/loop").hasPrefix("HTTP/1.1 404"))
            server.terminate()
            server.waitUntilExit()
            #expect(notFound == 300, "each request answered 404")
            let warnings = Self.read(log).split(separator: "\n").filter { $0.contains("cannot open static file") }
            #expect(warnings.count == 21, "\(warnings.count) warnings for 301 requests")
            let dropped = Self.read(log).split(separator: "\n").filter { $0.contains(" more lines from ") }
            #expect(dropped.count == 1 && dropped[0].hasPrefix("<4>warning headwater :"), "\(dropped)")
            #expect(
                dropped.first?.contains("280 more lines from HeadwaterHTTP/OriginResponder.swift:") == true
                    && dropped.first?.hasSuffix("were dropped (log rate limit: 20 per call site per 10.0 seconds)") == true,
                "\(dropped)")
            #expect(warnings.allSatisfy { $0.hasPrefix("<4>warning headwater :") && $0.contains("error.type=errno \(ELOOP)") }, "\(warnings.prefix(3))")
        }

        @Test("a bad configuration at start is written at error priority (<3>) when standard error is the journal")
        func startupConfigurationErrorsAreErrors() throws {
            let (directory, config) = try Self.configuration(server: ["access_log: off"])
            defer { try? FileManager.default.removeItem(at: directory) }
            try "channels: {demo: {source: {type: nope}}}\n".write(to: config, atomically: true, encoding: .utf8)
            let log = directory.appendingPathComponent("stderr.log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let process = Process()
            process.executableURL = HeadwaterProcess.executable
            process.arguments = ["serve", "--listen", "127.0.0.1:0", "--config", config.path]
            process.environment = ProcessInfo.processInfo.environment.merging(["JOURNAL_STREAM": try Self.deviceAndInode(log)]) { $1 }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: log)
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 78)
            let lines = Self.read(log).split(separator: "\n")
            #expect(lines.contains { $0.hasPrefix("<3>\(config.path):1: channels.demo.source.type: unknown source type") }, "\(lines)")
            #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("<3>") }, "\(lines)")
        }

        @Test("priorities (<6>, <5>, <3>) when standard error is the journal; a time stamp when it is not")
        func journalPriorities() throws {
            let (directory, config) = try Self.configuration(server: ["access_log: off"])
            defer { try? FileManager.default.removeItem(at: directory) }
            // Standard error is a file here; JOURNAL_STREAM names it as systemd names the journal's socket.
            let log = directory.appendingPathComponent("stderr.log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            var status = stat()
            try #require(stat(log.path, &status) == 0)
            let (server, _) = try Self.serve(config: config, log: log, journalStream: "\(status.st_dev):\(status.st_ino)")
            defer { if server.isRunning { server.terminate() } }
            try "channels: {demo: {source: {type: nope}}}\n".write(to: config, atomically: true, encoding: .utf8)
            kill(server.processIdentifier, SIGHUP)
            Self.wait("the rejected reload") { Self.read(log).contains("configuration reload rejected") }
            server.terminate()
            server.waitUntilExit()
            let lines = Self.read(log).split(separator: "\n")
            #expect(lines.contains { $0.hasPrefix("<6>info headwater :") && $0.hasSuffix("listening") }, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("<5>notice headwater :") && $0.hasSuffix("reloading configuration") }, "\(lines)")
            #expect(
                lines.contains {
                    $0.hasPrefix("<3>error headwater :")
                        && $0.contains("reload rejected: \(config.path):1: channels.demo.source.type: unknown source type")
                }, "\(lines)")
            #expect(lines.allSatisfy { $0.hasPrefix("<") }, "every line has a priority: \(lines)")

            // Not the journal: JOURNAL_STREAM names another file (a child whose stderr was redirected).
            try Self.write(server: ["access_log: off"], to: config)
            let plainLog = directory.appendingPathComponent("plain.log")
            _ = FileManager.default.createFile(atPath: plainLog.path, contents: nil)
            let (plain, _) = try Self.serve(config: config, log: plainLog, journalStream: "\(status.st_dev):\(status.st_ino)")
            defer { if plain.isRunning { plain.terminate() } }
            plain.terminate()
            plain.waitUntilExit()
            let text = Self.read(plainLog)
            let first = try #require(text.split(separator: "\n").first)
            // (The first line is the notice that server.state is not set.)
            #expect(first.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} (info|notice) headwater : .*/) != nil, "\(text)")
            #expect(!text.contains("<6>"), "\(text)")
        }
    }
}
