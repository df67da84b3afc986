import Foundation
import HeadwaterConfiguration
import Testing

@Suite("Configuration: server.tls")
struct TLSConfigurationTests {
    static let channel = "channels:\n  demo:\n    source: {type: push}\n"

    /// A configuration whose `server.tls` block (line 2) holds `lines` (from line 3 on).
    static func tls(_ lines: [String]) -> String {
        "server:\n  tls:\n" + lines.map { "    \($0)\n" }.joined() + channel
    }

    static let complete = ["listen: 0.0.0.0:8443", "certificate: tls/fullchain.pem", "key: tls/key.pem"]

    /// The problems `text` is refused with, as `file:line: key.path: message` lines (none if it parses).
    static func problems(_ text: String) -> [String] {
        do {
            _ = try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/etc/headwater")
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    static func parse(_ text: String) throws -> HeadwaterConfiguration {
        try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/etc/headwater")
    }

    @Test("server.tls parses listen, certificate and key; relative paths resolve against the file's directory; the key lines are kept")
    func parses() throws {
        let tls = try #require(try Self.parse(Self.tls(Self.complete)).server.tls)
        #expect(tls.host == "0.0.0.0")
        #expect(tls.port == 8443)
        #expect(tls.certificatePath == "/etc/headwater/tls/fullchain.pem")
        #expect(tls.keyPath == "/etc/headwater/tls/key.pem")
        #expect(tls.certificateLine == 4)
        #expect(tls.keyLine == 5)

        let flow = try #require(
            try Self.parse(
                "# comment\nserver:\n  tls: {listen: \"[::1]:0\", certificate: /srv/cert.pem, key: /srv/key.pem}\n" + Self.channel
            ).server.tls)
        #expect(flow == ServerTLS(host: "::1", port: 0, certificatePath: "/srv/cert.pem", keyPath: "/srv/key.pem"))
        #expect(flow.certificateLine == 3 && flow.keyLine == 3)
    }

    @Test("without server.tls the server is plain HTTP only")
    func absent() throws {
        #expect(try Self.parse(Self.channel).server.tls == nil)
        #expect(try Self.parse("server:\n  listen: 127.0.0.1:8080\n" + Self.channel).server.tls == nil)
    }

    @Test(
        "every bad server.tls value is one file:line: key.path: message",
        arguments: [
            (
                ["listen: nowhere", "certificate: c.pem", "key: k.pem"],
                "h.yaml:3: server.tls.listen: must be HOST:PORT, e.g. 0.0.0.0:8443 or [::1]:8443, got \"nowhere\""
            ),
            (
                ["listen: 0.0.0.0:70000", "certificate: c.pem", "key: k.pem"],
                "h.yaml:3: server.tls.listen: must be HOST:PORT, e.g. 0.0.0.0:8443 or [::1]:8443, got \"0.0.0.0:70000\""
            ),
            (
                ["listen: \":8443\"", "certificate: c.pem", "key: k.pem"],
                "h.yaml:3: server.tls.listen: must be HOST:PORT, e.g. 0.0.0.0:8443 or [::1]:8443, got \":8443\""
            ),
            (["listen: 0.0.0.0:8443", "certificate: \"\"", "key: k.pem"], "h.yaml:4: server.tls.certificate: must be a non-empty string"),
            (["listen: 0.0.0.0:8443", "certificate: c.pem", "key: [k.pem]"], "h.yaml:5: server.tls.key: must be a non-empty string"),
            (["certificate: c.pem", "key: k.pem"], "h.yaml:3: server.tls.listen: required: HOST:PORT of the TLS listener, e.g. 0.0.0.0:8443"),
            (["listen: 0.0.0.0:8443", "key: k.pem"], "h.yaml:3: server.tls.certificate: required: the PEM certificate chain (leaf first)"),
            (["listen: 0.0.0.0:8443", "certificate: c.pem"], "h.yaml:3: server.tls.key: required: the PEM private key of the certificate"),
            (
                ["listen: 0.0.0.0:8443", "certificate: c.pem", "key: k.pem", "ciphers: HIGH"],
                "h.yaml:6: server.tls.ciphers: unknown key (expected one of: certificate, key, listen)"
            ),
        ])
    func badValue(_ lines: [String], _ expected: String) {
        #expect(Self.problems(Self.tls(lines)) == [expected])
    }

    @Test("several mistakes in server.tls are all reported in one run: unknown keys, bad values, then missing keys")
    func everyProblemAtOnce() {
        #expect(
            Self.problems(Self.tls(["listen: 8443", "certificat: c.pem"])) == [
                "h.yaml:4: server.tls.certificat: unknown key (expected one of: certificate, key, listen)",
                "h.yaml:3: server.tls.listen: must be HOST:PORT, e.g. 0.0.0.0:8443 or [::1]:8443, got \"8443\"",
                "h.yaml:3: server.tls.certificate: required: the PEM certificate chain (leaf first)",
                "h.yaml:3: server.tls.key: required: the PEM private key of the certificate",
            ])
    }

