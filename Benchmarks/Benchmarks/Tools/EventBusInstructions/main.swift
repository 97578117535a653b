// Runs one scenario for a number of operations, for `valgrind --tool=callgrind` (see
// `../../../instructions.sh`): only `measured(_:_:)` is collected (`--toggle-collect`), so the count
// divided by the operations is the instructions per operation, independent of machine load.
//
//     EventBusInstructions "<scenario name>" <operations>
//     EventBusInstructions --list
//     EventBusInstructions --stack-per-level       # bytes of stack per nested dispatch (no callgrind)

import Dispatch
import Foundation
import Scenarios

/// The region callgrind collects. Not inlined, so its symbol exists to toggle on.
@inline(never)
func measured(_ workload: Workload, _ operations: Int) {
    workload.run(operations)
}

/// Builds the scenario (uncollected), warms it up, then runs the measured operations.
func main(_ arguments: [String]) {
    if arguments.first == "--list" {
        for scenario in allScenarios { print(scenario.name) }
        return
    }
    if arguments.first == "--stack-per-level" {
        print("plain \(stackPerNestedLevel(ownerBound: false)) owner-bound \(stackPerNestedLevel(ownerBound: true))")
        return
    }
    guard arguments.count == 2, let operations = Int(arguments[1]), operations > 0,
        let scenario = allScenarios.first(where: { $0.name == arguments[0] })
    else {
        print("usage: EventBusInstructions \"<scenario name>\" <operations> | --list | --stack-per-level")
        exit(64)
    }
    let workload = scenario.makeWorkload()
    workload.run(min(operations, 1_000))  // steady state: snapshots built, caches and pools warm
    workload.settle()
    measured(workload, operations)
    workload.settle()
    workload.tearDown()
}

// Off the main thread, so that the main thread can drain the main queue (main-actor scenarios).
// The main thread runs the run loop rather than `dispatchMain()`, whose exit of the main thread
// valgrind 3.19 does not survive.
Thread.detachNewThread {
    main(Array(CommandLine.arguments.dropFirst()))
    exit(0)
}
RunLoop.main.run()
