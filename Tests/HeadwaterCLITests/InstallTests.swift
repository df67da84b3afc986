import Foundation
import Testing

extension RealClients {
    /// README.md's "Install with systemd", run as written into a scratch root, and the installed
    /// configuration checked by the installed binary as the user the install created. Needs root
    /// (the scratch root's files, a private mount namespace) and Debian's systemd and util-linux.
    @Suite("install with systemd")
    struct InstallTests {
        static let script = "Tests/tools/install-headwater.sh"

        /// The README's install command: the line of the section's code block that runs the script.
        static func readmeInstallCommand() throws -> [String] {
            let readme = try String(
                contentsOf: ServeCommandTests.repository.appendingPathComponent("README.md"), encoding: .utf8)
            let section = try #require(
                readme.components(separatedBy: "\n## Install with systemd\n").dropFirst().first?
                    .components(separatedBy: "\n## ").first, "README.md has an \"Install with systemd\" section")
            let line = try #require(
                section.split(separator: "\n").first { $0.hasPrefix("bash \(script)") },
                "the section runs `bash \(script)`")
            // Up to a trailing comment; the README's own arguments stay, the test's come after.
            let command = line.split(separator: "#", maxSplits: 1)[0]
            return command.split(separator: " ").map(String.init)
        }

        @Test("the README's install, into a scratch root: every file in place, the user created, check-config exit 0")
        func readmeInstall() throws {
            let root = try InstalledRoot()
            defer { root.remove() }
            let command = try Self.readmeInstallCommand()
            let (status, output) = try InstalledRoot.shell(
                command + ["--root", root.path, "--binary", HeadwaterProcess.executable.path])
            #expect(status == 0, "\(command.joined(separator: " ")) exit \(status):\n\(output)")

            let files = [
                "/usr/local/bin/headwater", "/usr/local/share/headwater/Public/index.html",
                "/usr/local/share/headwater/Public/demo/master.m3u8", "/etc/headwater/headwater.yaml",
                "/etc/headwater/ads.yaml", "/etc/headwater/headwater.env", "/etc/systemd/system/headwater.service",
                "/etc/sysusers.d/headwater.conf",
            ]
            for file in files {
                #expect(FileManager.default.fileExists(atPath: root.path + file), "\(file) installed")
            }
            #expect(try root.mode("/etc/headwater/headwater.env") == 0o640, "the secrets file is not world-readable")
            #expect(!FileManager.default.fileExists(atPath: root.path + "/etc/headwater/README.md"), "only the configs")
            for config in ["headwater.yaml", "ads.yaml"] {
                let text = try root.read("/etc/headwater/\(config)")
                #expect(!text.contains("../"), "\(config) has no path outside /etc/headwater")
                #expect(text.contains("/usr/local/share/headwater/Public/"), "\(config) names the installed Public/")
            }
            #expect(try root.read("/etc/headwater/headwater.yaml").contains("\nserver:\n  access_log: /var/log/headwater/access.log\n  state: /var/lib/headwater\n"))
            _ = try root.user("headwater")

            let (checkStatus, checkOutput) = try root.checkConfig(binary: "/usr/local/bin/headwater")
            #expect(checkStatus == 0, "check-config exit \(checkStatus):\n\(checkOutput)")
            #expect(checkOutput.contains("/etc/headwater/headwater.yaml: ok"), "\(checkOutput)")
        }

        @Test("systemd-analyze verify finds the installed unit by name and accepts it, as installed")
        func verifyInstalledUnit() throws {
            let analyze = try SystemdUnitTests.require("systemd-analyze")
            let root = try InstalledRoot()
            defer { root.remove() }
            let (status, output) = try InstalledRoot.shell(
                ["bash", Self.script, "--root", root.path, "--binary", HeadwaterProcess.executable.path])
            #expect(status == 0, "\(output)")
            // `verify --root` wants a whole system in the root (sysinit.target, /bin/kill); inside the
            // overlays the unit is where systemd looks for it and its ExecStart exists.
            let (verifyStatus, verifyOutput) = try root.inside([analyze, "verify", "headwater.service"])
            #expect(verifyStatus == 0, "systemd-analyze verify exit \(verifyStatus):\n\(verifyOutput)")
            let ours = verifyOutput.split(separator: "\n").filter { $0.contains("headwater") }
            #expect(ours.isEmpty, "systemd-analyze verify:\n\(verifyOutput)")
        }

        @Test("the installed server, run as the headwater user the unit names, serves the demo channel")
        func servesAsServiceUser() throws {
            let root = try InstalledRoot()
            defer { root.remove() }
            let (status, output) = try InstalledRoot.shell(
                ["bash", Self.script, "--root", root.path, "--binary", HeadwaterProcess.executable.path])
            #expect(status == 0, "\(output)")
            // The only change to the installed config: a free port instead of 8080.
            let port = try ServeCommandTests.freePort()
            let config = root.path + "/etc/headwater/headwater.yaml"
            let installed = try String(contentsOfFile: config, encoding: .utf8)
            #expect(installed.contains("listen: 127.0.0.1:8080"))
            try installed.replacingOccurrences(of: "listen: 127.0.0.1:8080", with: "listen: 127.0.0.1:\(port)")
                .write(toFile: config, atomically: true, encoding: .utf8)
            let (uid, gid) = try root.user("headwater")
            // As the unit runs it: its user and group, its working directory, its state directory
            // (a tmpfs on /var/lib in the namespace, owned by the user, as StateDirectory= makes
            // it), without capabilities. Every step is bounded; the server gets SIGTERM at the end.
            let script = """
                mount -t tmpfs headwater-state /var/lib
                install -d -o \(uid) -g \(gid) -m 0750 /var/lib/headwater
                mount -t tmpfs headwater-logs /var/log
                install -d -o \(uid) -g \(gid) -m 0750 /var/log/headwater
                cd /usr/local/share/headwater
                setpriv --reuid=\(uid) --regid=\(gid) --clear-groups --inh-caps=-all --bounding-set=-all \\
                    /usr/local/bin/headwater serve --config /etc/headwater/headwater.yaml >/dev/null 2>"$0/serve.log" &
                server=$!
                (sleep 60; kill -KILL "$server") >/dev/null 2>&1 &
                watchdog=$!
                code=000
                for attempt in $(seq 1 40); do
                    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 http://127.0.0.1:\(port)/live/demo/master.m3u8) || true
                    [ "$code" = 200 ] && break
                    sleep 0.5
                done
                echo "master.m3u8: $code"
                kill -TERM "$server"
                wait "$server"
                echo "serve exit: $?"
                kill "$watchdog"
                echo "access log lines: $(grep -c 'GET /live/demo/master.m3u8 HTTP/1.1\" 200' /var/log/headwater/access.log)"
                """
            let (_, result) = try root.inside(["bash", "-c", script, root.path])
            let log = (try? root.read("/serve.log")) ?? ""
            #expect(result.contains("master.m3u8: 200"), "\(result)\nserve's log:\n\(log)")
            #expect(result.contains("serve exit: 0"), "\(result)\nserve's log:\n\(log)")
            // The installed config sends the access log to the unit's LogsDirectory=, not the journal.
            #expect(installed.contains("access_log: /var/log/headwater/access.log"))
            #expect(result.contains("access log lines: 1"), "\(result)")
        }

        @Test("the check can fail: ads.yaml copied as the old README did (../Public) is rejected with exit 78")
        func checkCanFail() throws {
            let root = try InstalledRoot()
            defer { root.remove() }
            let (status, output) = try InstalledRoot.shell(
                ["bash", Self.script, "--root", root.path, "--binary", HeadwaterProcess.executable.path])
            #expect(status == 0, "\(output)")
            let original = ServeCommandTests.repository.appendingPathComponent("Config/ads.yaml")
            try FileManager.default.removeItem(atPath: root.path + "/etc/headwater/ads.yaml")
            try FileManager.default.copyItem(atPath: original.path, toPath: root.path + "/etc/headwater/ads.yaml")
            let (checkStatus, checkOutput) = try root.checkConfig(binary: "/usr/local/bin/headwater")
            #expect(checkStatus == 78, "check-config exit \(checkStatus):\n\(checkOutput)")
            #expect(checkOutput.contains("/etc/headwater/ads.yaml:"), "file:line: key.path: message lines:\n\(checkOutput)")
        }

        @Test("installing again keeps the administrator's configuration and secrets")
        func reinstallKeepsEdits() throws {
            let root = try InstalledRoot()
            defer { root.remove() }
            let install = ["bash", Self.script, "--root", root.path, "--binary", HeadwaterProcess.executable.path]
            #expect(try InstalledRoot.shell(install).status == 0)
            let env = root.path + "/etc/headwater/headwater.env"
            let yaml = root.path + "/etc/headwater/headwater.yaml"
            try "HEADWATER_INGEST_TOKEN=kept-secret\n".write(toFile: env, atomically: true, encoding: .utf8)
            let edited = try String(contentsOfFile: yaml, encoding: .utf8).replacingOccurrences(
                of: "listen: 127.0.0.1:8080", with: "listen: 0.0.0.0:8080")
            try edited.write(toFile: yaml, atomically: true, encoding: .utf8)
            let (status, output) = try InstalledRoot.shell(install)
            #expect(status == 0, "\(output)")
            #expect(output.contains("kept \(yaml)"), "\(output)")
            #expect(try String(contentsOfFile: env, encoding: .utf8) == "HEADWATER_INGEST_TOKEN=kept-secret\n")
            #expect(try String(contentsOfFile: yaml, encoding: .utf8) == edited)
        }
    }
}

