import Dispatch
import Testing

@testable import EventBus

/// Mount, unmount, post, subscribe and dispose on one tree from four threads
/// at once (run under TSan by the CI's reliability stage). Every post's route must stay a chain
/// (no node twice, bounded by the tree's size) and every delivery must reach a node of that route.
@Suite("Reliability: chains under concurrent mount/unmount/post/dispose", .tags(.stress), .offThePool)
struct ChainStressTests {
    struct Hop: Event { var from = 0 }

    @Test("Four threads remount, post, intercept and dispose on one tree: no race, no cycle, no lost node")
    func stress() {
        let nodes = (0..<12).map { EventNode(name: "n\($0)") }
        for index in 1..<nodes.count { nodes[index].mount(on: nodes[(index - 1) / 2]) }
        let deliveries = Shared(0)
        let posts = Shared(0)
        let mounts = Shared((accepted: 0, refused: 0))
        let badRoutes = Shared(0)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(stressSeconds * 1e9)
        let finished = concurrently(4, timeout: .seconds(Int(stressSeconds) + 60)) { thread in
            var random = SystemRandomNumberGenerator()
            var tokens: [EventToken] = []
            while DispatchTime.now().uptimeNanoseconds < deadline {
                let node = nodes[Int.random(in: 0..<nodes.count, using: &random)]
                switch (thread + Int.random(in: 0..<4, using: &random)) % 4 {
                case 0:
                    let parent = nodes[Int.random(in: 0..<nodes.count, using: &random)]
                    let accepted = node.mount(on: parent)
                    mounts.withLock { counts in
                        if accepted { counts.accepted += 1 } else { counts.refused += 1 }
                    }
                case 1:
                    if Bool.random(using: &random) { node.unmount() }
                    let route = node.route
                    if route.count > nodes.count || Set(route).count != route.count { badRoutes.increment() }
                case 2:
                    if tokens.count < 8 {
                        tokens.append(node.on(Hop.self).next { _ in deliveries.increment() })
                        tokens.append(node.intercept(Hop.self) { .forward($0) })
                    } else {
                        tokens.removeFirst().dispose()
                    }
                default:
                    node.post(Hop(from: thread))
                    posts.increment()
                }
            }
            for token in tokens { token.dispose() }
        }
        #expect(finished)
        #expect(badRoutes.value == 0)
        #expect(nodes.allSatisfy { $0.subscriptionCount == 0 })
        // Still a forest: every route ends, with no node twice.
        for node in nodes { #expect(Set(node.route).count == node.route.count) }
        print(
            "chain stress: \(posts.value) posts, \(deliveries.value) deliveries, \(mounts.value.accepted) mounts (\(mounts.value.refused) refused as cycles) in \(stressSeconds) s on 4 threads"
        )
    }
}
