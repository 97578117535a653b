// The operation interpreter shared by the model-based test (ModelBasedTests.swift) and the libFuzzer
// target (Fuzz/, which symlinks this file). It uses EventBus's public API only, so it compiles both
// under `@testable import` in the test target and as a plain dependency in the fuzz package.
//
// A program is a list of `ModelOp`s, made either from a seed (`ModelProgram.generate`) or from fuzzer
// bytes (`ModelProgram.decode`) through the same grammar (`ModelProgram.makeOp`). `ModelProgram.check`
// runs it twice: against a real `EventBus` and against `ReferenceModel`, a direct transcription of
// DESIGN.md §3–4 and §7 (by level: priorities, then monitors; keyed subscribers first, then
// unkeyed, each in subscription order; an A is delivered as `any ModelActivity` too, after A's
// handlers, and its monitors after every handler; a stop skips the handlers left; depth-first
// re-entrant dispatch; a subscriber made during a dispatch does not get that event; a subscriber
// disposed before its turn is skipped; an owner is retained for the duration of its subscriber's
// call and a subscriber whose owner is gone is never called). The delivery logs must be equal, and
// the subscription counts must agree after every operation.

import EventBus

/// The two event types a program dispatches (dispatching "the other type" from a handler), and
/// the supertype A is also delivered as (subscribed to, never dispatched as itself).
enum ModelEventKind: Int, Sendable, CaseIterable {
    case a, b
    /// `on(anyOf: (any ModelActivity).self)`: gets every A, after A's handlers.
    case activity
}

/// The `ofType` keys a program may use; "k2" is dispatched more often than subscribed to.
let modelKeys = ["k0", "k1", "k2"]

/// What an A is also delivered as.
protocol ModelActivity: Sendable {
    var serial: Int { get }
}

protocol ModelEvent: Event, ModelActivity {
    init(serial: Int, key: String?)
}

struct ModelEventA: ModelEvent, DeliveredAsSupertypes {
    let serial: Int
    let key: String?
    var eventType: String? { key }
    static let supertypes: [Supertype<Self>] = [.as((any ModelActivity).self) { $0 }]
}

struct ModelEventB: ModelEvent {
    let serial: Int
    let key: String?
    var eventType: String? { key }
}

/// What a subscriber does, from inside its handler, each time it is called (within a depth and a
/// per-operation budget, so that programs terminate).
enum ModelReaction: Equatable, Sendable, CustomStringConvertible {
    case dispatch(ModelEventKind, key: Int?)
    case subscribe(ModelEventKind, keys: [Int])
    /// Disposes the `n`th newest subscription (`n` modulo their number): an earlier or a later one
    /// than the reacting subscriber, or itself.
    case dispose(Int)
    case disposeSelf
    case releaseOwner(Int)

    var description: String {
        switch self {
        case .dispatch(let kind, let key): "dispatch(\(kind), \(modelKeyName(key)))"
        case .subscribe(let kind, let keys): "subscribe(\(kind), \(keys.map { modelKeys[$0] }))"
        case .dispose(let n): "dispose(#\(n))"
        case .disposeSelf: "disposeSelf"
        case .releaseOwner(let slot): "releaseOwner(\(slot))"
        }
    }
}

/// A subscription's delivery policy (DESIGN §7): its priority (0 high, 1 normal, 2 low), whether it
/// is a `monitor()`, and whether it is a `handle` handler that stops every dispatch it gets.
struct ModelPolicy: Equatable, Sendable, CustomStringConvertible {
    var priority = 1
    var isMonitor = false
    var stops = false

    static let plain = ModelPolicy()

    /// The dispatch order: handlers by priority, then monitors by priority.
    var level: Int { priority + (isMonitor ? 3 : 0) }
    var eventPriority: EventPriority { [.high, .normal, .low][priority] }

    var description: String {
        self == .plain ? "" : ", \(eventPriority)\(isMonitor ? " monitor" : "")\(stops ? " stops" : "")"
    }
}

