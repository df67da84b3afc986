import ArgumentParser
import Foundation
import HeadwaterConfiguration
import HeadwaterHTTP
import HeadwaterRuntime
import Logging

/// The TLS listener's certificate, from `server.tls` (and `--tls-listen`), at start, in
/// `check-config` and on `SIGHUP`. A certificate or key that cannot be used is a configuration
/// error at the line of the key that names it (`file:line: server.tls.certificate: …`, exit 78 at
/// start): a listener that cannot complete a handshake is a typo to fix, not a server to run.
enum TLSWiring {
    /// Reads the files `tls` names and makes the context handshakes use.
    static func certificates(_ tls: ServerTLS, file: String) throws(ConfigurationError) -> TLSCertificates {
        do {
            return try TLSCertificates(certificatePath: tls.certificatePath, keyPath: tls.keyPath)
        } catch {
            throw ConfigurationError(problems: [problem(error, tls: tls, file: file)])
        }
    }

    /// `error` as a problem of the key that names the wrong file. A key that does not match its
    /// certificate is the key's problem (`TLSCertificates` names the key file): the certificate is
    /// what clients check, the key what an operator swapped by mistake.
    static func problem(_ error: TLSCertificates.LoadError, tls: ServerTLS, file: String) -> ConfigurationError.Problem {
        let isKey = error.path == tls.keyPath && tls.keyPath != tls.certificatePath
        return .init(
            file: file, line: isKey ? tls.keyLine : tls.certificateLine,
            keyPath: isKey ? "server.tls.key" : "server.tls.certificate", message: error.description)
    }

    /// The listener `serve` binds: `server.tls` with its address replaced by `--tls-listen`, if given.
    ///
    /// - Throws: ``ConfigurationError`` when `--tls-listen` is given without `server.tls` (there is
    ///   no certificate to serve), `ValidationError` when it is not `HOST:PORT`.
    static func listener(
        _ tls: ServerTLS?, certificates: TLSCertificates?, override: String?, file: String
    ) throws -> TLSListenerConfiguration? {
        guard let tls, let certificates else {
            guard override == nil else {
                throw ConfigurationError(problems: [
                    .init(
                        file: file, line: nil, keyPath: "server.tls",
                        message: "required by --tls-listen: the TLS listener needs certificate and key (Config/README.md, \"server.tls\")")
                ])
            }
            return nil
        }
        var address = (host: tls.host, port: tls.port)
        if let override { address = try ListenAddress.parse(override, option: "--tls-listen") }
        return TLSListenerConfiguration(host: address.host, port: address.port, certificates: certificates)
    }

    /// After an applied reload: reads the certificate and key again, from the files the reloaded
    /// configuration names (a renewed certificate at the same paths, or new paths). The configuration loader has already checked the files, so a failure here means
    /// they changed in between; it is reported as a rejected reload, and handshakes keep the
    /// certificate they had. Returns whether the new files are in use.
    static func reload(_ certificates: TLSCertificates, from tls: ServerTLS, logger: Logger) -> Bool {
        do {
            try certificates.reload(certificatePath: tls.certificatePath, keyPath: tls.keyPath)
            logger.info("certificate reloaded", metadata: ["tls.certificate": "\(certificates.summary)"])
            return true
        } catch {
            OriginMetrics.shared.configReload(result: .rejected)
            logger.error(
                "certificate reload rejected: \(error.description); the previous certificate keeps serving",
                metadata: ["tls.file": "\(error.path)"])
            return false
        }
    }
}

/// `HOST:PORT` as `--listen` and `--tls-listen` take it (`[::1]:8080` for IPv6).
enum ListenAddress {
    static func parse(_ text: String, option: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), colon > text.startIndex,
            let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port)
        else {
            throw ValidationError("\(option) must be HOST:PORT, got \"\(text)\"")
        }
        return (String(text[..<colon]).trimmingCharacters(in: ["[", "]"]), port)
    }
}
