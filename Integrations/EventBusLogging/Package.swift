// swift-tools-version:6.0
import PackageDescription

// Tracer records as swift-log calls: a package of its own, so that the EventBus library keeps zero
// dependencies. It depends on the library by path, and on apple/swift-log.

// The same upcoming features as the root package, applied to every target.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "EventBusLogging",
    platforms: [
        .iOS(.v13),
        .macOS(.v10_15),
        .tvOS(.v13),
        .watchOS(.v6),
    ],
    products: [
        .library(name: "EventBusLogging", targets: ["EventBusLogging"])
    ],
    dependencies: [
        .package(name: "EventBus", path: "../.."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "EventBusLogging",
            dependencies: [
                .product(name: "EventBus", package: "EventBus"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "EventBusLoggingTests",
            dependencies: [
                "EventBusLogging",
                .product(name: "EventBus", package: "EventBus"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
