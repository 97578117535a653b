import Dispatch
import Testing

@testable import EventBus  // test helpers (Shared, onThread) and the chains' step counters

/// Chains tens of thousands of nodes deep: describing them does not recurse and stays linear in
/// their size; building them is linear in their depth.
@Suite("Chains: deep chains")
struct DeepChainTests {
    /// More than a 512 KiB stack survived when `treeDescription` recursed per level (2,000 in
    /// debug builds, 5,000 in release ones).
    static let smallStackDepth = 5_000
    /// Small enough that a recursion per level overflows it; large enough under a sanitizer.
    static let stackSize = underStackHungrySanitizer ? 4 << 20 : 512 << 10

    /// A chain of `depth` nodes named `n0` (the root) … `n<depth-1>`, root first, built bottom-up
    /// (each new node becomes the parent of the previous root).
    static func chainBuiltBottomUp(depth: Int) -> [EventNode] {
        var nodes = [EventNode(name: "n\(depth - 1)")]
        nodes.reserveCapacity(depth)
        for level in (0..<(depth - 1)).reversed() {
            let parent = EventNode(name: "n\(level)")
            #expect(nodes[nodes.count - 1].mount(on: parent))
            nodes.append(parent)
        }
        return nodes.reversed()
    }

    @Test("treeDescription of a 5,000-deep chain finishes on a 512 KiB stack, one line per node")
    func deepTreeDescriptionOnSmallStack() {
        let nodes = Self.chainBuiltBottomUp(depth: Self.smallStackDepth)
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
        let nodes = Self.chainBuiltBottomUp(depth: depth)
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
