import Foundation

/// A certificate authority made for one test run by `openssl` (an implementation independent of
/// Headwater's TLS stack), in a temporary directory: an ECDSA P-256 CA and a server certificate it
/// signed for `localhost` and `127.0.0.1` (subjectAltName `DNS:localhost,IP:127.0.0.1`, serverAuth).
///
/// Clients trust it by ``caCertificate`` (`curl --cacert`, async-http-client's `trustRoots`) or, for
/// Chromium, by the server key's SPKI hash (``serverSPKISHA256``,
/// `--ignore-certificate-errors-spki-list`). Both certificates are valid for two days from now.
/// ``remove()`` deletes the directory.
public struct TestCertificateAuthority: Sendable {
    /// The directory holding every file below.
    public let directory: String
    /// The CA's certificate (PEM): what clients trust.
    public let caCertificate: String
    /// The server's certificate chain (PEM): the leaf, then the CA.
    public let serverCertificateChain: String
    /// The server's private key (PEM, PKCS#8).
    public let serverKey: String
    /// Base64 of the SHA-256 of the server key's DER SubjectPublicKeyInfo (Chromium's SPKI pin form).
    public let serverSPKISHA256: String

    /// Why `openssl` could not make the CA: the command, its exit status and what it printed.
    public struct Failure: Error, CustomStringConvertible {
        public let command: [String]
        public let status: Int32
        public let output: String
        public var description: String { "openssl \(command.joined(separator: " ")) exited \(status): \(output)" }
    }

    /// Makes the CA and the server certificate in a new temporary directory.
    /// - Parameter openssl: the `openssl` executable.
    public init(openssl: String = "/usr/bin/openssl") throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-test-ca-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func path(_ name: String) -> String { "\(directory)/\(name)" }
        func run(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: openssl)
            process.arguments = arguments
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw Failure(command: arguments, status: process.terminationStatus, output: text)
            }
        }
        try """
            [ca]
            basicConstraints = critical, CA:TRUE
            keyUsage = critical, keyCertSign, cRLSign
            subjectKeyIdentifier = hash
            [server]
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = serverAuth
            subjectAltName = DNS:localhost, IP:127.0.0.1
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid

            """.write(toFile: path("extensions.cnf"), atomically: true, encoding: .utf8)
        do {
            for key in ["ca.key", "server.key"] {
                try run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path(key)])
            }
            // A self-signed CA certificate: a request signed by its own key, as x509 -req -signkey makes it.
            try run(["req", "-new", "-key", path("ca.key"), "-subj", "/CN=Headwater test CA", "-out", path("ca.csr")])
            try run([
                "x509", "-req", "-in", path("ca.csr"), "-key", path("ca.key"), "-sha256",
                "-days", "2",
                "-extfile", path("extensions.cnf"), "-extensions", "ca", "-out", path("ca.pem"),
            ])
            try run(["req", "-new", "-key", path("server.key"), "-subj", "/CN=localhost", "-out", path("server.csr")])
            try run([
                "x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                "-set_serial", "0x\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16))", "-sha256",
                "-days", "2",
                "-extfile", path("extensions.cnf"), "-extensions", "server", "-out", path("server.pem"),
            ])
            try run(["pkey", "-in", path("server.key"), "-pubout", "-outform", "DER", "-out", path("server-spki.der")])
            try run(["dgst", "-sha256", "-binary", "-out", path("server-spki.sha256"), path("server-spki.der")])
            try run(["verify", "-CAfile", path("ca.pem"), path("server.pem")])
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        let leaf = try String(contentsOfFile: path("server.pem"), encoding: .utf8)
        let ca = try String(contentsOfFile: path("ca.pem"), encoding: .utf8)
        try (leaf + ca).write(toFile: path("server-chain.pem"), atomically: true, encoding: .utf8)
        self.directory = directory
        caCertificate = path("ca.pem")
        serverCertificateChain = path("server-chain.pem")
        serverKey = path("server.key")
        serverSPKISHA256 = try Data(contentsOf: URL(fileURLWithPath: path("server-spki.sha256"))).base64EncodedString()
    }

    public func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
