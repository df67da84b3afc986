import Foundation
import HeadwaterConfiguration
import HeadwaterRuntime
import HeadwaterSources

/// The secrets encrypted channels need, read from the environment at start: the content-key secret
/// (`server.key_secret_env`, `HEADWATER_KEY_SECRET` by default) when any channel is encrypted, and
/// the key-token secret (``tokenSecretVariable``) when any asks for key tokens. A missing or
/// malformed secret is a configuration error (exit 78): an encrypted channel never starts clear.
enum KeyWiring {
    /// The key-token secret's variable: what the entitlement service that mints key tokens shares
    /// with Headwater (never the content-key secret).
    static let tokenSecretVariable = "HEADWATER_KEY_TOKEN_SECRET"

    static func keyring(
        _ configuration: HeadwaterConfiguration, file: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> ChannelKeyring {
        let encrypted = configuration.channels.filter { $0.encryption != nil }
        guard let first = encrypted.first else { return ChannelKeyring() }
        func problem(_ message: String) -> ConfigurationError {
            ConfigurationError(problems: [.init(file: file, line: nil, keyPath: "channels.\(first.name).encryption", message: message)])
        }
        let name = configuration.server.keySecretEnvironmentVariable
        guard let text = environment[name], !text.isEmpty else {
            throw problem("\(name) is not set: an encrypted channel needs a 32-byte key secret (openssl rand -hex 32)")
        }
        let keys: ContentKeys
        do { keys = try ContentKeys(secretText: text) } catch { throw problem("\(name): \(error)") }
        guard encrypted.contains(where: { $0.encryption?.keyAccess == .token }) else { return ChannelKeyring(keys: keys) }
        guard let tokenText = environment[tokenSecretVariable], !tokenText.isEmpty else {
            throw problem("\(tokenSecretVariable) is not set: key_access: token needs the key-token secret")
        }
        do {
            return ChannelKeyring(keys: keys, tokens: try KeyTokenSigner(secretText: tokenText))
        } catch {
            throw problem("\(tokenSecretVariable): \(error)")
        }
    }
}
