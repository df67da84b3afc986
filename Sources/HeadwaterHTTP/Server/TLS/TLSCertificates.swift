public import NIOSSL
import Synchronization

/// The TLS listener's certificate chain and private key, read from PEM files, and the server
/// context made from them: what every new handshake presents.
///
/// ``reload()`` (on `SIGHUP`) re-reads both files and swaps the context at once: handshakes that
/// start afterwards use the new certificate, connections already open keep the one they
/// negotiated. A file that cannot be read, does not parse, or a key that does not match the
/// certificate is refused, and the old context keeps serving.
///
/// The context speaks TLS 1.2 and 1.3 only, with AEAD cipher suites and forward secrecy
/// (ECDHE; TLS 1.3's suites are all of that kind), and offers `h2` then `http/1.1` by ALPN.
public final class TLSCertificates: Sendable {
    /// Why a certificate or key file was refused; `path` is the file that was wrong.
    public struct LoadError: Error, CustomStringConvertible, Equatable {
        public let path: String
        public let reason: String
        public var description: String { "\(path): \(reason)" }
    }

    private let current: Mutex<Loaded>

    private struct Loaded: Sendable {
        let context: NIOSSLContext
        let summary: String
        let certificatePath: String
        let keyPath: String
    }

    /// The files the context in use was read from.
    public var certificatePath: String { current.withLock { $0.certificatePath } }
    public var keyPath: String { current.withLock { $0.keyPath } }

    /// ALPN protocols offered, most preferred first.
    public static let applicationProtocols = ["h2", "http/1.1"]

    /// TLS 1.2 suites: ECDHE key exchange and AEAD only (TLS 1.3 negotiates its own, all AEAD).
    static let tls12CipherSuites = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    public init(certificatePath: String, keyPath: String) throws(LoadError) {
        self.current = Mutex(try Self.load(certificatePath: certificatePath, keyPath: keyPath))
    }

    /// The context new handshakes use.
    public var context: NIOSSLContext { current.withLock { $0.context } }

    /// The leaf certificate's subject and expiry, for logs (`certificate reloaded`).
    public var summary: String { current.withLock { $0.summary } }

    /// Reads the certificate and key again — from the same files, or from others a reloaded
    /// configuration names; on success new handshakes use them, on failure the old ones stay.
    public func reload(certificatePath: String? = nil, keyPath: String? = nil) throws(LoadError) {
        let loaded = try Self.load(
            certificatePath: certificatePath ?? self.certificatePath, keyPath: keyPath ?? self.keyPath)
        current.withLock { $0 = loaded }
    }

    private static func load(certificatePath: String, keyPath: String) throws(LoadError) -> Loaded {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw LoadError(path: certificatePath, reason: "cannot read a PEM certificate chain (\(error))")
        }
        guard let leaf = chain.first else {
            throw LoadError(path: certificatePath, reason: "no certificate in the file")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw LoadError(path: keyPath, reason: "cannot read a PEM private key (\(error))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuites = tls12CipherSuites
        configuration.applicationProtocols = applicationProtocols
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw LoadError(path: keyPath, reason: "the key does not go with the certificate, or is unusable (\(error))")
        }
        let expiry = leaf.notValidAfter
        let subject = leaf.description
        return Loaded(
            context: context, summary: "\(subject), not valid after \(expiry) (Unix seconds)",
            certificatePath: certificatePath, keyPath: keyPath)
    }
}
