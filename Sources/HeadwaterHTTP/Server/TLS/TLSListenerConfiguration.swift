/// The TLS listener beside the plain HTTP one (`server.tls` in `headwater.yaml`, `--tls-listen`):
/// where it binds and the certificate it presents. HTTP/1.1 and HTTP/2 (`h2` by ALPN) are served
/// on it through the same responder as on the plain port.
public struct TLSListenerConfiguration: Sendable {
    /// Address to bind, e.g. `127.0.0.1` or `0.0.0.0`.
    public var host: String
    /// Port to bind; `0` asks the kernel for a free one (tests: read it back from
    /// ``OriginServer/waitUntilTLSListening()``).
    public var port: Int
    /// The certificate chain and key, re-read on `SIGHUP` (``TLSCertificates/reload()``).
    public var certificates: TLSCertificates

    public init(host: String, port: Int, certificates: TLSCertificates) {
        self.host = host
        self.port = port
        self.certificates = certificates
    }
}
