import Foundation
import HeadwaterConfiguration
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterSources
import Logging
import ServiceLifecycle
import Synchronization
import Testing

@Suite("Configuration reload")
struct ReloadTests {
    static func parse(_ text: String) throws -> HeadwaterConfiguration {
        try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/c")
    }

    static let base = """
        channels:
          looped:
            source: {type: loop, package: a.m3u8}
          pushed:
            source: {type: push, target_duration: 2}
          dropped:
            source: {type: directory, path: /d}
        """

    @Test("the plan: added, removed, replaced, reconfigured in place, unchanged, and server keys needing a restart")
    func plan() throws {
        let next = try Self.parse("""
            server:
              listen: 127.0.0.1:9999
            channels:
              looped:
                source: {type: loop, package: b.m3u8}
              pushed:
                source: {type: push, target_duration: 2}
                window: 60
              fresh:
                source: {type: pull, url: "http://up/master.m3u8"}
            """)
        let plan = try ReloadPlan.make(from: try Self.parse(Self.base), to: next, file: "h.yaml")
        #expect(plan.added.map(\.name) == ["fresh"])
        #expect(plan.removed == ["dropped"])
        #expect(plan.replaced.map(\.name) == ["looped"])
        #expect(plan.reconfigured.map(\.name) == ["pushed"])
        #expect(plan.needsRestart == ["server.listen"])
        let same = try ReloadPlan.make(from: try Self.parse(Self.base), to: try Self.parse(Self.base), file: "h.yaml")
        #expect(!same.changesChannels && same.unchanged.count == 3)
    }

    @Test("turning a live channel's encryption on, off or to another rotation, or moving the key secret, needs a restart; the channel keeps running as it was")
    func encryptionNeedsRestart() throws {
        let next = try Self.parse("""
            server:
              key_secret_env: OTHER_SECRET
            channels:
              looped:
                source: {type: loop, package: a.m3u8}
                encryption: {method: AES-128, rotate_every: 3}
              pushed:
                source: {type: push, target_duration: 2}
                encryption: {method: AES-128}
              dropped:
                source: {type: directory, path: /d}
            """)
        let plan = try ReloadPlan.make(from: try Self.parse(Self.base), to: next, file: "h.yaml")
        #expect(plan.replaced.isEmpty && plan.reconfigured.isEmpty && plan.added.isEmpty && plan.removed.isEmpty)
        #expect(plan.needsRestart == ["channels.looped.encryption", "channels.pushed.encryption", "server.key_secret_env"])
    }

