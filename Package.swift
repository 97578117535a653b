// swift-tools-version:6.0
import PackageDescription

// Upcoming features we opt into, as swift-log does: one list, applied to every target.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "EventBus",
    platforms: [
        .iOS(.v13),
        .macOS(.v10_15),
        .tvOS(.v13),
        .watchOS(.v6),
    ],
    products: [
        .library(name: "EventBus", targets: ["EventBus"]),
        .executable(name: "EventBusDemo", targets: ["EventBusDemo"]),
    ],
    targets: [
        // Two C functions over compiler atomics (the lock-free "is this subscription still live?"
        // check on the dispatch path) and a cached main-thread test. Internal; not a product.
        .target(name: "_EventBusShims"),
        .target(
            name: "EventBus",
            dependencies: ["_EventBusShims"],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "EventBusDemo",
            dependencies: ["EventBus"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "EventBusTests",
            dependencies: ["EventBus"],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
