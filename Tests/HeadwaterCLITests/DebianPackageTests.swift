import Foundation
import Testing

extension RealClients {
    /// `Tests/tools/build-deb.sh` on this build's binary: the package's contents and control files
    /// as `dpkg-deb` reads them, then the package installed by `dpkg --root` into a scratch root (its
    /// postinst run there through DPKG_ROOT) and the installed configuration checked by the
    /// installed binary as the user the postinst created. Needs root and Debian's dpkg.
    @Suite("Debian package")
    struct DebianPackageTests {
        /// The .deb of this build (the debug binary: it loads the toolchain's runtime, which the
        /// script warns about and which the machine running the tests has), gzip-compressed: xz,
        /// the default, takes a minute longer on a debug binary and changes nothing tested here.
        static func build(into directory: String) throws -> String {
            let (status, output) = try InstalledRoot.shell([
                "bash", "Tests/tools/build-deb.sh", "--binary", HeadwaterProcess.executable.path, "--output", directory,
                "--compression", "gzip",
            ])
            #expect(status == 0, "build-deb.sh exit \(status):\n\(output)")
            let deb = try #require(output.split(separator: "\n").last.map(String.init), "build-deb.sh prints the .deb")
            #expect(deb.hasSuffix(".deb") && FileManager.default.fileExists(atPath: deb), "\(output)")
            return deb
        }

        static func dpkgDeb(_ arguments: [String]) throws -> String {
            let tool = try #require(ServeCommandTests.which("dpkg-deb"), "dpkg-deb is required: apt-get install -y dpkg")
            let (status, output) = try InstalledRoot.shell([tool] + arguments)
            #expect(status == 0, "dpkg-deb \(arguments.joined(separator: " ")) exit \(status):\n\(output)")
            return output
        }

        @Test("dpkg-deb -c lists the binary, Public/, the configs, the unit, the user, the licence; owned by root; conffiles")
        func contents() throws {
            let output = try InstalledRoot()
            defer { output.remove() }
            let deb = try Self.build(into: output.path)
            // `-rwxr-xr-x root/root 123 2026-11-27 11:00 ./usr/bin/headwater`: mode, owner and path.
            let listing = try Self.dpkgDeb(["-c", deb])
            var entries: [String: (mode: Substring, owner: Substring)] = [:]
            for line in listing.split(separator: "\n") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count >= 6 else { continue }
                entries[String(fields[5...].joined(separator: " ").dropFirst())] = (fields[0], fields[1])
            }
            var expected: [String: Substring] = [
                "/usr/bin/headwater": "-rwxr-xr-x",
                "/usr/share/headwater/Public/index.html": "-rw-r--r--",
                "/usr/share/headwater/Public/demo/master.m3u8": "-rw-r--r--",
                "/usr/share/headwater/Public/slate/master.m3u8": "-rw-r--r--",
                "/etc/headwater/headwater.yaml": "-rw-r--r--",
                "/etc/headwater/ads.yaml": "-rw-r--r--",
                "/etc/headwater/headwater.env": "-rw-r-----",
                "/lib/systemd/system/headwater.service": "-rw-r--r--",
                "/usr/lib/sysusers.d/headwater.conf": "-rw-r--r--",
                "/usr/share/doc/headwater/copyright": "-rw-r--r--",
            ]
            let logrotate = ServeCommandTests.repository.appendingPathComponent("systemd/headwater.logrotate").path
            if FileManager.default.fileExists(atPath: logrotate) {
                expected["/etc/logrotate.d/headwater"] = "-rw-r--r--"
            }
            for (path, mode) in expected {
                #expect(entries[path]?.mode == mode, "\(path): \(entries[path].map { "\($0.mode)" } ?? "missing")\n\(listing)")
            }
            #expect(entries.values.allSatisfy { $0.owner == "root/root" }, "every file root/root:\n\(listing)")
            #expect(!entries.keys.contains { $0.hasPrefix("/usr/local") || ($0.hasPrefix("/etc") && $0.hasSuffix("README.md")) })

            let conffiles = try Self.dpkgDeb(["-I", deb, "conffiles"]).split(separator: "\n").map(String.init)
            let etc = expected.keys.filter { $0.hasPrefix("/etc/") }.sorted()
            #expect(conffiles.sorted() == etc, "every file in /etc is a conffile: \(conffiles)")
            let license = try String(
                contentsOf: ServeCommandTests.repository.appendingPathComponent("LICENSE"), encoding: .utf8)
            #expect(license.contains("Apache License") && license.contains("Version 2.0, January 2004"))
            let fields = try Self.dpkgDeb(["-f", deb, "Package", "Version", "Depends"])
            #expect(fields.contains("Package: headwater"), "\(fields)")
            #expect(fields.contains("libc6") && fields.contains("systemd"), "\(fields)")
        }

        @Test("dpkg --root installs it and runs its postinst there; check-config as headwater exits 0")
        func installIntoRoot() throws {
            let dpkg = try #require(ServeCommandTests.which("dpkg"), "dpkg is required")
            let scratch = try InstalledRoot()
            let root = try InstalledRoot()
            defer {
                scratch.remove()
                root.remove()
            }
            let deb = try Self.build(into: scratch.path)
            // An empty dpkg database in the root: nothing installed, so the package's Depends
            // (libc6, systemd) are not recorded there; the machine has them (--force-depends).
            let admin = root.path + "/var/lib/dpkg"
            for directory in ["updates", "info", "triggers"] {
                try FileManager.default.createDirectory(
                    atPath: admin + "/" + directory, withIntermediateDirectories: true)
            }
            for file in ["status", "available"] {
                try Data().write(to: URL(fileURLWithPath: admin + "/" + file))
            }
            // --force-script-chrootless: the maintainer scripts run here with DPKG_ROOT set, not
            // chrooted into a root that has no shell.
            let (status, output) = try InstalledRoot.shell([
                dpkg, "--root=\(root.path)", "--force-script-chrootless", "--force-depends", "--log=/dev/null", "-i", deb,
            ])
            #expect(status == 0, "dpkg -i exit \(status):\n\(output)")
            #expect(output.contains("Setting up headwater"), "\(output)")

            _ = try root.user("headwater")
            let unit = try root.read("/lib/systemd/system/headwater.service")
            #expect(unit.contains("\nExecStart=/usr/bin/headwater serve --config /etc/headwater/headwater.yaml\n"), "\(unit)")
            #expect(unit.contains("\nWorkingDirectory=/usr/share/headwater\n"), "\(unit)")
            #expect(!unit.contains("/usr/local"), "\(unit)")
            let config = try root.read("/etc/headwater/headwater.yaml")
            #expect(config.contains("\nserver:\n  access_log: /var/log/headwater/access.log\n  state: /var/lib/headwater\n"), "\(config)")
            #expect(config.contains("/usr/share/headwater/Public/"), "\(config)")

            let (checkStatus, checkOutput) = try root.checkConfig(binary: "/usr/bin/headwater")
            #expect(checkStatus == 0, "check-config exit \(checkStatus):\n\(checkOutput)")
            #expect(checkOutput.contains("/etc/headwater/headwater.yaml: ok"), "\(checkOutput)")

            // The unit as packaged: its ExecStart is the package's binary (seen through the overlay).
            let analyze = try SystemdUnitTests.require("systemd-analyze")
            let (verifyStatus, verifyOutput) = try root.inside(
                [analyze, "verify", root.path + "/lib/systemd/system/headwater.service"])
            #expect(verifyStatus == 0 && verifyOutput.isEmpty, "systemd-analyze verify exit \(verifyStatus):\n\(verifyOutput)")
        }
    }
}
