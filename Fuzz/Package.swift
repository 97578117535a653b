// swift-tools-version:6.0
import PackageDescription

// The libFuzzer target for EventBus: random operation programs (subscribe, keyed and owner-bound
// subscribe, dispose, release owner, dispatch, and the same from inside handlers) checked against the
// reference model of Tests/EventBusTests/Reliability/ModelProgram.swift, which Sources/EventBusFuzz
// symlinks, and chain programs (mount, unmount, intercept, post on event nodes) against
// ChainModelProgram.swift, symlinked too. Build and run with ./run.sh; it needs `--sanitize=fuzzer`
// (libFuzzer provides `main`).
let package = Package(
    name: "EventBusFuzz",
    dependencies: [
        .package(name: "EventBus", path: "../")
    ],
    targets: [
        .executableTarget(
            name: "EventBusFuzz",
            dependencies: [.product(name: "EventBus", package: "EventBus")],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
                .enableUpcomingFeature("InternalImportsByDefault"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