/// One step of a program, run from the top level (not from a handler).
enum ModelOp: Equatable, Sendable, CustomStringConvertible {
    case subscribe(ModelEventKind, keys: [Int], reaction: ModelReaction?, policy: ModelPolicy = .plain)
    /// `freeWith(owner in slot)`; an empty slot means an owner that is already gone (inert token).
    case subscribeOwned(
        slot: Int, ModelEventKind, keys: [Int], passesOwner: Bool, reaction: ModelReaction?,
        policy: ModelPolicy = .plain)
    /// Disposes the `n`th newest subscription (`n` modulo their number).
    case dispose(Int)
    case disposeTwice(Int)
    case releaseOwner(Int)
    case renewOwner(Int)
    case dispatch(ModelEventKind, key: Int?)
    case purge

    var description: String {
        switch self {
        case .subscribe(let kind, let keys, let reaction, let policy):
            "subscribe(\(kind), \(keys.map { modelKeys[$0] })\(policy)\(reaction.map { ", on event: \($0)" } ?? ""))"
        case .subscribeOwned(let slot, let kind, let keys, let passesOwner, let reaction, let policy):
            "subscribeOwned(owner \(slot), \(kind), \(keys.map { modelKeys[$0] }), passesOwner: \(passesOwner)"
                + "\(policy)\(reaction.map { ", on event: \($0)" } ?? ""))"
        case .dispose(let n): "dispose(#\(n))"
        case .disposeTwice(let n): "disposeTwice(#\(n))"
        case .releaseOwner(let slot): "releaseOwner(\(slot))"
        case .renewOwner(let slot): "renewOwner(\(slot))"
        case .dispatch(let kind, let key): "dispatch(\(kind), \(modelKeyName(key)))"
        case .purge: "purge"
        }
    }
}

func modelKeyName(_ key: Int?) -> String { key.map { modelKeys[$0] } ?? "nil" }

/// Operations made by `makeOp` from fuzzer bytes, one byte per number drawn (0 once the bytes run
/// out), until the bytes or `limit` operations run out: how every program grammar decodes.
func decodeProgram<Op>(_ bytes: [UInt8], limit: Int, _ makeOp: ((Int) -> Int) -> Op) -> [Op] {
    var position = 0
    var ops: [Op] = []
    while position < bytes.count, ops.count < limit {
        ops.append(
            makeOp { bound in
                guard position < bytes.count else { return 0 }
                defer { position += 1 }
                return Int(bytes[position]) % bound
            })
    }
    return ops
}

/// One call of a handler: which subscription (by creation number), which event (by dispatch serial),
/// the owner passed to an owner-passing handler (-1 otherwise), and the top-level operation it
/// happened under.
struct ModelDelivery: Equatable, Sendable, CustomStringConvertible {
    var subscription: Int
    var serial: Int
    var owner: Int
    var op: Int

    var description: String {
        "#\(subscription) got event \(serial)\(owner >= 0 ? " with owner \(owner)" : "") (op \(op))"
    }
}

