// swift-tools-version:6.1
import PackageDescription

// The benchmarks live in their own package, as swift-nio's and swift-log's do, so that the
// EventBus library itself keeps zero dependencies.
//
//     swift package benchmark                      # every scenario, wall clock and allocations
//     ./check-allocations.sh                       # the allocation gate CI runs
//     ./instructions.sh                            # instructions per operation (callgrind)
//     swift run -c release EventBusLatency         # worst single operation at 1M subscriptions
//     swift run -c release EventBusMailbox         # off-thread deliveries beside the peers (issue 41)
//     ./chart.py                                   # publish-cost chart from a run
let package = Package(
    name: "EventBusBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "EventBus", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
        // AsyncChannel, a peer of the off-thread deliveries (Scenarios/OffThread.swift).
        .package(url: "https://github.com/apple/swift-async-algorithms", exact: "1.1.4"),
    ],
    targets: [
        // What the off-thread scenarios read from the allocator (mallinfo2, the interposer's count).
        .target(
            name: "HeapProbe",
            path: "Benchmarks/HeapProbe",
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]
        ),
        // The scenarios, one definition shared by the executables below.
        .target(
            name: "Scenarios",
            dependencies: [
                "HeapProbe",
                .product(name: "EventBus", package: "EventBus"),
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ],
            path: "Benchmarks/Scenarios"
        ),
        // package-benchmark: wall clock, throughput and allocations per operation.
        .executableTarget(
            name: "EventBusBenchmarks",
            dependencies: [
                "Scenarios",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/EventBusBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // One scenario under callgrind: instructions per operation (no malloc interposer).
        .executableTarget(
            name: "EventBusInstructions",
            dependencies: ["Scenarios"],
            path: "Benchmarks/Tools/EventBusInstructions"
        ),
        // The worst single operation at 1M subscriptions, and other threads' stalls (wall clock).
        .executableTarget(
            name: "EventBusLatency",
            dependencies: [.product(name: "EventBus", package: "EventBus")],
            path: "Benchmarks/Tools/EventBusLatency"
        ),
        // Off-thread deliveries (atQueue, isolated(to:), events(of:), onMainActor) beside
        // DispatchQueue, AsyncStream, AsyncChannel, a Task per event and a bare ring: a backlog's
        // cost and memory per event, an idle consumer's latency, the heap after a burst drains.
        .executableTarget(
            name: "EventBusMailbox",
            dependencies: ["Scenarios"],
            path: "Benchmarks/Tools/EventBusMailbox"
        ),
    ],
    swiftLanguageModes: [.v6]
)
