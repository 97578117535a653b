// swift-tools-version:6.0
import PackageDescription

// An EventBus's counts as swift-metrics metrics: a package of its
// own, so that the EventBus library keeps zero dependencies. It depends on the library by path.
// swift-prometheus is a dependency of the tests only (they render the exposition text a Prometheus
// user scrapes); the library target depends on CoreMetrics alone. It needs macOS 13 / iOS 16, above
// this package's platforms, and SwiftPM refuses a target that depends on a product needing more than
// the target supports: so the tests take it on Linux (where CI runs them) and the Prometheus tests
// compile only where it can be imported.

// The same upcoming features as the root package, applied to every target.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "EventBusMetrics",
    platforms: [
        .iOS(.v13),
        .macOS(.v10_15),
        .tvOS(.v13),
        .watchOS(.v6),
    ],
    products: [
        .library(name: "EventBusMetrics", targets: ["EventBusMetrics"])
    ],
    dependencies: [
        .package(name: "EventBus", path: "../.."),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        .target(
            name: "EventBusMetrics",
            dependencies: [
                .product(name: "EventBus", package: "EventBus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "EventBusMetricsTests",
            dependencies: [
                "EventBusMetrics",
                .product(name: "EventBus", package: "EventBus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
