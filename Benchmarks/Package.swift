// swift-tools-version:6.1
import PackageDescription

// The benchmarks live in their own package, as swift-nio's and swift-log's do, so that the
// EventBus library itself keeps zero dependencies.
//
//     swift package benchmark                      # every scenario, wall clock and allocations
//     ./check-allocations.sh                       # the allocation gate CI runs
//     ./instructions.sh                            # instructions per operation (callgrind)
//     swift run -c release EventBusLatency         # worst single operation at 1M subscriptions
//     ./chart.py                                   # publish-cost chart from a run
let package = Package(
    name: "EventBusBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "EventBus", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
    ],
    targets: [
        // The scenarios, one definition shared by both executables below.
        .target(
            name: "Scenarios",
            dependencies: [
                .product(name: "EventBus", package: "EventBus"),
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
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
    ],
    swiftLanguageModes: [.v6]
)
