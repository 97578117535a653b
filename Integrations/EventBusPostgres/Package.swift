// swift-tools-version:6.1
import PackageDescription

// The PostgreSQL LISTEN/NOTIFY bridge: a package of its own, so that the EventBus library keeps
// zero dependencies. It is a transport of EventBusRemote (envelopes, integrity, duplicates, loss
// accounting), and depends on it and on the library by path, and on postgres-nio.

// The same upcoming features as the root package, applied to every target.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "EventBusPostgres",
    platforms: [
        .macOS(.v13),
        .iOS(.v16),
        .tvOS(.v16),
        .watchOS(.v9),
    ],
    products: [
        .library(name: "EventBusPostgres", targets: ["EventBusPostgres"]),
        .executable(name: "ClusterDemo", targets: ["ClusterDemo"]),
        .executable(name: "EventBusPostgresBenchmark", targets: ["EventBusPostgresBenchmark"]),
    ],
    dependencies: [
        .package(name: "EventBus", path: "../.."),
        .package(name: "EventBusRemote", path: "../EventBusRemote"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
    ],
    targets: [
        .target(
            name: "EventBusPostgres",
            dependencies: [
                .product(name: "EventBus", package: "EventBus"),
                .product(name: "EventBusRemote", package: "EventBusRemote"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // What the demo, the peer process, the benchmark and the tests share: a database URL read
        // from the environment, a running node (client + bridge), a recorder of events. Not a product.
        .target(
            name: "ClusterSupport",
            dependencies: [
                "EventBusPostgres",
                .product(name: "EventBus", package: "EventBus"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // Two bridges on one database, in one run: `swift run ClusterDemo` (README).
        .executableTarget(
            name: "ClusterDemo",
            dependencies: [
                "ClusterSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // The README's quick start, built (with warnings as errors) and never run: `main.swift` is
        // quoted verbatim in the README (`scripts/with-postgres.sh` checks it).
        .executableTarget(
            name: "QuickStart",
            dependencies: [
                "EventBusPostgres",
                .product(name: "EventBus", package: "EventBus"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
            // No upcoming features: built as an application's package would build it.
        ),
        // The second process of the cross-process test: publishes or receives on request.
        .executableTarget(
            name: "ClusterPeer",
            dependencies: [
                "ClusterSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // Events per second and publish-to-remote-handler latency over loopback.
        .executableTarget(
            name: "EventBusPostgresBenchmark",
            dependencies: ["ClusterSupport"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "EventBusPostgresTests",
            dependencies: [
                "EventBusPostgres",
                "ClusterSupport",
                // The checks every durable store passes (PostgresDurableStore's, in StoreConformanceTests).
                .product(name: "DurableStoreConformance", package: "EventBusRemote"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
