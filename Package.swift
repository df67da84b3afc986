// swift-tools-version: 6.1
import PackageDescription

/// Style is enforced by the compiler where it can be (see ../shared/STYLE.md §8.7).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "headwater",
    platforms: [.macOS(.v15)],  // Linux is the target; macOS only for development.
    products: [
        .executable(name: "headwater", targets: ["headwater"]),
        .executable(name: "headwater-bench", targets: ["headwater-bench"]),
        .library(name: "HeadwaterHLS", targets: ["HeadwaterHLS"]),
        .library(name: "HeadwaterSCTE35", targets: ["HeadwaterSCTE35"]),
        .library(name: "HeadwaterStitching", targets: ["HeadwaterStitching"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
    ],
    targets: [
        // Pure libraries: no I/O, no NIO, no Foundation (Tests/tools/check-module-graph.py checks it).
        /// HLS playlists as values: the model, a strict and a tolerant parser, the serializer, the
        /// validator (rules named after HLS-RULES.md) and the live-update checker.
        .target(name: "HeadwaterHLS", swiftSettings: swiftSettings),
        /// SCTE-35 `splice_info_section`s: decode and encode, CRC-32/MPEG-2, hex and base64 forms.
        .target(name: "HeadwaterSCTE35", swiftSettings: swiftSettings),
        /// Per-session ad stitching: break log, pod choice, the stitched playlist. Pure: no I/O, no clock.
        .target(name: "HeadwaterStitching", dependencies: ["HeadwaterHLS", "HeadwaterSCTE35"], swiftSettings: swiftSettings),
        /// Probes media segments (MPEG-TS, ADTS): codecs, resolution, frame rate, timing, bit rate.
        .target(name: "HeadwaterMedia", swiftSettings: swiftSettings),

        // zlib, for compressing each playlist version once (system library, zlib1g-dev).
        .systemLibrary(name: "CHeadwaterZlib", providers: [.apt(["zlib1g-dev"])]),

        /// A channel's live window as a pure state machine: what a source delivered becomes a
        /// sliding-window playlist with stable numbering, retention (C7), stall fill and the status
        /// page's view, I-frame playlists; plus the value types every channel shares (segment files,
        /// status, content).
        /// Values in, values out: no I/O, no clock, no NIO.
        .target(name: "HeadwaterLiveWindow", dependencies: ["HeadwaterHLS", "HeadwaterMedia"], swiftSettings: swiftSettings),

        /// `headwater.yaml` and the ad configuration: YAML reading, validation and defaults, every
        /// problem as `file:line: key.path: message`, and what a reload changes.
        .target(
            name: "HeadwaterConfiguration",
            dependencies: [
                "HeadwaterHLS", "HeadwaterStitching", "HeadwaterLiveWindow", "HeadwaterMedia",
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),

        /// What the origin serves from, independent of where channels come from and of HTTP: the
        /// channel registry and its snapshots, playlist rendering and gzip, viewer sessions, ad
        /// insertion per request, metrics, content keys and key tokens, and the process's systemd and
        /// version facts.
        .target(
            name: "HeadwaterRuntime",
            dependencies: [
                "HeadwaterHLS",
                "HeadwaterStitching",
                "HeadwaterLiveWindow",
                "CHeadwaterZlib",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),

        /// Where channels come from, side by side: the looping demo, push ingest, a watched
        /// directory and pull from an upstream origin; the windowed channel the last three feed; the
        /// encryption of every listed segment; and the supervisor that starts, reloads and stops them.
        .target(
            name: "HeadwaterSources",
            dependencies: [
                "HeadwaterHLS",
                "HeadwaterMedia",
                "HeadwaterStitching",
                "HeadwaterLiveWindow",
                "HeadwaterConfiguration",
                "HeadwaterRuntime",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        /// Server-side ad tracking: which beacons a stitched playlist makes due, and their dispatch.
        .target(
            name: "HeadwaterTracking",
            dependencies: [
                "HeadwaterHLS",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        /// The origin on SwiftNIO: HTTP/1.1, HTTP/2 (h2 and h2c) and TLS listeners, one request value and
        /// one responder for all of them; routing, ranges, conditional requests, gzip, caching.
        .target(
            name: "HeadwaterHTTP",
            dependencies: [
                "HeadwaterHLS",
                "HeadwaterStitching",
                "HeadwaterLiveWindow",
                "HeadwaterConfiguration",
                "HeadwaterRuntime",
                "HeadwaterSources",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // Command-line front end: the only composition root.
        .executableTarget(
            name: "headwater",
            dependencies: [
                "HeadwaterHLS",
                "HeadwaterSCTE35",
                "HeadwaterLiveWindow",
                "HeadwaterConfiguration",
                "HeadwaterRuntime",
                "HeadwaterSources",
                "HeadwaterHTTP",
                "HeadwaterStitching",
                "HeadwaterTracking",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // Benchmarks (not tests): `swift run -c release headwater-bench`.
        .target(name: "CHeadwaterAllocationCounter"),
        .executableTarget(
            name: "headwater-bench",
            dependencies: [
                "HeadwaterHLS",
                "HeadwaterStitching",
                "HeadwaterRuntime",
                "HeadwaterTracking",
                "CHeadwaterAllocationCounter",
                "CHeadwaterZlib",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),

        // Fuzz entry points (built only with -sanitize=fuzzer; see Sources/headwater-fuzz/README.md).
        .executableTarget(
            name: "headwater-fuzz",
            dependencies: [
                "HeadwaterHLS",
                "HeadwaterSCTE35",
                "HeadwaterConfiguration",
                "HeadwaterLiveWindow",
                "HeadwaterRuntime",
                "HeadwaterHTTP",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),

        // Test support shared by the test targets: seeded randomness, generators, simulators.
        .target(
            name: "HeadwaterTesting",
            dependencies: ["HeadwaterHLS", .product(name: "Logging", package: "swift-log")],
            path: "Tests/HeadwaterTesting",
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "HeadwaterHLSTests",
            dependencies: ["HeadwaterHLS", "HeadwaterTesting"],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeadwaterSCTE35Tests",
            dependencies: ["HeadwaterSCTE35", "HeadwaterTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeadwaterStitchingTests",
            dependencies: ["HeadwaterStitching", "HeadwaterHLS", "HeadwaterSCTE35", "HeadwaterTesting"],
            exclude: ["Goldens"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeadwaterMediaTests",
            dependencies: ["HeadwaterMedia", "HeadwaterTesting"],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeadwaterLiveWindowTests",
            dependencies: ["HeadwaterLiveWindow", "HeadwaterHLS", "HeadwaterMedia", "HeadwaterTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeadwaterConfigurationTests",
            dependencies: ["HeadwaterConfiguration", "HeadwaterLiveWindow", "HeadwaterHLS", "HeadwaterTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeadwaterRuntimeTests",
            dependencies: [
                "HeadwaterRuntime", "HeadwaterLiveWindow", "HeadwaterHLS", "HeadwaterStitching", "HeadwaterTesting",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeadwaterSourcesTests",
            dependencies: [
                "HeadwaterSources", "HeadwaterRuntime", "HeadwaterConfiguration", "HeadwaterLiveWindow",
                "HeadwaterStitching", "HeadwaterSCTE35", "HeadwaterHLS", "HeadwaterTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeadwaterHTTPTests",
            dependencies: [
                "HeadwaterHTTP",
                "HeadwaterLiveWindow",
                "HeadwaterConfiguration",
                "HeadwaterRuntime",
                "HeadwaterSources",
                "HeadwaterHLS",
                "HeadwaterStitching",
                "HeadwaterTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeadwaterTrackingTests",
            dependencies: [
                "HeadwaterTracking",
                "HeadwaterHLS",
                "HeadwaterTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeadwaterEndToEndTests",
            dependencies: [
                "HeadwaterHTTP",
                "HeadwaterLiveWindow",
                "HeadwaterRuntime",
                "HeadwaterSources",
                "HeadwaterHLS",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeadwaterCLITests",
            dependencies: ["headwater", "HeadwaterHLS", "HeadwaterRuntime", "HeadwaterTesting"],
            swiftSettings: swiftSettings
        ),
    ]
)
