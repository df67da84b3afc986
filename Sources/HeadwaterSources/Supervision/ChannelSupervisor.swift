public import HeadwaterConfiguration
public import HeadwaterLiveWindow
public import HeadwaterRuntime
public import HeadwaterStitching
public import Logging
public import ServiceLifecycle

/// Runs every channel of the configuration and applies configuration reloads (SIGHUP) without a
/// restart: the new file is loaded and checked whole, a ``ReloadPlan`` says what changes, and only
/// then are channels stopped, reconfigured and started. An invalid file changes nothing: its
/// errors are logged and the running configuration keeps serving.
///
/// Push channels live in the shared ``PushIngest`` (they are reconfigured in place, keeping their
/// window and numbering); every other channel runs as a `Service` the ``SourceFactory`` makes.
public actor ChannelSupervisor: Service {
    /// A configuration and what was loaded with it (loop packages, the slate).
    public struct Loaded: Sendable {
        public var configuration: HeadwaterConfiguration
        public var packages: [String: LoopPackage]
        public var slate: SlateLibrary?
        /// The file it came from, for error messages.
        public var file: String
        /// The ad configuration (`server.ads`), checked against every loop channel's ladder; its
        /// version is assigned when it is installed in the ``AdRuleBook``.
        public var ads: AdRuleSet?
        /// The first key frame of each creative's segments, by served URL (stitched I-frame playlists).
        public var adKeyFrames: [String: KeyFrameLocation] = [:]

        public init(
            configuration: HeadwaterConfiguration, packages: [String: LoopPackage], slate: SlateLibrary?, file: String,
            ads: AdRuleSet? = nil
        ) {
            self.configuration = configuration
            self.packages = packages
            self.slate = slate
            self.file = file
            self.ads = ads
        }
    }

    /// Reads and checks the configuration file again (the same path as at start).
    public typealias Loader = @Sendable () throws(ConfigurationError) -> Loaded
    /// Makes the service that runs a loop, directory or pull channel (`nil` for push channels).
    /// It publishes into the registry; cancelling its task stops it.
    public typealias SourceFactory = @Sendable (HeadwaterConfiguration.Channel, Loaded) throws -> (any Service)?

    /// How reloads went, for metrics and the status page.
    public struct ReloadCounts: Sendable, Hashable {
        public var succeeded = 0
        public var failed = 0
    }

    public private(set) var loaded: Loaded
    public private(set) var reloads = ReloadCounts()
    private let loader: Loader
    private let makeSource: SourceFactory
    private let push: PushIngest
    private let registry: ChannelRegistry
    private let logger: Logger
    private let onReload: @Sendable (OriginMetrics.ConfigReloadResult) -> Void
    /// Applies a configuration's ad settings (rule set, break schedules) before its channels
    /// publish: at start, and on every reload that is applied.
    private let applyAds: @Sendable (Loaded) -> Void
    private var running: [String: Task<Void, Never>] = [:]
    /// The services ``running`` runs, by channel.
    private var services: [String: any Service] = [:]
    /// Sources made by ``prepare()``, started by ``run()``.
    private var pending: [String: any Service] = [:]
    private var prepared = false
    private let requests: AsyncStream<Void>
    private let requestContinuation: AsyncStream<Void>.Continuation

    public init(
        loaded: Loaded, loader: @escaping Loader, push: PushIngest, registry: ChannelRegistry, logger: Logger,
        makeSource: @escaping SourceFactory,
        onReload: @escaping @Sendable (OriginMetrics.ConfigReloadResult) -> Void = { _ in },
        applyAds: @escaping @Sendable (Loaded) -> Void = { _ in }
    ) {
        self.applyAds = applyAds
        self.loaded = loaded
        self.loader = loader
        self.push = push
        self.registry = registry
        self.logger = logger
        self.makeSource = makeSource
        self.onReload = onReload
        (requests, requestContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks for a reload (from a SIGHUP handler); reloads requested while one runs coalesce.
    public nonisolated func requestReload() { requestContinuation.yield() }

    /// Names of the channels running now.
    public var channelNames: [String] { loaded.configuration.channels.map(\.name) }

    /// Makes every channel's source (each publishes its first snapshot as it is made), so that
    /// calling this before the server listens means the first request finds every channel.
    /// ``run()`` starts them; it prepares them itself if this was not called.
    public func prepare() {
        guard !prepared else { return }
        prepared = true
        applyAds(loaded)
        for channel in loaded.configuration.channels {
            // One channel that cannot start (its store cannot be created, say) must not take the
            // others down: it is logged and stays absent (404); the next reload tries it again.
            do {
                if let service = try makeSource(channel, loaded) { pending[channel.name] = service }
            } catch {
                logger.error(
                    "channel cannot start: \(error)", metadata: ["hls.channel.id": "\(channel.name)"])
            }
        }
    }

    public func run() async throws {
        prepare()
        for (name, service) in pending.sorted(by: { $0.key < $1.key }) { start(name, service) }
        pending = [:]
        let requests = self.requests
        await cancelWhenGracefulShutdown {
            for await _ in requests { await self.reload() }
        }
        for task in running.values { task.cancel() }
        for task in running.values { await task.value }
        running = [:]
    }

    /// Loads the configuration again and applies it, or logs why not. Returns whether it applied.
    @discardableResult
    public func reload() async -> Bool {
        logger.notice("reloading configuration", metadata: ["config.file": "\(loaded.file)"])
        let next: Loaded
        let plan: ReloadPlan
        var services: [String: any Service] = [:]
        do throws(ConfigurationError) {
            next = try loader()
            plan = try ReloadPlan.make(from: loaded.configuration, to: next.configuration, file: next.file)
            // Unchanged channels that could not start before get another chance.
            let retried = next.configuration.channels.filter {
                plan.unchanged.contains($0.name) && running[$0.name] == nil
            }
            for channel in plan.added + plan.replaced + retried {
                do {
                    if let service = try makeSource(channel, next) { services[channel.name] = service }
                } catch {
                    throw ConfigurationError(problems: [
                        .init(
                            file: next.file, line: nil, keyPath: "channels.\(channel.name).source", message: "\(error)")
                    ])
                }
            }
        } catch {
            return rejected(error)
        }
        // Applied from here on: stop what goes, reconfigure push, start what comes.
        for name in plan.removed + plan.replaced.map(\.name) {
            running[name]?.cancel()
            await running[name]?.value
            running[name] = nil
        }
        let kept = Set(next.configuration.channels.map(\.name))
        for name in plan.removed where !kept.contains(name) {
            registry.remove(name)
            // A durable channel's store outlives its source's stops (restarts); not its removal.
            (services[name] as? any WindowedSource)?.windowed.removeStore()
        }
        for name in plan.removed + plan.replaced.map(\.name) { services[name] = nil }
        applyAds(next)
        do {
            try push.reconfigure(next.configuration, slate: next.slate)
        } catch {
            logger.error("reload: push channels kept their previous configuration: \(error.message)")
        }
        for (name, service) in services.sorted(by: { $0.key < $1.key }) { start(name, service) }
        let changed =
            plan.changesChannels || next.slate != loaded.slate || next.ads != loaded.ads
            || next.configuration.channels.map(\.ads) != loaded.configuration.channels.map(\.ads)
        loaded = next
        reloads.succeeded += 1
        onReload(changed ? .applied : .unchanged)
        for key in plan.needsRestart {
            logger.warning("reload: \(key) changed; it takes effect at the next start", metadata: ["config.key": "\(key)"])
        }
        logger.notice(
            "configuration reloaded",
            metadata: [
                "channels.added": "\(plan.added.map(\.name))", "channels.removed": "\(plan.removed)",
                "channels.replaced": "\(plan.replaced.map(\.name))",
                "channels.reconfigured": "\(plan.reconfigured.map(\.name))",
            ])
        return true
    }

    private func rejected(_ error: ConfigurationError) -> Bool {
        reloads.failed += 1
        onReload(.rejected)
        for problem in error.problems {
            logger.error("reload rejected: \(problem.description)")
        }
        logger.error("configuration reload rejected; the previous configuration keeps serving")
        return false
    }

    private func start(_ name: String, _ service: any Service) {
        services[name] = service
        let logger = self.logger
        running[name] = Task {
            do {
                try await service.run()
            } catch is CancellationError {
            } catch {
                logger.error("channel stopped: \(error)", metadata: ["hls.channel.id": "\(name)"])
            }
        }
    }
}

/// A source that feeds a ``WindowedChannel``: its store goes when its channel is removed.
protocol WindowedSource {
    var windowed: WindowedChannel { get }
}

extension DirectoryChannelSource: WindowedSource {}
extension PullChannelSource: WindowedSource {}
