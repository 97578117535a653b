// swift-tools-version:6.2
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
        // JSON events (`JSONEvent`, `JSONValue`): for modules that agree on ids and JSON rather
        // than on event types. Apart, since nothing in the bus needs them.
        .library(name: "EventBusJSON", targets: ["EventBusJSON"]),
        // The NotificationCenter bridge, apart so that the core links no Foundation (as swift-nio
        // keeps NIOFoundationCompat apart).
        .library(name: "EventBusFoundation", targets: ["EventBusFoundation"]),
        // A test kit for apps' own tests: records, expectations, settle, leak checks. Imports
        // neither XCTest nor Swift Testing (failures are thrown errors).
        .library(name: "EventBusTesting", targets: ["EventBusTesting"]),
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
        .target(
            name: "EventBusJSON",
            dependencies: ["EventBus"],
            swiftSettings: upcomingFeatures
        ),
        .target(
            name: "EventBusFoundation",
            dependencies: ["EventBus"],
            swiftSettings: upcomingFeatures
        ),
        .target(
            name: "EventBusTesting",
            dependencies: ["EventBus"],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "EventBusDemo",
            dependencies: ["EventBus", "EventBusFoundation"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "EventBusTests",
            dependencies: ["EventBus", "EventBusFoundation", "EventBusJSON"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "EventBusTestingTests",
            dependencies: ["EventBus", "EventBusFoundation", "EventBusTesting"],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
