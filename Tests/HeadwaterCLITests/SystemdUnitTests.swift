import Foundation
import Testing

extension RealClients {
    /// The files in `systemd/` as systemd itself reads them: `systemd-analyze verify` and `security`
    /// on the unit, `systemd-sysusers --dry-run` on the user, and the directives an operator relies on
    /// (restart policy, exit status 78, hardening) checked one by one. `systemd-analyze` comes with
    /// Debian's `systemd` package and works without systemd running (CI runs in a container);
    /// without it these tests fail and say what to install, rather than skipping silently.
    @Suite("systemd unit")
    struct SystemdUnitTests {
        static let directory = ServeCommandTests.repository.appendingPathComponent("systemd")
        static let unitPath = directory.appendingPathComponent("headwater.service")
        static let installedExecutable = "/usr/local/bin/headwater"

        static func require(_ tool: String) throws -> String {
            try #require(
                ServeCommandTests.which(tool),
                "\(tool) is required: apt-get install -y systemd (Tests/tools/install-test-clients.sh installs it; systemd need not be running)"
            )
        }

        /// Runs a tool; its exit status and standard output and error together.
        static func run(_ executable: String, _ arguments: [String]) throws -> (Int32, String) {
            let (process, output) = try ServeCommandTests.run(executable, arguments)
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }

