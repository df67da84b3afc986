import ArgumentParser
import Foundation
import HeadwaterRuntime

/// `headwater key-token --channel demo --ttl 3600`: mints a key token as an entitlement service
/// would (``KeyTokenSigner`` documents the format), with the secret in `HEADWATER_KEY_TOKEN_SECRET`.
struct KeyTokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key-token",
        abstract: "Print a key token for a channel's /live keys (secret from HEADWATER_KEY_TOKEN_SECRET).")

    @Option(help: "The channel whose keys the token opens.")
    var channel: String

    @Option(help: "Seconds the token works for.")
    var ttl: UInt64 = 3600

    func run() throws {
        guard let secret = ProcessInfo.processInfo.environment[KeyWiring.tokenSecretVariable], !secret.isEmpty else {
            throw ValidationError("\(KeyWiring.tokenSecretVariable) is not set")
        }
        let signer: KeyTokenSigner
        do { signer = try KeyTokenSigner(secretText: secret) } catch { throw ValidationError("\(KeyWiring.tokenSecretVariable): \(error)") }
        let now = UInt64(Date().timeIntervalSince1970)
        print(signer.mint(channel: channel, expiry: now + ttl))
    }
}
