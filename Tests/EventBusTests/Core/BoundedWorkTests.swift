import Dispatch
import Testing

@testable import EventBus  // test helpers (Shared, AsyncWait), and `bus.index.bucketCount` below

/// The bus reclaims what is dead through a bounded amount of other work,
/// whatever the mix of operations (DESIGN §3 and §5: "Reclaiming dead owners is incremental … and
/// always makes progress whatever the mix of operations; empty buckets go away").
///
/// No wall-clock assertion here: the tests count subscriptions and buckets, and wait (with a
/// timeout) for a stream to finish.
@Suite(
    "Bounded work: dead subscriptions and empty buckets are reclaimed whatever the mix of operations", .tags(.stress),
    .offThePool)
struct BoundedWorkTests {
    struct Subscribed: Event {}
    struct Other: Event { var seq = 0 }

    final class Owner: Sendable {
        init() {}
    }

    /// An upper bound for "a few thousand": what a sweep that visits a small constant number of nodes
    /// per operation leaves behind, with room to spare (the defect leaves ~200,000).
    static let fewThousand = 5_000

    // A guard rather than a reproduction: the periodic sweep of the first core already keeps this
    // case bounded (its defect shows when owners outlive a few subscribes: the next test).
    @Test(
        "200,000 owner-bound subscribes whose owners die right away, with no dispatch and no purge, leave at most a few thousand subscriptions"
    )
    func ownersDyingRightAway() {
        let bus = EventBus()
        let subscribes = 200_000
        var highest = 0
        for index in 0..<subscribes {
            let owner = Owner()
            bus.on(Subscribed.self).freeWith(owner).next { _, _ in }
            // `owner` dies here, before the next subscribe.
            if index % 1_000 == 999 { highest = max(highest, bus.subscriptionCount) }
        }
        let count = bus.subscriptionCount
        #expect(
            count <= Self.fewThousand,
            "\(count) subscriptions registered after \(subscribes) subscribes whose owners all died")
        #expect(highest <= Self.fewThousand, "up to \(highest) subscriptions registered along the way")
        print(
            "Bounded work: \(subscribes) owner-bound subscribes, owners dying right away, no dispatch: "
                + "\(count) subscriptions left, at most \(highest) seen along the way")
    }

    // The defect: each subscribe raises both the operation count and the subscription count the
    // periodic sweep compares it with, so once the owners outlive a few subscribes the sweep never
    // runs again. A sweep that visits k > 1 nodes per operation keeps about k/(k-1) batches here.
    @Test(
        "200,000 owner-bound subscribes whose owners die in batches of 1,000, with no dispatch and no purge, leave at most a few thousand subscriptions"
    )
    func ownersDyingInBatches() {
        let bus = EventBus()
        let batches = 200
        let batchSize = 1_000
        var highest = 0
        for _ in 0..<batches {
            // A screen full of owners subscribes, then goes away: subscribes dominate the bus's work.
            var owners: [Owner] = []
            owners.reserveCapacity(batchSize)
            for _ in 0..<batchSize {
                let owner = Owner()
                bus.on(Subscribed.self).freeWith(owner).next { _, _ in }
                owners.append(owner)
            }
            owners.removeAll()
            highest = max(highest, bus.subscriptionCount)
        }
        let count = bus.subscriptionCount
        #expect(
            count <= Self.fewThousand,
            "\(count) subscriptions registered after \(batches * batchSize) subscribes whose owners all died")
        #expect(highest <= Self.fewThousand, "up to \(highest) subscriptions registered along the way")
        print(
            "Bounded work: \(batches) batches of \(batchSize) owner-bound subscribes, each batch's owners released after it, no dispatch: "
                + "\(count) subscriptions left, at most \(highest) seen along the way")
    }

    @Test(
        "an owner-bound events() stream finishes after its owner died when only subscribes of other types happen afterwards"
    )
    func streamFinishesUnderSubscribes() async {
        let bus = EventBus()
        // Some long-lived subscriptions of another type, as an app has.
        var tokens = (0..<300).map { _ in bus.on(Other.self).next { _ in } }
        var owner: Owner? = Owner()
        let stream = bus.on(Subscribed.self).freeWith(owner).events()
        let consumer = Task { await stream.reduce(0) { count, _ in count + 1 } }
        owner = nil
        // Only subscribes from now on, of another type (kept: nothing is disposed, nothing dispatched).
        let subscribes = 50_000
        for _ in 0..<subscribes { tokens.append(bus.on(Other.self).next { _ in }) }
        let received = await AsyncWait.value(within: 10) { await consumer.value }
        #expect(received == 0, "the stream must finish (with nothing yielded) once the bus reclaims its dead owner")
        #expect(bus.subscriptionCount(of: Subscribed.self) == 0)
        print(
            "Bounded work: an owner-bound stream whose owner died, then \(subscribes) subscribes of another type: "
                + "stream \(received == nil ? "still open" : "finished")")
        for token in tokens { token.dispose() }
    }

    // MARK: - Empty buckets (defect 5)

    /// An event type per type argument: `Probe<Left<Right<…>>>` makes as many distinct event types
    /// as the test wants, at run time.
    struct Probe<Tag>: Event {}
    enum Left<Tag> {}
    enum Right<Tag> {}

    /// Calls `body.visit` once for each of the 2^depth types `Left<…>`/`Right<…>` nested `depth` deep.
    static func forEachType<Tag>(_: Tag.Type, depth: Int, _ body: some TypeVisitor) {
        guard depth > 0 else {
            body.visit(Tag.self)
            return
        }
        forEachType(Left<Tag>.self, depth: depth - 1, body)
        forEachType(Right<Tag>.self, depth: depth - 1, body)
    }

    protocol TypeVisitor {
        func visit<Tag>(_: Tag.Type)
    }

    /// Subscribes to `Probe<Tag>`, dispatches one, and disposes.
    struct SubscribeDispatchDispose: TypeVisitor {
        let bus: EventBus
        let delivered: Shared<Int>

        func visit<Tag>(_: Tag.Type) {
            let delivered = delivered
            let token = bus.on(Probe<Tag>.self).next { _ in delivered.increment() }
            bus.dispatch(Probe<Tag>())
            token.dispose()
        }
    }

    @Test("subscribing to 4,096 distinct event types and disposing leaves no per-type state behind")
    func emptyBucketsGoAway() {
        let bus = EventBus()
        // `bucketCount`: the number of per-event-type entries in the bus's index. A bucket that
        // became empty is removed once it has stayed empty for `Registry.emptyBucketGrace` bus
        // operations (so that one type's subscribe/dispose churn does not remake it every time).
        let baseline = bus.core.bucketCount
        let delivered = Shared(0)
        let depth = 12
        let types = 1 << depth
        Self.forEachType(Never.self, depth: depth, SubscribeDispatchDispose(bus: bus, delivered: delivered))
        #expect(delivered.value == types, "every type was subscribed to and dispatched once")
        #expect(bus.subscriptionCount == 0)
        let buckets = bus.core.bucketCount
        #expect(
            buckets <= baseline + Int(Registry.emptyBucketGrace),
            "\(buckets - baseline) per-type entries left after \(types) types were subscribed to and disposed")
        print(
            "Bounded work: \(types) distinct event types subscribed, dispatched and disposed: "
                + "\(buckets - baseline) per-type entries left (baseline \(baseline))")
    }

    @Test(
        "event types first subscribed to on two threads at once (more types than the process-wide table of node classes holds) each deliver to their own subscriber"
    )
    func nodeClassesOfNewTypesOnTwoThreads() {
        // Two buses (so each thread's count is exact) share the process-wide table of node classes,
        // which both threads fill at once; 512 types overflow its 256 entries. A node made from
        // another type's class would name that type (its events are all empty, so delivery alone
        // could not tell).
        let depth = 9
        let counts = [Shared(0), Shared(0)]
        let misnamed = Shared(0)
        let finished = concurrently(2, timeout: actorTimeout) { thread in
            let bus = EventBus()
            Self.forEachType(
                Bool.self, depth: depth,
                NamedSubscribeDispatchDispose(bus: bus, delivered: counts[thread], misnamed: misnamed))
        }
        #expect(finished)
        #expect(counts.map(\.value) == [1 << depth, 1 << depth], "each dispatch reached its one subscriber")
        #expect(misnamed.value == 0, "subscriptions whose node is of another event type's class")
        print(
            "Bounded work: \(1 << depth) new event types subscribed to on 2 threads at once: dispatches delivered "
                + "\(counts[0].value) and \(counts[1].value) times, "
                + "\(misnamed.value) nodes of another type's class")
    }

    /// `SubscribeDispatchDispose`, counting the subscriptions whose node names another event type.
    struct NamedSubscribeDispatchDispose: TypeVisitor {
        let bus: EventBus
        let delivered: Shared<Int>
        let misnamed: Shared<Int>

        func visit<Tag>(_: Tag.Type) {
            let delivered = delivered
            let token = bus.on(Probe<Tag>.self).next { _ in delivered.increment() }
            if token.info?.typeName != String(reflecting: Probe<Tag>.self) { misnamed.increment() }
            bus.dispatch(Probe<Tag>())
            token.dispose()
        }
    }

    @Test("the lock-free summary of event types with a bucket (which chain posts read) empties with the buckets")
    func typeSummaryFollowsBuckets() {
        let bus = EventBus()
        #expect(bus.core.typeSummaryBits == 0)
        #expect(!bus.core.snapshot.mayHaveBucket(ObjectIdentifier(Probe<Int>.self)))
        let token = bus.on(Probe<Int>.self).next { _ in }
        #expect(bus.core.snapshot.mayHaveBucket(ObjectIdentifier(Probe<Int>.self)))
        token.dispose()
        let delivered = Shared(0)
        let depth = 10
        Self.forEachType(Never.self, depth: depth, SubscribeDispatchDispose(bus: bus, delivered: delivered))
        let populated = bus.core.typeSummaryBits.nonzeroBitCount
        let remaining = bus.core.bucketCount
        // Each operation removes at most one bucket that stayed empty for the grace period.
        for _ in 0..<(1 << depth) + 2 * Int(Registry.emptyBucketGrace) { bus.dispatch(Probe<String>()) }
        #expect(bus.core.bucketCount == 0)
        #expect(bus.core.typeSummaryBits == 0, "bits left: \(bus.core.typeSummaryBits.nonzeroBitCount)")
        #expect(!bus.core.snapshot.mayHaveBucket(ObjectIdentifier(Probe<Int>.self)))
        print(
            "Bounded work: after \(1 << depth) types, \(remaining) buckets in their grace period set "
                + "\(populated) of 64 summary bits; all cleared once the buckets were removed")
    }
}