    @Test("a server.tls that is not a mapping, or is empty, is refused at its line")
    func notAMapping() {
        #expect(Self.problems("server:\n  tls: on\n" + Self.channel) == ["h.yaml:2: server.tls: must be a mapping (key: value lines)"])
        #expect(Self.problems("server:\n  tls:\n" + Self.channel) == ["h.yaml:2: server.tls: must be a mapping (key: value lines)"])
    }

    @Test("the TLS listener cannot share server.listen's address; another port or host is fine")
    func sameAddressAsPlain() throws {
        let text = "server:\n  listen: 127.0.0.1:8443\n  tls:\n    listen: 127.0.0.1:8443\n    certificate: c.pem\n    key: k.pem\n"
            + Self.channel
        #expect(
            Self.problems(text) == [
                "h.yaml:4: server.tls.listen: must differ from server.listen (127.0.0.1:8443): one port cannot serve both"
            ])
        #expect(Self.problems(text.replacingOccurrences(of: "listen: 127.0.0.1:8443\n    cert", with: "listen: 127.0.0.1:9443\n    cert")) == [])
        // Port 0 asks the kernel for a free port each time: two listeners never collide.
        #expect(Self.problems(text.replacingOccurrences(of: "8443", with: "0")) == [])
    }

    @Test("equality ignores the lines: moving server.tls in the file is not a change")
    func equalityIgnoresLines() throws {
        let here = try #require(try Self.parse(Self.tls(Self.complete)).server.tls)
        let moved = try #require(try Self.parse("# a comment\n# another\n" + Self.tls(Self.complete)).server.tls)
        #expect(here.certificateLine != moved.certificateLine)
        #expect(here == moved)
        #expect(here.hashValue == moved.hashValue)
    }

    @Test(
        "reload: moving the TLS listener, adding or removing it waits for a restart; new certificate or key files, or the same ones re-read, do not",
        arguments: [
            (TLSConfigurationTests.complete, TLSConfigurationTests.complete, [String]()),
            (TLSConfigurationTests.complete, ["listen: 0.0.0.0:9443", "certificate: tls/fullchain.pem", "key: tls/key.pem"], ["server.tls.listen"]),
            (TLSConfigurationTests.complete, ["listen: 0.0.0.0:8443", "certificate: tls/new.pem", "key: tls/key.pem"], [String]()),
            (TLSConfigurationTests.complete, ["listen: 0.0.0.0:8443", "certificate: tls/fullchain.pem", "key: tls/new-key.pem"], [String]()),
            (TLSConfigurationTests.complete, [String](), ["server.tls"]),
            ([String](), TLSConfigurationTests.complete, ["server.tls"]),
            ([String](), [String](), [String]()),
        ])
    func reloadPlan(_ before: [String], _ after: [String], _ restart: [String]) throws {
        func configuration(_ lines: [String]) throws -> HeadwaterConfiguration {
            try Self.parse(lines.isEmpty ? Self.channel : Self.tls(lines))
        }
        let plan = try ReloadPlan.make(from: try configuration(before), to: try configuration(after), file: "h.yaml")
        #expect(plan.needsRestart == restart)
        #expect(!plan.changesChannels)
    }
}
