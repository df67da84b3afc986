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
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
    ],
    targets: [
        // Pure libraries: no I/O, no NIO, no Foundation.
        .target(name: "HeadwaterHLS", swiftSettings: swiftSettings),
        .target(name: "HeadwaterSCTE35", swiftSettings: swiftSettings),

        // Command-line front end: the only composition root.
        .executableTarget(
            name: "headwater",
            dependencies: [
                "HeadwaterHLS",
                "HeadwaterSCTE35",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // Benchmarks (not tests): `swift run -c release headwater-bench`.
        .target(name: "CHeadwaterAllocationCounter"),
        .executableTarget(
            name: "headwater-bench",
            dependencies: [
                "HeadwaterHLS",
                "CHeadwaterAllocationCounter",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),

        // Fuzz entry points (built only with -sanitize=fuzzer; see README "Fuzzing").
        .executableTarget(
            name: "headwater-fuzz",
            dependencies: ["HeadwaterHLS", "HeadwaterSCTE35"],
            swiftSettings: swiftSettings
        ),

        // Test support shared by the test targets: seeded randomness, generators, simulators.
        .target(
            name: "HeadwaterTesting",
            dependencies: ["HeadwaterHLS"],
            path: "Tests/HeadwaterTesting",
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "HeadwaterHLSTests",
            dependencies: ["HeadwaterHLS", "HeadwaterTesting"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeadwaterSCTE35Tests",
            dependencies: ["HeadwaterSCTE35"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeadwaterCLITests",
            dependencies: ["headwater"],
            swiftSettings: swiftSettings
        ),
    ]
)
