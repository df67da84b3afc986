import Yams

/// `server.tls`: the TLS listener beside the plain one (HTTP/1.1 and HTTP/2 by ALPN), and the PEM
/// files it presents. Documented in `Config/README.md` ("`server.tls`").
///
/// The files are only named here; reading them (and refusing a bad certificate, a bad key or a key
/// that does not match) is the executable's job, which reports it against ``certificateLine`` or
/// ``keyLine`` as `file:line: server.tls.certificate: …`, like any other configuration error.
public struct ServerTLS: Sendable {
    /// `server.tls.listen` (`HOST:PORT`, required): where the TLS listener binds, e.g. `0.0.0.0:8443`.
    public var host: String
    public var port: Int
    /// `server.tls.certificate` (path, required): the PEM certificate chain, leaf first, then the
    /// intermediates (a CA's `fullchain.pem`).
    public var certificatePath: String
    /// `server.tls.key` (path, required): the PEM private key of the leaf certificate.
    public var keyPath: String
    /// Line of the `certificate` key in the configuration file, so a certificate that cannot be
    /// used is reported where the operator named it.
    public var certificateLine: Int?
    /// Line of the `key` key, for the same reason.
    public var keyLine: Int?

    public init(
        host: String, port: Int, certificatePath: String, keyPath: String, certificateLine: Int? = nil, keyLine: Int? = nil
    ) {
        self.host = host
        self.port = port
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        self.certificateLine = certificateLine
        self.keyLine = keyLine
    }
}

/// Equality ignores the lines: moving `server.tls` within the file (a comment added above it) is
/// not a change a reload has to act on.
extension ServerTLS: Hashable {
    public static func == (lhs: ServerTLS, rhs: ServerTLS) -> Bool {
        lhs.host == rhs.host && lhs.port == rhs.port && lhs.certificatePath == rhs.certificatePath
            && lhs.keyPath == rhs.keyPath
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(host)
        hasher.combine(port)
        hasher.combine(certificatePath)
        hasher.combine(keyPath)
    }
}

extension HeadwaterConfiguration {
    /// `server.tls` at `path`; `nil` (with every problem recorded) when it is not usable. All three
    /// keys are required: a listener without a certificate cannot accept a handshake, and one
    /// without an address would have to guess a port.
    static func parseTLS(_ node: Node, path: String, reader: inout YAMLReader, baseDirectory: String) -> ServerTLS? {
        let entries = reader.mapping(node, path, allowed: ["listen", "certificate", "key"])
        guard case .mapping = node else { return nil }
        var address: (host: String, port: Int)?
        var certificate: (path: String, line: Int?)?
        var key: (path: String, line: Int?)?
        for (name, value, keyNode) in entries {
            let keyPath = "\(path).\(name)"
            switch name {
            case "listen":
                address = parseListenAddress(value, keyPath, reader: &reader, example: ("0.0.0.0", 8443))
            case "certificate", "key":
                guard let text = reader.string(value, keyPath) else { continue }
                let file = (path: resolve(text, against: baseDirectory), line: keyNode.mark?.line)
                if name == "certificate" { certificate = file } else { key = file }
            default:
                break
            }
        }
        let required = [
            ("listen", "HOST:PORT of the TLS listener, e.g. 0.0.0.0:8443"),
            ("certificate", "the PEM certificate chain (leaf first)"),
            ("key", "the PEM private key of the certificate"),
        ]
        for (name, what) in required where !entries.contains(where: { $0.key == name }) {
            reader.fail(node, "\(path).\(name)", "required: \(what)")
        }
        guard let address, let certificate, let key else { return nil }
        return ServerTLS(
            host: address.host, port: address.port, certificatePath: certificate.path, keyPath: key.path,
            certificateLine: certificate.line, keyLine: key.line)
    }

    /// `HOST:PORT` (`[::1]:8080` for IPv6, port 0 for any free one), as `server.listen` and
    /// `server.tls.listen` take it.
    static func parseListenAddress(
        _ node: Node, _ path: String, reader: inout YAMLReader, example: (host: String, port: Int)
    ) -> (host: String, port: Int)? {
        guard let text = reader.string(node, path) else { return nil }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port), colon > text.startIndex
        else {
            reader.fail(
                node, path, "must be HOST:PORT, e.g. \(example.host):\(example.port) or [::1]:\(example.port), got \"\(text)\"")
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }
}
