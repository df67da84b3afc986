/// What a configuration reload changes, decided before anything changes (a pure function of the
/// running and the new configuration), so a reload is applied whole or not at all.
public struct ReloadPlan: Sendable, Hashable {
    /// New channels, to start.
    public var added: [HeadwaterConfiguration.Channel] = []
    /// Channels no longer configured, to stop and remove.
    public var removed: [String] = []
    /// Changed loop, directory or pull channels, started anew (a loop keeps its numbering, which
    /// comes from the wall clock; the others number from the wall clock too).
    public var replaced: [HeadwaterConfiguration.Channel] = []
    /// Push channels kept running with the new window, stall policy, token and upload limit.
    public var reconfigured: [HeadwaterConfiguration.Channel] = []
    /// Channels whose configuration did not change.
    public var unchanged: [String] = []
    /// `server.*` keys that changed but take effect only at the next start.
    public var needsRestart: [String] = []

    /// The plan from `old` to `new` (read from `file`).
    ///
    /// - Throws: every change that cannot be applied to a live channel: a target duration never
    ///   changes while a channel lives (B2).
    public static func make(
        from old: HeadwaterConfiguration, to new: HeadwaterConfiguration, file: String
    ) throws(ConfigurationError) -> ReloadPlan {
        var plan = ReloadPlan()
        var problems: [ConfigurationError.Problem] = []
        let before = Dictionary(old.channels.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Set(new.channels.map(\.name))
        plan.removed = old.channels.map(\.name).filter { !after.contains($0) }
        for channel in new.channels {
            guard let previous = before[channel.name] else {
                plan.added.append(channel)
                continue
            }
            // Ad settings are applied in place (``ChannelSupervisor``'s applyAds): not a source change.
            var sameAds = channel
            sameAds.ads = previous.ads
            if previous == sameAds {
                plan.unchanged.append(channel.name)
                continue
            }
            let sameType = previous.source.typeName == channel.source.typeName
            if sameType, let was = previous.source.targetDuration, let now = channel.source.targetDuration, was != now {
                problems.append(
                    .init(
                        file: file, line: nil, keyPath: "channels.\(channel.name).source.target_duration",
                        message:
                            "cannot change from \(was) to \(now) while the channel is live (EXT-X-TARGETDURATION never changes, B2): remove the channel in one reload and add it back in the next"
                    ))
                continue
            }
            if previous.encryption != channel.encryption {
                // Keys and encrypted files are set up when a channel starts, from secrets read at
                // start: switching a live channel between clear and encrypted takes a restart.
                plan.needsRestart.append("channels.\(channel.name).encryption")
                continue
            }
            if sameType, case .push = channel.source {
                plan.reconfigured.append(channel)
            } else if sameType {
                plan.replaced.append(channel)
            } else {
                // Another kind of source: a new channel under the same name.
                plan.removed.append(channel.name)
                plan.added.append(channel)
            }
        }
        let server = (old.server, new.server)
        if server.0.host != server.1.host || server.0.port != server.1.port { plan.needsRestart.append("server.listen") }
        if server.0.publicDirectory != server.1.publicDirectory { plan.needsRestart.append("server.public") }
        if server.0.cors != server.1.cors { plan.needsRestart.append("server.cors") }
        if server.0.threads != server.1.threads { plan.needsRestart.append("server.threads") }
        if server.0.stateDirectory != server.1.stateDirectory { plan.needsRestart.append("server.state") }
        if server.0.sessionKeyEnvironmentVariable != server.1.sessionKeyEnvironmentVariable {
            plan.needsRestart.append("server.session_key_env")
        }
        if server.0.keySecretEnvironmentVariable != server.1.keySecretEnvironmentVariable {
            plan.needsRestart.append("server.key_secret_env")
        }
        if server.0.adminTokenEnvironmentVariable != server.1.adminTokenEnvironmentVariable {
            plan.needsRestart.append("server.admin_token_env")
        }
        plan.needsRestart += tlsChanges(from: server.0.tls, to: server.1.tls)
        if server.0.ingestListen?.host != server.1.ingestListen?.host || server.0.ingestListen?.port != server.1.ingestListen?.port {
            plan.needsRestart.append("server.ingest_listen")
        }
        if server.0.limits != server.1.limits { plan.needsRestart.append("server.limits") }
        if !problems.isEmpty { throw ConfigurationError(problems: problems) }
        return plan
    }

    /// The `server.tls` keys whose change waits for the next start. The listener's socket is bound
    /// once, so adding, removing or moving it does. The certificate and key are read again on every
    /// reload, from the files the new configuration names.
    static func tlsChanges(from old: ServerTLS?, to new: ServerTLS?) -> [String] {
        switch (old, new) {
        case (nil, nil): return []
        case (nil, _?), (_?, nil): return ["server.tls"]
        case (let old?, let new?):
            var keys: [String] = []
            if old.host != new.host || old.port != new.port { keys.append("server.tls.listen") }
            return keys
        }
    }

    /// Whether the plan changes any channel.
    public var changesChannels: Bool {
        !(added.isEmpty && removed.isEmpty && replaced.isEmpty && reconfigured.isEmpty)
    }
}