    @Test("a target duration never changes while a channel lives: the reload is refused with the key path")
    func targetDurationChange() throws {
        let next = try Self.parse(Self.base.replacingOccurrences(of: "target_duration: 2", with: "target_duration: 4"))
        #expect {
            try ReloadPlan.make(from: try Self.parse(Self.base), to: next, file: "h.yaml")
        } throws: { error in
            let text = (error as? ConfigurationError)?.description ?? ""
            return text.hasPrefix("h.yaml: channels.pushed.source.target_duration: cannot change from 2 to 4")
        }
    }

    /// A channel source that publishes a snapshot while it runs, and counts its runs.
    final class FakeSource: Service, Sendable {
        let name: String
        let registry: ChannelRegistry
        let runs: Mutex<Int>

        init(name: String, registry: ChannelRegistry) {
            self.name = name
            self.registry = registry
            self.runs = Mutex(0)
        }

        func run() async throws {
            runs.withLock { $0 += 1 }
            registry.publish(
                ChannelSnapshot(
                    name: name, state: .live, multivariant: nil, mediaPlaylists: [:], segments: [:], targetDuration: 2))
            try await Task.sleep(for: .seconds(3600))
        }
    }

    @Test("a valid reload starts, stops and reconfigures channels; an invalid one changes nothing")
    func supervisor() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("hw-reload-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let registry = ChannelRegistry()
        let next = Mutex<String>(Self.base)
        let sources = Mutex<[String: FakeSource]>([:])
        @Sendable func load() throws(ConfigurationError) -> ChannelSupervisor.Loaded {
            var configuration = try HeadwaterConfiguration.parse(next.withLock { $0 }, file: "h.yaml", baseDirectory: "/c")
            configuration.server.stateDirectory = state
            return .init(configuration: configuration, packages: [:], slate: nil, file: "h.yaml")
        }
        let loaded = try load()
        let push = try PushIngest(
            configuration: loaded.configuration, registry: registry, clock: SystemWallClock(), logger: Logger(label: "t"),
            environment: ["HEADWATER_INGEST_TOKEN": "t"])
        let results = Mutex<[OriginMetrics.ConfigReloadResult]>([])
        let supervisor = ChannelSupervisor(
            loaded: loaded, loader: { () throws(ConfigurationError) in try load() }, push: push, registry: registry,
            logger: Logger(label: "t"),
            makeSource: { channel, _ in
                if case .push = channel.source { return nil }
                let source = FakeSource(name: channel.name, registry: registry)
                sources.withLock { $0[channel.name] = source }
                return source
            },
            onReload: { ok in results.withLock { $0.append(ok) } })
        let running = Task { try await supervisor.run() }
        defer { running.cancel() }
        try await Self.eventually { registry.channelNames == ["dropped", "looped", "pushed"] }
        let looped = try #require(sources.withLock { $0["looped"] })

        // Valid: `dropped` goes, `fresh` comes, `pushed` gets a longer window, `looped` is untouched.
        next.withLock {
            $0 = Self.base.replacingOccurrences(
                of: "  dropped:\n    source: {type: directory, path: /d}",
                with: "  fresh:\n    source: {type: directory, path: /f}") + "\n    window: 60"
        }
        #expect(await supervisor.reload())
        try await Self.eventually { registry.channelNames == ["fresh", "looped", "pushed"] }
        #expect(sources.withLock { $0["looped"] } === looped && looped.runs.withLock { $0 } == 1, "not restarted")
        #expect(await supervisor.channelNames == ["looped", "pushed", "fresh"])

        // Invalid: refused whole; everything keeps running.
        next.withLock { $0 = "channels:\n  looped:\n    source: {type: tape}\n" }
        #expect(await !supervisor.reload())
        #expect(registry.channelNames == ["fresh", "looped", "pushed"])
        let counts = await supervisor.reloads
        #expect(counts.succeeded == 1 && counts.failed == 1)
        #expect(results.withLock { $0 } == [.applied, .rejected])
    }

    static func eventually(_ condition: @Sendable () -> Bool) async throws {
        for _ in 0..<100 where !condition() { try await Task.sleep(for: .milliseconds(20)) }
        #expect(condition())
    }

    @Test("a channel that cannot start is logged and left out; the others run; a later reload starts it")
    func channelThatCannotStart() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("hw-reload-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let registry = ChannelRegistry()
        let broken = Mutex(true)
        @Sendable func load() throws(ConfigurationError) -> ChannelSupervisor.Loaded {
            var configuration = try HeadwaterConfiguration.parse(Self.base, file: "h.yaml", baseDirectory: "/c")
            configuration.server.stateDirectory = state
            return .init(configuration: configuration, packages: [:], slate: nil, file: "h.yaml")
        }
        struct CannotStart: Error {}
        let loaded = try load()
        let push = try PushIngest(
            configuration: loaded.configuration, registry: registry, clock: SystemWallClock(), logger: Logger(label: "t"),
            environment: [:])
        let supervisor = ChannelSupervisor(
            loaded: loaded, loader: { () throws(ConfigurationError) in try load() }, push: push, registry: registry,
            logger: Logger(label: "t"),
            makeSource: { channel, _ in
                if case .push = channel.source { return nil }
                if channel.name == "dropped", broken.withLock({ $0 }) { throw CannotStart() }
                return FakeSource(name: channel.name, registry: registry)
            })
        let running = Task { try await supervisor.run() }
        defer { running.cancel() }
        try await Self.eventually { registry.channelNames == ["looped", "pushed"] }
        broken.withLock { $0 = false }
        #expect(await supervisor.reload())
        try await Self.eventually { registry.channelNames == ["dropped", "looped", "pushed"] }
    }
}
