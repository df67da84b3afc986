public import HeadwaterConfiguration
public import HeadwaterRuntime

/// The secrets encrypted channels are keyed from, read once at start, and the one rule that turns
/// a channel's `encryption:` block into its ``ChannelKeying``: for every source.
public struct ChannelKeyring: Sendable {
    /// Content keys (`HEADWATER_KEY_SECRET`), `nil` when no channel was encrypted at start.
    public var keys: ContentKeys?
    /// Key tokens (`HEADWATER_KEY_TOKEN_SECRET`), `nil` when no channel asked for them at start.
    public var tokens: KeyTokenSigner?

    public init(keys: ContentKeys? = nil, tokens: KeyTokenSigner? = nil) {
        self.keys = keys
        self.tokens = tokens
    }

    /// `channel`'s keying, `nil` when it is clear.
    ///
    /// - Throws: ``KeySecretError`` when a secret it needs was not read at start (a reload that
    ///   encrypts a channel first needs a restart with the secret set).
    public func keying(for channel: HeadwaterConfiguration.Channel) throws(KeySecretError) -> ChannelKeying? {
        guard let encryption = channel.encryption else { return nil }
        guard let keys else {
            throw KeySecretError("channel \(channel.name) is encrypted but \(ContentKeys.environmentVariable) was not set at start")
        }
        let access: ChannelKeying.Access
        switch encryption.keyAccess {
        case .open:
            access = .open
        case .token:
            guard let tokens else {
                throw KeySecretError("channel \(channel.name) needs key tokens but HEADWATER_KEY_TOKEN_SECRET was not set at start")
            }
            access = .token(tokens)
        }
        return ChannelKeying(channel: channel.name, keys: keys, rotateEvery: UInt64(encryption.rotateEvery), access: access)
    }
}
