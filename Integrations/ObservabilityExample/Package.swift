// swift-tools-version:6.2
import PackageDescription

// The Observability article's swift-otel example, built: a package of its own (the only one that
// depends on swift-otel, whose manifest needs tools 6.2), never a dependency of anything.
// `Sources/ObservabilityExample/main.swift` is the article's "A server wired to swift-otel" block
// word for word (`scripts/check-doc-blocks.sh` checks that); the tests install the Logging, Metrics
// and Tracing integrations together by their READMEs' lines.

// The same upcoming features as the root package, applied to every target.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "ObservabilityExample",
    platforms: [
        // swift-otel's own floor.
        .macOS(.v13),
        .iOS(.v16),
        .tvOS(.v16),
        .watchOS(.v9),
    ],
    dependencies: [
        .package(name: "EventBus", path: "../.."),
        .package(name: "EventBusTracing", path: "../EventBusTracing"),
        .package(name: "EventBusMetrics", path: "../EventBusMetrics"),
        .package(name: "EventBusLogging", path: "../EventBusLogging"),
        // OTLP/HTTP only: the gRPC exporter's dependencies are not built.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    ],
    targets: [
        .executableTarget(
            name: "ObservabilityExample",
            dependencies: [
                .product(name: "EventBus", package: "EventBus"),
                .product(name: "EventBusTracing", package: "EventBusTracing"),
                .product(name: "EventBusMetrics", package: "EventBusMetrics"),
                .product(name: "EventBusLogging", package: "EventBusLogging"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
            // No upcoming features: built as an application's package would build it.
        ),
        // The three integrations installed together by their READMEs' lines, in two orders.
        .testTarget(
            name: "ObservabilityExampleTests",
            dependencies: [
                .product(name: "EventBus", package: "EventBus"),
                .product(name: "EventBusTracing", package: "EventBusTracing"),
                .product(name: "EventBusMetrics", package: "EventBusMetrics"),
                .product(name: "EventBusLogging", package: "EventBusLogging"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