/// A scratch directory standing for `/` of a machine Headwater is installed on.
struct InstalledRoot {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("hw-root-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    func read(_ file: String) throws -> String { try String(contentsOfFile: path + file, encoding: .utf8) }

    func mode(_ file: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path + file)[.posixPermissions] as? Int)
    }

    /// A user's uid and gid from the root's `/etc/passwd` (systemd-sysusers --root wrote it).
    func user(_ name: String) throws -> (uid: String, gid: String) {
        let passwd = try read("/etc/passwd")
        let fields = try #require(
            passwd.split(separator: "\n").map { $0.split(separator: ":", omittingEmptySubsequences: false) }
                .first { $0.first == Substring(name) }, "user \(name) in \(path)/etc/passwd:\n\(passwd)")
        return (String(fields[2]), String(fields[3]))
    }

    /// Runs the installed `binary check-config /etc/headwater/headwater.yaml` as the service's user
    /// (``inside(_:)``, then setpriv to the `headwater` uid and gid the install created).
    func checkConfig(binary: String) throws -> (status: Int32, output: String) {
        let (uid, gid) = try user("headwater")
        let setpriv = try #require(
            RealClients.ServeCommandTests.which("setpriv"), "setpriv (util-linux) is required: apt-get install -y util-linux")
        return try inside([
            setpriv, "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", binary, "check-config",
            "/etc/headwater/headwater.yaml",
        ])
    }

    /// Runs `command` seeing the root's files at their installed paths: in a private mount
    /// namespace, the root's `/usr` and `/etc` are laid over the machine's (read-only overlays, so
    /// the Swift runtime, libc and systemd's own units still resolve). Nothing outside the namespace
    /// changes. Needs root. Its exit status and standard output and error together.
    func inside(_ command: [String]) throws -> (status: Int32, output: String) {
        let script = """
            set -e
            mount -t overlay headwater-usr -o lowerdir="$0/usr:/usr" /usr
            mount -t overlay headwater-etc -o lowerdir="$0/etc:/etc" /etc
            exec "$@"
            """
        let unshare = try #require(
            RealClients.ServeCommandTests.which("unshare"), "unshare (util-linux) is required: apt-get install -y util-linux")
        return try Self.shell([unshare, "--mount", "--propagation", "private", "bash", "-c", script, path] + command)
    }

    /// Runs a command in the repository (where the README's commands run); status and output.
    static func shell(_ command: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        process.currentDirectoryURL = RealClients.ServeCommandTests.repository
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
