import Testing

@testable import EventBus

/// Issue 10 in the model-based battery: seeded random programs of chain operations (mount, unmount,
/// subscribe with a policy, intercept, dispose, post) run against `EventNode`s and against a direct
/// transcription of the chain semantics (DESIGN §10); the delivery logs and outcomes must be equal.
@Suite("Reliability: chain model-based random sequences")
struct ChainModelTests {
    struct Hop: Event { let value: Int }

    enum Op: CustomStringConvertible {
        case mount(Int, on: Int)
        case unmount(Int)
        /// `policy`: 0 plain, 1 high, 2 low, 3 monitor, 4 stops.
        case subscribe(Int, policy: Int)
        /// `drops`: drop, else forward value + 1.
        case intercept(Int, drops: Bool)
        case dispose(Int)
        case post(from: Int, value: Int)

        var description: String {
            switch self {
            case .mount(let node, let parent): "mount(\(node), on: \(parent))"
            case .unmount(let node): "unmount(\(node))"
            case .subscribe(let node, let policy): "subscribe(\(node), policy: \(policy))"
            case .intercept(let node, let drops): "intercept(\(node), drops: \(drops))"
            case .dispose(let n): "dispose(#\(n))"
            case .post(let node, let value): "post(from: \(node), value: \(value))"
            }
        }
    }

    static let nodeCount = 6

    static func generate(seed: UInt64, count: Int) -> [Op] {
        var random = SplitMix64(seed: seed)
        func pick(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
        return (0..<count).map { _ in
            switch pick(10) {
            case 0, 1: .mount(pick(nodeCount), on: pick(nodeCount))
            case 2: .unmount(pick(nodeCount))
            case 3, 4: .subscribe(pick(nodeCount), policy: pick(5))
            case 5: .intercept(pick(nodeCount), drops: pick(4) == 0)
            case 6: .dispose(pick(8))
            default: .post(from: pick(nodeCount), value: pick(100))
            }
        }
    }

    /// The reference: parents, and per node its interceptors and subscribers in registration order.
    struct Model {
        struct Entry {
            let id: Int
            let node: Int
            let policy: Int  // subscribers
            let drops: Bool?  // interceptors: non-nil
            var level: Int { [1, 0, 2, 4, 1][policy] }
            var isMonitor: Bool { policy == 3 }
        }
        var parent = [Int?](repeating: nil, count: ChainModelTests.nodeCount)
        var entries: [Entry] = []

        mutating func mount(_ node: Int, on target: Int) -> Bool {
            var cursor: Int? = target
            while let current = cursor {
                if current == node { return false }
                cursor = parent[current]
            }
            parent[node] = target
            return true
        }

        func post(from node: Int, value: Int, log: inout [String]) -> ChainOutcome {
            var route = [node]
            while let next = parent[route.last!] { route.append(next) }
            var value = value
            var ending: ChainOutcome?
            var delivered = 0
            for (depth, current) in route.enumerated() {
                if ending == nil {
                    for entry in entries where entry.node == current && entry.drops != nil {
                        log.append("i\(entry.id) \(value)")
                        if entry.drops! {
                            ending = .dropped(atDepth: depth, delivered: 0)
                            break
                        }
                        value += 1
                    }
                }
                let subscribers = entries.filter { $0.node == current && $0.drops == nil }
                    .enumerated().sorted { ($0.element.level, $0.offset) < ($1.element.level, $1.offset) }
                    .map(\.element)
                for entry in subscribers where ending == nil || entry.isMonitor {
                    log.append("s\(entry.id) \(value)")
                    delivered += 1
                    if entry.policy == 4 && ending == nil { ending = .stopped(atDepth: depth, delivered: 0) }
                }
            }
            switch ending {
            case .stopped(let depth, _): return .stopped(atDepth: depth, delivered: delivered)
            case .dropped(let depth, _): return .dropped(atDepth: depth, delivered: delivered)
            default: return delivered == 0 ? .unhandled : .delivered(count: delivered)
            }
        }
    }

    /// Runs `ops` on real nodes and on the model; the first difference, or `nil`.
    static func check(_ ops: [Op], posts: inout Int) -> String? {
        let nodes = (0..<nodeCount).map { EventNode(name: "n\($0)") }
        var model = Model()
        var tokens: [(id: Int, token: EventToken)] = []
        let log = Shared<[String]>([])
        var nextID = 0
        for (step, op) in ops.enumerated() {
            switch op {
            case .mount(let node, let parent):
                let real = nodes[node].mount(on: nodes[parent])
                let expected = model.mount(node, on: parent)
                if real != expected { return "step \(step) \(op): mount returned \(real), model \(expected)" }
            case .unmount(let node):
                nodes[node].unmount()
                model.parent[node] = nil
            case .subscribe(let node, let policy):
                let id = nextID
                nextID += 1
                let maker = nodes[node].on(Hop.self)
                let token: EventToken =
                    switch policy {
                    case 1: maker.priority(.high).next { log.append("s\(id) \($0.value)") }
                    case 2: maker.priority(.low).next { log.append("s\(id) \($0.value)") }
                    case 3: maker.monitor().next { log.append("s\(id) \($0.value)") }
                    case 4:
                        maker.handle { event in
                            log.append("s\(id) \(event.value)")
                            return .stop
                        }
                    default: maker.next { log.append("s\(id) \($0.value)") }
                    }
                tokens.append((id, token))
                model.entries.append(.init(id: id, node: node, policy: policy, drops: nil))
            case .intercept(let node, let drops):
                let id = nextID
                nextID += 1
                let token = nodes[node].intercept(Hop.self) { event in
                    log.append("i\(id) \(event.value)")
                    return drops ? .drop : .forward(Hop(value: event.value + 1))
                }
                tokens.append((id, token))
                model.entries.append(.init(id: id, node: node, policy: 0, drops: drops))
            case .dispose(let n):
                guard !tokens.isEmpty else { continue }
                let (id, token) = tokens.remove(at: n % tokens.count)
                token.dispose()
                model.entries.removeAll { $0.id == id }
            case .post(let node, let value):
                posts += 1
                log.withLock { $0 = [] }
                let outcome = nodes[node].post(Hop(value: value))
                var expected: [String] = []
                let expectedOutcome = model.post(from: node, value: value, log: &expected)
                if log.value != expected || outcome != expectedOutcome {
                    return
                        "step \(step) \(op): delivered \(log.value) → \(outcome), model \(expected) → \(expectedOutcome)"
                }
            }
        }
        return nil
    }

    @Test("Random chain programs deliver exactly what the reference model delivers, with the same outcomes")
    func randomProgramsMatchTheModel() {
        let seeds = environmentInt("EVENTBUS_MODEL_SEEDS") ?? 200
        let operations = environmentInt("EVENTBUS_MODEL_OPS") ?? 200
        var posts = 0
        var failures = 0
        for seed in 1...UInt64(seeds) {
            if let failure = Self.check(Self.generate(seed: seed, count: operations), posts: &posts) {
                failures += 1
                Issue.record("seed \(seed): \(failure)")
                if failures >= 3 { break }
            }
        }
        print("chain model: \(seeds) seeds × \(operations) ops, \(posts) posts matched the model")
    }
}
