import Dispatch
import Testing

@testable import EventBus  // test helpers (Shared, onThread) and the chains' step counters

/// Chains tens of thousands of nodes deep: describing them does not recurse and stays linear in
/// their size; building them is linear in their depth.
@Suite("Chains: deep chains", .offThePool)
struct DeepChainTests {
    /// More than a 512 KiB stack survived when `treeDescription` recursed per level (2,000 in
    /// debug builds, 5,000 in release ones).
    static let smallStackDepth = 5_000
    /// Small enough that a recursion per level overflows it; large enough under a sanitizer.
    static let stackSize = underStackHungrySanitizer ? 4 << 20 : 512 << 10

    /// How a chain is built: each new node mounted below the last (top-down), or each node mounted
    /// on a new root (bottom-up).
    enum Order: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case topDown, bottomUp
        var testDescription: String { rawValue }
    }

    /// A chain of `depth` nodes named `n0` (the root) … `n<depth-1>`, root first, and the steps the
    /// cycle checks of its mounts took in all.
    static func chain(depth: Int, built order: Order = .bottomUp) -> (nodes: [EventNode], steps: Int) {
        let nodes = (0..<depth).map { EventNode(name: "n\($0)") }
        let levels = order == .topDown ? Array(1..<depth) : (1..<depth).reversed()
        var steps = 0
        for level in levels {
            let (mounted, taken) = ChainTree.mount(nodes[level].link, on: nodes[level - 1].link)
            #expect(mounted)
            steps += taken
        }
        return (nodes, steps)
    }

    @Test("treeDescription of a 5,000-deep chain finishes on a 512 KiB stack, one line per node")
    func deepTreeDescriptionOnSmallStack() {
        let nodes = Self.chain(depth: Self.smallStackDepth).nodes
        let lines = Shared(0)
        let finished = onThread(stackSize: Self.stackSize) { [root = nodes[0]] in
            lines.withLock { $0 = root.treeDescription.split(separator: "\n").count }
        }
        #expect(finished)
        #expect(lines.value == Self.smallStackDepth)
        print(
            "DeepChain: treeDescription of a \(Self.smallStackDepth)-deep chain on a \(Self.stackSize >> 10) KiB stack")
    }

    @Test("treeDescription of a 40,000-deep chain is linear in the number of nodes (a byte bound)")
    func deepTreeDescriptionIsLinear() {
        let depth = 40_000
        let nodes = Self.chain(depth: depth).nodes
        let description = nodes[0].treeDescription
        let lines = description.split(separator: "\n")
        // Per line at most the capped indentation, a bracketed depth, the name and the newline.
        let perLine = 2 * EventNode.treeIndentationLimit + "[40000] ".count + "n40000".count + 1
        #expect(lines.count == depth)
        #expect(description.utf8.count <= depth * perLine)
        // The shallow format is unchanged; past the cap, the depth is written.
        #expect(lines[1] == "  n1")
        #expect(lines[depth - 1].hasSuffix("[\(depth - 1)] n\(depth - 1)"))
        print(
            "DeepChain: treeDescription of a \(depth)-deep chain: \(description.utf8.count) bytes (bound \(depth * perLine))"
        )
    }
}

extension DeepChainTests {
    struct Ping: Event {}

    @Test("Building a 100,000-deep chain takes O(depth) cycle-check steps in all", arguments: Order.allCases)
    func buildingIsLinear(order: Order) {
        let depth = 100_000
        let (nodes, steps) = Self.chain(depth: depth, built: order)
        // At most two steps a mount: one up from the parent, one down the node's subtree.
        #expect(steps <= 2 * depth)
        #expect(nodes[depth - 1].route.count == depth)
        let token = nodes[0].on(Ping.self).next { _ in }
        #expect(nodes[depth - 1].post(Ping()) == .delivered(count: 1))
        token.dispose()
        print("DeepChain: built \(depth) deep \(order) in \(steps) cycle-check steps, posted through it")
    }

    @Test("A post and a route never wait for the process-wide tree lock, which a mount's cycle check holds")
    func postTakesNoProcessWideLock() {
        let root = EventNode(name: "Root")
        let cell = EventNode(name: "Cell")
        cell.mount(on: root)
        let delivered = Shared(0)
        let token = root.on(Ping.self).next { _ in delivered.increment() }
        // As a mount on a huge chain on another thread would: hold the tree's lock meanwhile.
        let finished = ChainTree.lock.withLock { _ in
            onAnotherThread(timeout: .seconds(10)) {
                cell.post(Ping())
                _ = cell.route
            }
        }
        #expect(finished)
        #expect(waitUntil { delivered.value == 1 })
        token.dispose()
    }
}

/// `treeDescription` while the tree changes on another thread.
@Suite("Chains: a description while a child moves", .offThePool)
struct DescriptionWhileMovingTests {
    @Test("A child remounted on its parent during a description does not hide its siblings")
    func movedChildHidesNobody() {
        var fewest = Int.max
        for _ in 0..<3 {
            let root = EventNode(name: "root")
            // The first child's long name keeps the description busy between listing the second
            // child and writing it.
            let children = (0..<1_000).map {
                EventNode(name: $0 == 0 ? "c0" + String(repeating: "#", count: 20_000_000) : "c\($0)")
            }
            for child in children { _ = child.mount(on: root) }
            let started = DispatchSemaphore(value: 0)
            let moved = DispatchSemaphore(value: 0)
            Thread.detach {
                started.wait()
                usleepMilliseconds(2)
                _ = children[1].mount(on: root)  // still under root, now last
                moved.signal()
            }
            started.signal()
            let text = root.treeDescription
            #expect(moved.wait(timeout: .now() + defaultTimeout) == .success)
            let lines = text.split(separator: "\n").count
            fewest = min(fewest, lines)
            withExtendedLifetime(children) {}
        }
        print("description while moving: at least \(fewest) of 1001 lines in 3 runs")
        #expect(fewest >= 1_001, "nodes that never moved were left out")
    }
}
