import Testing

@testable import EventBus

/// The registry, the state behind a bus's lock, driven directly: no lock, no thread, no delivery.
/// Random sequences of links, ends and operations' ticks are checked against a reference model (a
/// dictionary of live subscriptions) after every step: the counts, the slot table behind tokens,
/// the ring of owned subscriptions the sweep walks, and the removal of emptied buckets.
@Suite("Registry: random operations on the state behind the lock match a reference model", .offThePool)
struct RegistryModelTests {
    struct Alpha: Event {}
    struct Beta: Event {}
    struct Gamma: Event {}
    final class Owner: Sendable {}

    /// What the model knows of a live subscription.
    struct Live {
        let type: ObjectIdentifier
        let owner: Owner?
    }

    /// The registry under test, with what its operations leave to do after unlocking performed
    /// after each, as the bus's core does.
    struct Harness {
        var registry = Registry(clock: .system)
        /// Supplies the bus the registry's buckets are made for (its own registry stays empty).
        let bus = EventBus()

        mutating func link<E: Event>(_: E.Type, keys: [String], owner: Owner?) -> SubscriptionHandle? {
            var traits = SubscriptionTraits()
            traits.isOwned = owner != nil
            let body = Body<E>.immediate(.event { _ in })
            let primary = bus.core.makeNodes(
                keys: SubscriptionKeys(keys), body: body, traits: traits, owner: owner,
                callSite: CallSite(fileID: #fileID, line: #line))
            registry.tick(.subscribe)
            let handle = registry.subscribe(primary, of: E.self, traits: traits, bus: bus)
            // Owners the sweep picked: checked, none reclaimed from here (they live).
            var after = registry.takeAfterUnlock()
            bus.core.perform(&after)
            return handle
        }

        mutating func end(_ handle: SubscriptionHandle) -> Bool {
            registry.tick(.dispose)
            let ended = registry.end(handle, reason: .disposed)
            var after = registry.takeAfterUnlock()
            bus.core.perform(&after)
            return ended
        }

        mutating func tick() {
            registry.tick(.dispatch)
            var after = registry.takeAfterUnlock()
            bus.core.perform(&after)
        }

        /// A sticky dispatch of `event` nobody subscribes to: the registry keeps it as `policy` says.
        mutating func storeSticky(_ event: Kept, _ policy: StickyPolicy) {
            let request = DispatchRequest(bus: bus, sticky: StickyDispatch(policy, for: Kept.self))
            withUnsafeTemporaryAllocation(
                of: Unmanaged<SubscriptionNode>.self, capacity: Dispatch.firstChunkCapacity
            ) { chunk in
                var dispatch = Dispatch(request, chunk: chunk)
                let start = withUnsafePointer(to: event) {
                    registry.beginDispatch($0, key: event.key, request, ticks: 1, &dispatch)
                }
                #expect(dispatch.count == 0 && start.held == 0)
            }
        }

        /// Performs what the operations so far left for after the lock.
        mutating func settle() {
            var after = registry.takeAfterUnlock()
            bus.core.perform(&after)
        }

        /// The ids of the subscriptions in the ring of owned ones, one full turn of it.
        mutating func ownedRing() -> Set<UInt64> {
            registry.pickForPurge(limit: registry.ownedCount, onMain: true)
            var after = registry.takeAfterUnlock()
            defer { bus.core.perform(&after) }  // owners alive: nothing reclaimed
            return Set(after.pickedIDs)
        }
    }

    static let types = [ObjectIdentifier(Alpha.self), ObjectIdentifier(Beta.self), ObjectIdentifier(Gamma.self)]

    @Test("Links, ends, double ends and ticks keep counts, slots, the owned ring and buckets as the model says")
    func randomSequences() {
        var steps = 0
        var counts = (links: 0, ends: 0, staleEnds: 0, ticks: 0)
        for seed in UInt64(1)...20 {
            var random = SplitMix64(seed: seed)
            var harness = Harness()
            var live: [SubscriptionHandle: Live] = [:]
            var ended: [SubscriptionHandle] = []
            for _ in 0..<1_500 {
                switch random.next(below: 10) {
                case 0..<4:
                    let type = random.next(below: 3)
                    let keys = [[], ["a"], ["a", "b"], ["b", "b"]][random.next(below: 4)]
                    let owner = random.next(below: 2) == 0 ? Owner() : nil
                    let handle: SubscriptionHandle?
                    switch type {
                    case 0: handle = harness.link(Alpha.self, keys: keys, owner: owner)
                    case 1: handle = harness.link(Beta.self, keys: keys, owner: owner)
                    default: handle = harness.link(Gamma.self, keys: keys, owner: owner)
                    }
                    guard let handle else {
                        Issue.record("a link with no hooks was refused")
                        continue
                    }
                    #expect(live[handle] == nil, "a live subscription's handle was given again")
                    live[handle] = Live(type: Self.types[type], owner: owner)
                    counts.links += 1
                case 4..<7 where !live.isEmpty:
                    let handle = live.keys.sorted { $0.id < $1.id }[random.next(below: live.count)]
                    let didEnd = harness.end(handle)
                    #expect(didEnd, "a live subscription did not end")
                    live[handle] = nil
                    ended.append(handle)
                    counts.ends += 1
                case 7 where !ended.isEmpty:
                    let handle = ended[random.next(below: ended.count)]
                    let endedAgain = harness.end(handle)
                    #expect(!endedAgain, "an ended subscription ended again")
                    counts.staleEnds += 1
                default:
                    harness.tick()
                    counts.ticks += 1
                }
                steps += 1
                check(&harness, against: live, ended: ended)
            }
            // Everything ended: after the grace period, no bucket is left.
            for handle in live.keys {
                let didEnd = harness.end(handle)
                #expect(didEnd)
            }
            for _ in 0..<(Int(Registry.emptyBucketGrace) + 8) { harness.tick() }
            #expect(harness.registry.subscriptionCount == 0)
            #expect(harness.registry.ownedCount == 0)
            #expect(harness.registry.bucketCount == 0, "emptied buckets were not removed")
        }
        print(
            "registry model: \(steps) steps over 20 seeds: \(counts.links) links, \(counts.ends) ends, "
                + "\(counts.staleEnds) ends of ended subscriptions, \(counts.ticks) ticks")
    }

    /// A kept event: which dispatch it was (its serial).
    struct Kept: Event {
        let serial: Int
        let key: String?
        var eventType: String? { key }
    }

    @Test("Sticky dispatches, reads, takes and removals keep what the model keeps, per key and in order")
    func stickySequences() {
        var steps = 0
        var counts = (stores: 0, takes: 0, removes: 0, reads: 0)
        let keys: [String?] = [nil, "a", "b"]
        let policies: [(StickyPolicy, limit: Int)] = [(.latest, 1), (.last(3), 3)]
        for seed in UInt64(1)...20 {
            var random = SplitMix64(seed: seed)
            var harness = Harness()
            // The model: per key, the serials kept, oldest first, and the policy's limit.
            var kept: [String?: [Int]] = [:]
            for serial in 0..<1_000 {
                let key = keys[random.next(below: keys.count)]
                switch random.next(below: 10) {
                case 0..<5:
                    let (policy, limit) = policies[random.next(below: policies.count)]
                    harness.storeSticky(Kept(serial: serial, key: key), policy)
                    kept[key, default: []].append(serial)
                    kept[key] = Array(kept[key]!.suffix(limit))
                    counts.stores += 1
                case 5..<7:
                    let taken = harness.registry.takeSticky(of: Kept.self, key: key)
                    #expect(taken?.serial == kept[key]?.last, "take of \(String(describing: key))")
                    if kept[key]?.popLast() != nil, kept[key]!.isEmpty { kept[key] = nil }
                    counts.takes += 1
                case 7:
                    let removed = harness.registry.removeSticky(of: Kept.self, key: key)
                    #expect(removed == kept[key]?.count ?? 0)
                    kept[key] = nil
                    counts.removes += 1
                default:
                    let events = harness.registry.stickyEvents(of: Kept.self, key: key).map(\.serial)
                    #expect(events == kept[key] ?? [], "read of \(String(describing: key))")
                    let latest = harness.registry.latestSticky(of: Kept.self, key: key)
                    #expect(latest?.serial == kept[key]?.last)
                    counts.reads += 1
                }
                harness.settle()
                steps += 1
                #expect(harness.registry.stickyCount == kept.values.reduce(0) { $0 + $1.count })
            }
        }
        print(
            "registry sticky model: \(steps) steps over 20 seeds: \(counts.stores) sticky dispatches, "
                + "\(counts.takes) takes, \(counts.removes) removals, \(counts.reads) reads")
    }

    private func check(_ harness: inout Harness, against live: [SubscriptionHandle: Live], ended: [SubscriptionHandle])
    {
        let registry = harness.registry
        #expect(registry.subscriptionCount == live.count)
        #expect(registry.ownedCount == live.values.filter { $0.owner != nil }.count)
        for type in Self.types {
            let expected = live.values.filter { $0.type == type }.count
            let found = harness.registry.bucket(for: type)?.subscriptionCount ?? 0
            #expect(found == expected)
        }
        for handle in live.keys { #expect(registry.primary(of: handle)?.id == handle.id) }
        for handle in ended.suffix(8) { #expect(registry.primary(of: handle) == nil) }
        if live.count % 16 == 0 {
            let owned = Set(live.filter { $0.value.owner != nil }.map(\.key.id))
            let ring = harness.ownedRing()
            #expect(ring == owned, "the sweep's ring is not the owned subscriptions")
        }
    }
}
