// swift-tools-version:6.0
import PackageDescription

// Trace context across every hop of an EventBus, on swift-distributed-tracing: a package of its
// own, so that the EventBus library keeps zero dependencies. It depends on the library by path.

// The same upcoming features as the root package, applied to every target.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "EventBusTracing",
    platforms: [
        .iOS(.v13),
        .macOS(.v10_15),
        .tvOS(.v13),
        .watchOS(.v6),
    ],
    products: [
        .library(name: "EventBusTracing", targets: ["EventBusTracing"])
    ],
    dependencies: [
        .package(name: "EventBus", path: "../.."),
        // For the tests only: a trace across two bridges over the in-memory transport.
        .package(name: "EventBusRemote", path: "../EventBusRemote"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    ],
    targets: [
        .target(
            name: "EventBusTracing",
            dependencies: [
                .product(name: "EventBus", package: "EventBus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "EventBusTracingTests",
            dependencies: [
                "EventBusTracing",
                .product(name: "EventBus", package: "EventBus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "EventBusRemote", package: "EventBusRemote"),
            ],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
