// swift-tools-version:6.1
import PackageDescription

// The transport-independent part of the remote bridges (envelope, wire names, duplicate window and
// loss accounting, serial publisher, integrity): a package of its own, so that the EventBus library
// keeps zero dependencies. It depends on the library by path, and on swift-crypto for HMAC-SHA256.
// A transport (EventBusPostgres) depends on it and writes only the transport.

// The same upcoming features as the root package, applied to every target.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "EventBusRemote",
    platforms: [
        .macOS(.v13),
        .iOS(.v16),
        .tvOS(.v16),
        .watchOS(.v9),
    ],
    products: [
        .library(name: "EventBusRemote", targets: ["EventBusRemote"]),
        // The checks every DurableStore must pass (InMemoryDurableStore here, PostgreSQL's store in
        // EventBusPostgres): linked by test targets, so it imports neither Testing nor XCTest.
        .library(name: "DurableStoreConformance", targets: ["DurableStoreConformance"]),
    ],
    dependencies: [
        .package(name: "EventBus", path: "../.."),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        // The bridge's counters (CoreMetrics only: no dependency of its own; postgres-nio already
        // depends on it).
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "EventBusRemote",
            dependencies: [
                .product(name: "EventBus", package: "EventBus"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .target(
            name: "DurableStoreConformance",
            dependencies: [
                "EventBusRemote",
                // The reader checks run bridges on buses.
                .product(name: "EventBus", package: "EventBus"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "EventBusRemoteTests",
            dependencies: [
                "EventBusRemote",
                "DurableStoreConformance",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                // To sign envelopes of a future version by hand (EventVersionTests).
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