/// SplitMix64: a tiny, well-mixed, seedable generator (no dependency).
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`.
    mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

enum ModelProgram {
    static let ownerSlots = 4
    static let maxDepth = 3
    /// Reactions allowed per top-level operation.
    static let reactionBudget = 8
    /// Longest program `decode` makes from fuzzer input.
    static let maxDecodedOps = 400

    /// A random program of `count` operations, the same for the same seed.
    static func generate(seed: UInt64, count: Int) -> [ModelOp] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in makeOp { random.next(below: $0) } }
    }

    /// A program read from arbitrary bytes (fuzzer input), with the same grammar as `generate`.
    static func decode(_ bytes: [UInt8]) -> [ModelOp] {
        decodeProgram(bytes, limit: maxDecodedOps, makeOp)
    }

    /// The grammar: one operation from a source of numbers `draw(bound) in 0..<bound`.
    static func makeOp(_ draw: (Int) -> Int) -> ModelOp {
        func kind() -> ModelEventKind { draw(4) == 3 ? .b : .a }
        /// What a subscription is to: A, B, or A's supertype.
        func subscribedKind() -> ModelEventKind {
            switch draw(8) {
            case 0..<5: .a
            case 5: .b
            default: .activity
            }
        }
        func keys() -> [Int] {
            switch draw(5) {
            case 0, 1, 2: []
            case 3: [draw(3)]
            default: [draw(2), draw(3)]
            }
        }
        func dispatchKey() -> Int? {
            let pick = draw(4)
            return pick == 0 ? nil : pick - 1
        }
        func reaction() -> ModelReaction? {
            guard draw(10) < 4 else { return nil }
            switch draw(6) {
            case 0: return .dispatch(kind(), key: dispatchKey())
            case 1: return .subscribe(subscribedKind(), keys: keys())
            case 2, 3: return .dispose(draw(24))
            case 4: return .disposeSelf
            default: return .releaseOwner(draw(ownerSlots))
            }
        }
        func policy() -> ModelPolicy {
            switch draw(10) {
            case 0..<5: return .plain
            case 5: return ModelPolicy(priority: 0)
            case 6: return ModelPolicy(priority: 2)
            case 7: return ModelPolicy(priority: draw(3), isMonitor: true)
            default: return ModelPolicy(priority: draw(3), stops: true)
            }
        }
        let pick = draw(100)
        switch pick {
        case 0..<20: return .subscribe(subscribedKind(), keys: keys(), reaction: reaction(), policy: policy())
        case 20..<30:
            return .subscribeOwned(
                slot: draw(ownerSlots), subscribedKind(), keys: keys(), passesOwner: draw(2) == 0,
                reaction: reaction(),
                policy: policy())
        case 30..<44: return .dispose(draw(24))
        case 44..<48: return .disposeTwice(draw(24))
        case 48..<53: return .releaseOwner(draw(ownerSlots))
        case 53..<58: return .renewOwner(draw(ownerSlots))
        case 58..<97: return .dispatch(kind(), key: dispatchKey())
        default: return .purge
        }
    }

    /// Runs `ops` on a real bus and on the reference model; returns a description of the first
    /// disagreement (delivery log, subscription counts or token states), or `nil` if none.
    static func check(_ ops: [ModelOp]) -> String? {
        check(ops, deliveries: nil)
    }

    /// `check`, also reporting how many deliveries the run made.
    static func check(_ ops: [ModelOp], deliveries: UnsafeMutablePointer<Int>?) -> String? {
        var model = ReferenceModel(ops: ops)
        let expected = model.run()
        deliveries?.pointee += expected.log.count
        let actual = BusRun(ops: ops).run()
        let mismatch =
            expected.log.indices.first { $0 < actual.log.count && expected.log[$0] != actual.log[$0] }
            ?? (expected.log.count == actual.log.count ? nil : min(expected.log.count, actual.log.count))
        if let index = mismatch {
            let want = index < expected.log.count ? "\(expected.log[index])" : "nothing more"
            let got = index < actual.log.count ? "\(actual.log[index])" : "nothing more"
            let op = index < expected.log.count ? expected.log[index].op : actual.log[index].op
            return "delivery \(index): model expects \(want), bus did \(got) "
                + "(\(actual.log.count) deliveries, model \(expected.log.count))\n" + listing(ops, upTo: op)
        }
        for (op, (range, count)) in zip(expected.counts, actual.counts).enumerated() {
            for (name, allowed, got) in [
                ("subscriptionCount", range.total, count.total),
                ("subscriptionCount(of: A)", range.a, count.a),
                ("subscriptionCount(of: B)", range.b, count.b),
            ] where !allowed.contains(got) {
                return "after op \(op): \(name) is \(got), model allows \(allowed)\n" + listing(ops, upTo: op)
            }
        }
        if let problem = actual.problems.first {
            return problem + "\n" + listing(ops, upTo: ops.count - 1)
        }
        if expected.finalDisposed != actual.finalDisposed {
            let index =
                expected.finalDisposed.indices.first {
                    $0 < actual.finalDisposed.count && expected.finalDisposed[$0] != actual.finalDisposed[$0]
                } ?? 0
            return "at the end, token #\(index).isDisposed is \(actual.finalDisposed[index]), "
                + "model says \(expected.finalDisposed[index])\n" + listing(ops, upTo: ops.count - 1)
        }
        return nil
    }

    /// The first operations of a program, up to `last` (at most 40 lines), for failure messages.
    static func listing(_ ops: [ModelOp], upTo last: Int) -> String {
        let end = min(max(last, 0), ops.count - 1)
        let start = max(0, end - 39)
        return (start...max(start, end)).filter { $0 < ops.count }.map { "  op \($0): \(ops[$0])" }
            .joined(separator: "\n")
    }
}

/// What one run produced.
struct ModelOutcome {
    var log: [ModelDelivery] = []
    /// Per top-level operation: subscription counts (total, of A, of B); the model gives ranges.
    var counts: [(total: ClosedRange<Int>, a: ClosedRange<Int>, b: ClosedRange<Int>)] = []
    /// After a final purge: each token's `isDisposed`.
    var finalDisposed: [Bool] = []
    /// Checks the bus run makes on its own (a disposed token that does not say so, …).
    var problems: [String] = []
}

// MARK: - The real bus

/// An owner object for `freeWith`; `generation` names it in logs.
final class ModelOwner: Sendable {
    let generation: Int
    init(generation: Int) { self.generation = generation }
}

/// Runs a program on a fresh `EventBus`.
final class BusRun: @unchecked Sendable {
    // @unchecked Sendable: a program runs on one thread and all its handlers are synchronous, so this
    // state is only ever touched by the thread that called `run()`.
    private let ops: [ModelOp]
    private let bus = EventBus()
    private var tokens: [EventToken] = []
    private var reactions: [ModelReaction?] = []
    private var owners: [ModelOwner?]
    private var nextGeneration = ModelProgram.ownerSlots
    private var depth = 0
    private var budget = 0
    private var serial = 0
    private var currentOp = 0
    private var outcome = ModelOutcome()

    init(ops: [ModelOp]) {
        self.ops = ops
        owners = (0..<ModelProgram.ownerSlots).map { ModelOwner(generation: $0) }
    }

    func run() -> ModelOutcome {
        for (index, op) in ops.enumerated() {
            currentOp = index
            budget = ModelProgram.reactionBudget
            perform(op)
            let total = bus.subscriptionCount
            let a = bus.subscriptionCount(of: ModelEventA.self)
            let b = bus.subscriptionCount(of: ModelEventB.self)
            outcome.counts.append((total...total, a...a, b...b))
        }
        bus.purge()
        outcome.finalDisposed = tokens.map(\.isDisposed)
        for token in tokens { token.dispose() }
        if bus.subscriptionCount != 0 {
            outcome.problems.append("after disposing every token, subscriptionCount is \(bus.subscriptionCount)")
        }
        return outcome
    }

    private func perform(_ op: ModelOp) {
        switch op {
        case .subscribe(let kind, let keys, let reaction, let policy):
            subscribe(kind, keys: keys, slot: nil, passesOwner: false, reaction: reaction, policy: policy)
        case .subscribeOwned(let slot, let kind, let keys, let passesOwner, let reaction, let policy):
            subscribe(kind, keys: keys, slot: slot, passesOwner: passesOwner, reaction: reaction, policy: policy)
        case .dispose(let n), .disposeTwice(let n):
            guard !tokens.isEmpty else { return }
            let token = tokens[tokens.count - 1 - n % tokens.count]
            token.dispose()
            if case .disposeTwice = op { token.dispose() }
            if !token.isDisposed {
                outcome.problems.append(
                    "op \(currentOp): token #\(tokens.count - 1 - n % tokens.count) is not disposed after dispose()")
            }
        case .releaseOwner(let slot):
            owners[slot] = nil
        case .renewOwner(let slot):
            guard owners[slot] == nil else { return }
            owners[slot] = ModelOwner(generation: nextGeneration)
            nextGeneration += 1
        case .dispatch(let kind, let key):
            dispatch(kind, key: key)
        case .purge:
            bus.purge()
        }
    }

    private func dispatch(_ kind: ModelEventKind, key: Int?) {
        let key = key.map { modelKeys[$0] }
        let eventSerial = serial
        serial += 1
        depth += 1
        defer { depth -= 1 }
        switch kind {
        case .a: bus.dispatch(ModelEventA(serial: eventSerial, key: key))
        case .b: bus.dispatch(ModelEventB(serial: eventSerial, key: key))
        case .activity: preconditionFailure("the grammar dispatches A and B only")
        }
    }

    private func subscribe(
        _ kind: ModelEventKind, keys: [Int], slot: Int?, passesOwner: Bool, reaction: ModelReaction?,
        policy: ModelPolicy = .plain
    ) {
        let index = tokens.count
        reactions.append(reaction)
        let token =
            switch kind {
            case .a:
                register(
                    ModelEventA.self, index: index, keys: keys, slot: slot, passesOwner: passesOwner, policy: policy)
            case .b:
                register(
                    ModelEventB.self, index: index, keys: keys, slot: slot, passesOwner: passesOwner, policy: policy)
            case .activity:
                register(
                    bus.on(anyOf: (any ModelActivity).self), serial: { $0.serial }, index: index, keys: keys,
                    slot: slot, passesOwner: passesOwner, policy: policy)
            }
        tokens.append(token)
        if slot != nil, owners[slot!] == nil, !token.isDisposed {
            outcome.problems.append("op \(currentOp): freeWith a gone owner returned a live token #\(index)")
        }
    }

    private func register<E: ModelEvent>(
        _: E.Type, index: Int, keys: [Int], slot: Int?, passesOwner: Bool, policy: ModelPolicy
    ) -> EventToken {
        register(
            bus.on(E.self), serial: { $0.serial }, index: index, keys: keys, slot: slot, passesOwner: passesOwner,
            policy: policy)
    }

    /// Registers on `maker` (of an event type or a supertype), reading serials with `serial`.
    private func register<E: Sendable>(
        _ maker: SubscriberMaker<E, Never, EventDelivery.Synchronous>, serial: @escaping @Sendable (E) -> Int,
        index: Int, keys: [Int], slot: Int?, passesOwner: Bool, policy: ModelPolicy
    ) -> EventToken {
        var maker = maker.priority(policy.eventPriority)
        for key in keys { maker = maker.ofType(modelKeys[key]) }
        let owner = slot.map { owners[$0] }
        if policy.isMonitor {
            return register(maker.monitor(), serial: serial, index: index, owner: owner, passesOwner: passesOwner)
        }
        guard policy.stops else {
            return register(maker, serial: serial, index: index, owner: owner, passesOwner: passesOwner)
        }
        // `unowned`: the bus, and with it every handler, is deallocated with this run.
        guard let owner else {
            return maker.handle { [unowned self] event in
                self.deliver(index, serial(event), owner: -1)
                return .stop
            }
        }
        return maker.freeWith(owner).handle { [unowned self] owner, event in
            self.deliver(index, serial(event), owner: passesOwner ? owner.generation : -1)
            return .stop
        }
    }

    /// `owner`: `nil` for no `freeWith`, `.some(nil)` for an owner already gone.
    private func register<E: Sendable, D: NonisolatedDelivery>(
        _ maker: SubscriberMaker<E, Never, D>, serial: @escaping @Sendable (E) -> Int, index: Int,
        owner: ModelOwner??, passesOwner: Bool
    ) -> EventToken {
        // `unowned`: the bus, and with it every handler, is deallocated with this run.
        guard let owner else {
            return maker.next { [unowned self] event in self.deliver(index, serial(event), owner: -1) }
        }
        let owned = maker.freeWith(owner)
        if passesOwner {
            return owned.next { [unowned self] owner, event in
                self.deliver(index, serial(event), owner: owner.generation)
            }
        }
        return owned.next { [unowned self] _, event in self.deliver(index, serial(event), owner: -1) }
    }

    private func deliver(_ index: Int, _ eventSerial: Int, owner: Int) {
        outcome.log.append(ModelDelivery(subscription: index, serial: eventSerial, owner: owner, op: currentOp))
        guard let reaction = reactions[index], depth < ModelProgram.maxDepth, budget > 0 else { return }
        budget -= 1
        switch reaction {
        case .dispatch(let kind, let key): dispatch(kind, key: key)
        case .subscribe(let kind, let keys): subscribe(kind, keys: keys, slot: nil, passesOwner: false, reaction: nil)
        case .dispose(let n): tokens[tokens.count - 1 - n % tokens.count].dispose()
        case .disposeSelf: tokens[index].dispose()
        case .releaseOwner(let slot): owners[slot] = nil
        }
    }
}

// MARK: - The reference model

/// DESIGN.md §3–4 as plain data: no locks, no snapshots, no weak references.
struct ReferenceModel {
    private struct Subscription {
        var kind: ModelEventKind
        var keys: [Int]
        var owner: Int?
        var passesOwner: Bool
        var reaction: ModelReaction?
        var disposed: Bool
        var policy: ModelPolicy
    }

    private struct Owner {
        var heldBySlot = true
        /// Handler calls in progress for this owner's subscriptions (each retains the owner).
        var calls = 0
        var dead = false
    }

    private let ops: [ModelOp]
    private var subscriptions: [Subscription] = []
    private var owners: [Owner]
    private var slots: [Int?]
    private var depth = 0
    private var budget = 0
    private var serial = 0
    private var currentOp = 0
    private var outcome = ModelOutcome()

    init(ops: [ModelOp]) {
        self.ops = ops
        owners = Array(repeating: Owner(), count: ModelProgram.ownerSlots)
        slots = Array(0..<ModelProgram.ownerSlots)
    }

    mutating func run() -> ModelOutcome {
        for (index, op) in ops.enumerated() {
            currentOp = index
            budget = ModelProgram.reactionBudget
            perform(op)
            let purged: Bool = if case .purge = op { true } else { false }
            outcome.counts.append((countRange(nil, purged), countRange(.a, purged), countRange(.b, purged)))
        }
        outcome.finalDisposed = subscriptions.map { $0.disposed || ($0.owner.map { owners[$0].dead } ?? false) }
        return outcome
    }

    /// Live subscriptions, plus (unless just purged) those whose owner died and that the bus may
    /// not have reclaimed yet.
    private func countRange(_ kind: ModelEventKind?, _ purged: Bool) -> ClosedRange<Int> {
        var live = 0
        var dead = 0
        for subscription in subscriptions where !subscription.disposed && (kind == nil || subscription.kind == kind) {
            if let owner = subscription.owner, owners[owner].dead { dead += 1 } else { live += 1 }
        }
        return live...(purged ? live : live + dead)
    }

    private mutating func perform(_ op: ModelOp) {
        switch op {
        case .subscribe(let kind, let keys, let reaction, let policy):
            subscribe(kind, keys: keys, slot: nil, passesOwner: false, reaction: reaction, policy: policy)
        case .subscribeOwned(let slot, let kind, let keys, let passesOwner, let reaction, let policy):
            subscribe(kind, keys: keys, slot: slot, passesOwner: passesOwner, reaction: reaction, policy: policy)
        case .dispose(let n), .disposeTwice(let n):
            guard !subscriptions.isEmpty else { return }
            subscriptions[subscriptions.count - 1 - n % subscriptions.count].disposed = true
        case .releaseOwner(let slot):
            release(slot)
        case .renewOwner(let slot):
            guard slots[slot] == nil else { return }
            slots[slot] = owners.count
            owners.append(Owner())
        case .dispatch(let kind, let key):
            dispatch(kind, key: key)
        case .purge:
            break
        }
    }

    private mutating func release(_ slot: Int) {
        guard let owner = slots[slot] else { return }
        slots[slot] = nil
        owners[owner].heldBySlot = false
        settle(owner)
    }

    private mutating func settle(_ owner: Int) {
        if !owners[owner].heldBySlot, owners[owner].calls == 0 { owners[owner].dead = true }
    }

    private mutating func subscribe(
        _ kind: ModelEventKind, keys: [Int], slot: Int?, passesOwner: Bool, reaction: ModelReaction?,
        policy: ModelPolicy = .plain
    ) {
        let owner = slot.flatMap { slots[$0] }
        // `freeWith` an owner that is already gone: an inert, already disposed token.
        let inert = slot != nil && owner == nil
        subscriptions.append(
            Subscription(
                kind: kind, keys: keys, owner: owner, passesOwner: passesOwner, reaction: reaction, disposed: inert,
                policy: policy))
    }

    private mutating func dispatch(_ kind: ModelEventKind, key: Int?) {
        let eventSerial = serial
        serial += 1
        depth += 1
        defer { depth -= 1 }
        // Who is subscribed when the dispatch starts: for each level (handlers by priority, then
        // monitors by priority), the event's key list, then the unkeyed list. An A's supertype's
        // handlers come after A's, and its monitors after A's.
        let subscribed = subscriptions.indices
        func route(of kind: ModelEventKind, levels: Range<Int>) -> [Int] {
            let all = subscribed.filter { subscriptions[$0].kind == kind }
            return levels.flatMap { level in
                let atLevel = all.filter { subscriptions[$0].policy.level == level }
                let keyed = key.map { key in atLevel.filter { subscriptions[$0].keys.contains(key) } } ?? []
                return keyed + atLevel.filter { subscriptions[$0].keys.isEmpty }
            }
        }
        let route =
            kind == .a
            ? route(of: .a, levels: 0..<3) + route(of: .activity, levels: 0..<3) + route(of: .a, levels: 3..<6)
                + route(of: .activity, levels: 3..<6)
            : route(of: kind, levels: 0..<6)
        var stopped = false
        for index in route {
            let subscription = subscriptions[index]
            guard !subscription.disposed, !stopped || subscription.policy.isMonitor else { continue }
            if let owner = subscription.owner {
                guard !owners[owner].dead else { continue }
                owners[owner].calls += 1
            }
            outcome.log.append(
                ModelDelivery(
                    subscription: index, serial: eventSerial,
                    owner: subscription.passesOwner ? subscription.owner! : -1, op: currentOp))
            if subscription.policy.stops { stopped = true }
            if let reaction = subscription.reaction, depth < ModelProgram.maxDepth, budget > 0 {
                budget -= 1
                switch reaction {
                case .dispatch(let kind, let key): dispatch(kind, key: key)
                case .subscribe(let kind, let keys):
                    subscribe(kind, keys: keys, slot: nil, passesOwner: false, reaction: nil)
                case .dispose(let n): subscriptions[subscriptions.count - 1 - n % subscriptions.count].disposed = true
                case .disposeSelf: subscriptions[index].disposed = true
                case .releaseOwner(let slot): release(slot)
                }
            }
            if let owner = subscription.owner {
                owners[owner].calls -= 1
                settle(owner)
            }
        }
    }
}