        /// A copy of the unit in a new temporary directory, identical except that `ExecStart` runs the
        /// binary this build produced instead of `/usr/local/bin/headwater`: `systemd-analyze verify`
        /// requires ExecStart's binary to exist and be executable, and a test must not install files
        /// into /usr/local. Only that path changes, so everything else is verified as shipped.
        static func unitCopy() throws -> (directory: URL, unit: URL) {
            let original = try String(contentsOf: unitPath, encoding: .utf8)
            var rewritten = 0
            let lines = original.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
                guard line.hasPrefix("ExecStart=\(installedExecutable) ") else { return String(line) }
                rewritten += 1
                return "ExecStart=\(HeadwaterProcess.executable.path) " + line.dropFirst("ExecStart=\(installedExecutable) ".count)
            }
            #expect(rewritten == 1, "exactly one ExecStart=\(installedExecutable) … line")
            #expect(FileManager.default.isExecutableFile(atPath: HeadwaterProcess.executable.path), "built binary")
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-systemd-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let unit = directory.appendingPathComponent("headwater.service")
            try lines.joined(separator: "\n").write(to: unit, atomically: true, encoding: .utf8)
            return (directory, unit)
        }

        @Test("systemd-analyze verify accepts the unit, with no warning about it")
        func verify() throws {
            let analyze = try Self.require("systemd-analyze")
            let (directory, unit) = try Self.unitCopy()
            defer { try? FileManager.default.removeItem(at: directory) }
            let (status, output) = try Self.run(analyze, ["verify", unit.path])
            #expect(status == 0, "systemd-analyze verify exit \(status):\n\(output)")
            // Other units on the machine may draw remarks; none may concern ours.
            let ours = output.split(separator: "\n").filter { $0.contains("headwater") || $0.contains(directory.path) }
            #expect(ours.isEmpty, "systemd-analyze verify:\n\(output)")
        }

        @Test("systemd-analyze security rates the unit's exposure at most 2.0 (\"OK\") of 10")
        func security() throws {
            let analyze = try Self.require("systemd-analyze")
            let (directory, unit) = try Self.unitCopy()
            defer { try? FileManager.default.removeItem(at: directory) }
            // --threshold is in tenths: 20 means an overall exposure level above 2.0 fails.
            let (status, output) = try Self.run(analyze, ["security", "--offline=yes", "--threshold=20", "--no-pager", unit.path])
            #expect(status == 0, "systemd-analyze security exit \(status):\n\(output)")
            #expect(output.contains("Overall exposure level for headwater.service"), "\(output)")
        }

        @Test("systemd-sysusers creates the unit's user and group from headwater.sysusers")
        func sysusers() throws {
            let sysusers = try Self.require("systemd-sysusers")
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("hw-sysusers-\(UUID())")
            try FileManager.default.createDirectory(at: root.appendingPathComponent("etc"), withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: root) }
            let file = Self.directory.appendingPathComponent("headwater.sysusers").path
            // --dry-run into an empty root: nothing is written, on this machine or under root.
            let (status, output) = try Self.run(sysusers, ["--dry-run", "--root=\(root.path)", file])
            #expect(status == 0, "systemd-sysusers exit \(status):\n\(output)")
            let unit = try UnitFile(contentsOf: Self.unitPath)
            let user = try #require(unit.value("User"))
            let group = try #require(unit.value("Group"))
            #expect(output.contains("Creating user '\(user)'"), "\(output)")
            #expect(output.contains("Creating group '\(group)'"), "\(output)")
        }

        @Test("the unit: notify, reload by SIGHUP, no restart on a bad config, room to drain, hardening")
        func directives() throws {
            let unit = try UnitFile(contentsOf: Self.unitPath)
            // systemd has no end-of-line comments: "Restart=on-failure # why" would pass "# why" on.
            for entry in unit.entries {
                #expect(!entry.value.contains(" #") && !entry.value.contains(" ;"), "comment inside \(entry.key)=\(entry.value)")
            }
            let required: [(String, String)] = [
                ("Type", "notify"),
                ("ExecStart", "\(Self.installedExecutable) serve --config /etc/headwater/headwater.yaml"),
                ("ExecReload", "/bin/kill -HUP $MAINPID"),
                ("Restart", "on-failure"),
                // ConfigurationError.exitStatus (EX_CONFIG)
                ("RestartPreventExitStatus", "78"),
                ("EnvironmentFile", "-/etc/headwater/headwater.env"),
                ("StateDirectory", "headwater"),
                // /var/log/headwater for the access log (server.access_log), which logrotate rotates.
                ("LogsDirectory", "headwater"),
                ("LogsDirectoryMode", "0750"),
                ("ConfigurationDirectory", "headwater"),
                ("User", "headwater"),
                ("UMask", "0027"),
                ("KillMode", "mixed"),
                ("CapabilityBoundingSet", ""),
                ("NoNewPrivileges", "yes"),
                ("ProtectSystem", "strict"),
                ("ProtectHome", "yes"),
                ("PrivateTmp", "yes"),
                ("PrivateDevices", "yes"),
                ("ProtectKernelTunables", "yes"),
                ("ProtectKernelModules", "yes"),
                ("ProtectKernelLogs", "yes"),
                ("ProtectControlGroups", "yes"),
                ("RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"),
                ("RestrictNamespaces", "yes"),
                ("RestrictRealtime", "yes"),
                ("LockPersonality", "yes"),
                ("MemoryDenyWriteExecute", "yes"),
            ]
            for (key, value) in required {
                #expect(unit.values(key) == [value], "[Service] \(key)=\(value), found \(unit.values(key))")
            }
            #expect(unit.values("SystemCallFilter").first == "@system-service", "\(unit.values("SystemCallFilter"))")
            // No capability is granted while the bounding set is empty (the unit says how to add one).
            #expect(unit.values("AmbientCapabilities").isEmpty)
            #expect(unit.values("DynamicUser").isEmpty, "User=headwater from headwater.sysusers instead")
            let files = try #require(unit.value("LimitNOFILE").flatMap { Int($0.split(separator: ":")[0]) }, "LimitNOFILE")
            #expect(files >= 65536)
            // Longer than OriginServerConfiguration.shutdownGracePeriod (30 s), so in-flight responses
            // finish and headwater exits by itself before systemd sends SIGKILL.
            let stop = try #require(unit.value("TimeoutStopSec").flatMap { Int($0.hasSuffix("s") ? String($0.dropLast()) : $0) })
            #expect(stop > 30, "TimeoutStopSec=\(stop)")
            #expect(unit.values("WantedBy", in: "Install") == ["multi-user.target"])
        }

        /// logrotate reads the snippet as shipped, `su headwater headwater` included: it resolves
        /// that user when it reads the file, so where the machine has none (no install yet) the check
        /// runs in a private mount namespace whose /etc/passwd and /etc/group add it (root only, as
        /// the test clients' set-up is; `unshare` comes with util-linux).
        @Test("logrotate -d accepts headwater.logrotate: the unit's log directory, SIGUSR1 to the main process")
        func logrotate() throws {
            let logrotate = try #require(
                ["/usr/sbin/logrotate", "/sbin/logrotate"].first { FileManager.default.isExecutableFile(atPath: $0) }
                    ?? ServeCommandTests.which("logrotate"),
                "logrotate is required: apt-get install -y logrotate")
            let snippet = Self.directory.appendingPathComponent("headwater.logrotate")
            let text = try String(contentsOf: snippet, encoding: .utf8)
            let unit = try UnitFile(contentsOf: Self.unitPath)
            let logs = try #require(unit.value("LogsDirectory"))
            #expect(text.contains("/var/log/\(logs)/*.log {"), "rotates the unit's LogsDirectory")
            #expect(text.contains("su \(try #require(unit.value("User"))) \(try #require(unit.value("Group")))"))
            #expect(text.contains("systemctl kill --kill-whom=main --signal=USR1 headwater.service"))
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hw-logrotate-\(UUID())")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: scratch) }
            let state = scratch.appendingPathComponent("status").path
            let status: Int32
            let output: String
            if getpwnam("headwater") != nil {
                (status, output) = try Self.run(logrotate, ["-d", "-s", state, snippet.path])
            } else {
                let unshare = try Self.require("unshare")
                var passwd = try String(contentsOfFile: "/etc/passwd", encoding: .utf8)
                var group = try String(contentsOfFile: "/etc/group", encoding: .utf8)
                passwd += "headwater:x:64990:64990:Headwater:/var/lib/headwater:/usr/sbin/nologin\n"
                group += "headwater:x:64990:\n"
                try passwd.write(to: scratch.appendingPathComponent("passwd"), atomically: true, encoding: .utf8)
                try group.write(to: scratch.appendingPathComponent("group"), atomically: true, encoding: .utf8)
                let script = "mount --bind \(scratch.path)/passwd /etc/passwd && mount --bind \(scratch.path)/group /etc/group"
                    + " && exec \(logrotate) -d -s \(state) \(snippet.path)"
                (status, output) = try Self.run(unshare, ["--mount", "sh", "-c", script])
            }
            #expect(status == 0, "logrotate -d exit \(status):\n\(output)")
            #expect(!output.contains("error"), "\(output)")
            #expect(output.contains("rotating pattern: /var/log/headwater/*.log  after 1 days (14 rotations)"), "\(output)")
        }

        @Test("headwater.env.example documents the variables, sets no secret, and is the unit's EnvironmentFile")
        func environmentExample() throws {
            let text = try String(contentsOf: Self.directory.appendingPathComponent("headwater.env.example"), encoding: .utf8)
            for name in ["HEADWATER_INGEST_TOKEN", "HEADWATER_SESSION_KEY"] {
                #expect(text.contains("\(name)="), "\(name)")
            }
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                #expect(parts.count == 2 && parts[0].allSatisfy { $0.isUppercase || $0 == "_" }, "NAME=value: \(line)")
                #expect(parts.count == 2 && parts[1].isEmpty, "an example must not ship a secret: \(line)")
            }
            let unit = try UnitFile(contentsOf: Self.unitPath)
            #expect(unit.value("EnvironmentFile") == "-/etc/headwater/headwater.env")
        }
    }

    /// A unit file as `[Section]` and `Key=value` lines; comments (`#`, `;`) and blank lines skipped,
    /// backslash continuations joined.
    struct UnitFile {
        struct Entry {
            var section: String
            var key: String
            var value: String
        }

        var entries: [Entry] = []

        init(contentsOf url: URL) throws {
            let text = try String(contentsOf: url, encoding: .utf8)
            var section = ""
            var pending = ""
            for raw in text.split(separator: "\n") {
                let line = raw.trimmingCharacters(in: .whitespaces)
                if pending.isEmpty, line.hasPrefix("#") || line.hasPrefix(";") { continue }
                if line.hasSuffix("\\") {
                    pending += line.dropLast() + " "
                    continue
                }
                let whole = pending + line
                pending = ""
                if whole.hasPrefix("[") && whole.hasSuffix("]") {
                    section = String(whole.dropFirst().dropLast())
                } else if let equals = whole.firstIndex(of: "=") {
                    entries.append(
                        Entry(
                            section: section, key: whole[..<equals].trimmingCharacters(in: .whitespaces),
                            value: whole[whole.index(after: equals)...].trimmingCharacters(in: .whitespaces)))
                }
            }
        }

        func values(_ key: String, in section: String = "Service") -> [String] {
            entries.filter { $0.section == section && $0.key == key }.map(\.value)
        }

        /// The last assignment wins, as in systemd (for non-list settings).
        func value(_ key: String, in section: String = "Service") -> String? { values(key, in: section).last }
    }
}
