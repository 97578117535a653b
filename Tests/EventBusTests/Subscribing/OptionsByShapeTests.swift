import Dispatch
import Testing

@_spi(Integrations) @testable import EventBus

/// Every subscriber option, in every combination, on every subscription shape: every delivery
/// style (synchronous, queued, the bus's main actor, a main-actor node's, an actor) × every handler
/// shape its maker offers (`next`, throwing `next`, and where the style can stop, `handle` and
/// throwing `handle`) × every owner kind it allows (none, a `freeWith` owner, its actor). A shape
/// with a fast path of its own (the plain `next { }`, the queued one, the owner-bound one,
/// main-actor delivery) cannot silently ignore an option, because each option's effect is checked
/// here on each shape, both in what introspection says and in what a dispatch does; a throwing
/// handler's error reaches the error handler on each.
///
/// A new option or shape is added to `Option` or `Shape` below (CONTRIBUTING.md's recipe says so).
@Suite("Subscriber options: each option takes effect on every subscription shape", .offThePool)
@MainActor
struct OptionsByShapeTests {
    /// The maker steps that keep a shape: each one's effect is checked on every shape.
    struct Option: OptionSet, CustomStringConvertible {
        let rawValue: Int
        static let key = Option(rawValue: 1)  // ofType("k")
        static let high = Option(rawValue: 2)  // priority(.high)
        static let monitor = Option(rawValue: 4)  // monitor()
        static let replay = Option(rawValue: 8)  // replayingSticky()
        static let isInternal = Option(rawValue: 16)  // markedInternal()
        static let all: [Option] = [.key, .high, .monitor, .replay, .isInternal]

        /// Every combination of the options.
        static var combinations: [Option] { (0..<(1 << all.count)).map { Option(rawValue: $0) } }

        var description: String {
            let names = ["key", "high", "monitor", "replay", "internal"]
            let chosen = Self.all.indices.filter { contains(Self.all[$0]) }.map { names[$0] }
            return chosen.isEmpty ? "none" : chosen.joined(separator: "+")
        }
    }

    /// A subscription's shape: how it is delivered, whether it has an owner, and how it finishes.
    struct Shape: CustomStringConvertible {
        enum Delivery: CaseIterable { case synchronous, queue, mainActor, mainActorNode, actor }
        enum Finish: CaseIterable { case next, throwingNext, handle, throwingHandle }
        let delivery: Delivery
        let owned: Bool
        let finish: Finish

        /// Every shape the maker offers (`handle` only where a handler can stop the dispatch: on
        /// the dispatching thread, or a main-actor node's post; not after `monitor()`).
        static var all: [Shape] {
            Delivery.allCases.flatMap { delivery in
                // An actor-isolated subscription always has its actor as owner.
                (delivery == .actor ? [true] : [false, true]).flatMap { owned in
                    Finish.allCases.compactMap { finish in
                        finish.stops && !delivery.stops ? nil : Shape(delivery: delivery, owned: owned, finish: finish)
                    }
                }
            }
        }

        var description: String { "\(delivery)\(owned ? " owned" : "") \(finish)" }
        var throwing: Bool { finish == .throwingNext || finish == .throwingHandle }
    }

    struct Failure: Error {}

    /// What the subject's handler and the reference subscriber write to, and the errors its
    /// throwing handler threw (it throws after each event it records).
    final class Context: Sendable {
        let log = Shared<[String]>([])
        let errors = Shared<Int>(0)
        let queue = DispatchQueue(label: "OptionsByShapeTests")
        func hit(_ event: Chat) { log.append("subject \(event.text)") }
        func hitAndThrow(_ event: Chat) throws {
            hit(event)
            throw Failure()
        }
    }

    final class Owner: Sendable {}
    actor ActorOwner {}

    @Test("each option combination has its effect on each shape")
    func everyOptionOnEveryShape() async {
        var checked = 0
        for shape in Shape.all {
            for options in Option.combinations where !(options.contains(.monitor) && shape.finish.stops) {
                await check(options, on: shape)
                checked += 1
            }
        }
        print("options by shape: \(checked) combinations of \(Option.all.count) options on \(Shape.all.count) shapes")
        // 5 styles: synchronous and a main-actor node's (unowned, owned) × 4 finishers; the bus's
        // queue and main actor (unowned, owned) × 2; an actor (its own) × 2. A monitor cannot stop.
        let shapes = Shape.all.count
        let handleShapes = Shape.all.filter(\.finish.stops).count
        #expect(shapes == 26)  // 2 × 2 × 4 + 2 × 2 × 2 + 2
        #expect(handleShapes == 8)
        #expect(checked == shapes * 32 - handleShapes * 16)
    }

    private func check(_ options: Option, on shape: Shape) async {
        let context = Context()
        // A main-actor node's makers subscribe on the node's own bus.
        let node = MainActorEventNode(name: "OptionsByShapeTests")
        let bus = shape.delivery == .mainActorNode ? node.node.bus : EventBus()
        bus.handlerErrorHandler = { _ in context.errors.withLock { $0 += 1 } }
        let owner = Owner()
        let actorOwner = ActorOwner()
        let label = "\(options) on \(shape)"
        // The subject's key: events of another key must not reach a keyed subject.
        let key = options.contains(.key) ? "k" : nil
        if options.contains(.replay) { bus.dispatch(Chat(room: key, text: "kept"), sticky: .latest) }
        // A reference subscriber, made first (a normal-priority handler), and one that stops the
        // dispatches of key "stop".
        let reference = bus.on(Chat.self).handle { event in
            context.log.append("reference \(event.text)")
            return .continue
        }
        let stopper = bus.on(Chat.self).ofType("stop").handle { _ in .stop }
        let token = subscribe(options, shape, on: (bus, node), owners: (owner, actorOwner), context: context)
        await settle(shape, bus, context)

        // Introspection says what the maker chose.
        let info = bus.subscriptions.first { $0.id != reference.id && $0.id != stopper.id }
        #expect(info?.keys == (key.map { [$0] } ?? []), "\(label): keys")
        #expect(info?.priority == (options.contains(.high) ? .high : .normal), "\(label): priority")
        #expect(info?.isMonitor == options.contains(.monitor), "\(label): monitor")
        #expect(info?.isInternal == options.contains(.isInternal), "\(label): internal")
        #expect((info?.ownerType != nil) == shape.owned, "\(label): owner")
        switch shape.delivery {
        case .synchronous: #expect(info?.delivery == .synchronous, "\(label): delivery")
        case .queue: #expect(info?.delivery == .queue(label: "OptionsByShapeTests"), "\(label): delivery")
        case .mainActor, .mainActorNode: #expect(info?.delivery == .mainActor, "\(label): delivery")
        case .actor:
            let actorType = String(reflecting: ActorOwner.self)
            #expect(info?.delivery == .actor(typeName: actorType), "\(label): delivery")
        }
        #expect(bus.subscriptionCount == (options.contains(.isInternal) ? 2 : 3), "\(label): counted")

        // A replaying subject got the kept event when it subscribed, and only then.
        let replayed = context.log.value.filter { $0 == "subject kept" }.count
        #expect(replayed == (options.contains(.replay) ? 1 : 0), "\(label): replay")
        context.log.withLock { $0.removeAll() }

        // Another key reaches the unkeyed subject only.
        bus.dispatch(Chat(room: "other", text: "other"))
        await settle(shape, bus, context)
        #expect(context.log.value.contains("subject other") == (key == nil), "\(label): key routing")
        context.log.withLock { $0.removeAll() }

        // Its own key: the subject runs once, ordered by priority against the reference (on the
        // dispatching thread, where order within one dispatch is defined).
        bus.dispatch(Chat(room: key, text: "own"))
        await settle(shape, bus, context)
        let log = context.log.value
        #expect(log.filter { $0 == "subject own" }.count == 1, "\(label): delivered once")
        if shape.delivery != .queue, shape.delivery != .actor, let subject = log.firstIndex(of: "subject own"),
            let reference = log.firstIndex(of: "reference own")
        {
            // Priority first, then keyed before unkeyed, then subscription order; monitors last.
            let first = (options.contains(.high) || key != nil) && !options.contains(.monitor)
            #expect((subject < reference) == first, "\(label): order \(log)")
        }
        context.log.withLock { $0.removeAll() }

        // A dispatch stopped by a normal-priority handler still reaches monitors, and the
        // handlers of higher priority, which ran before the stop.
        if key == nil {
            bus.dispatch(Chat(room: "stop", text: "stopped"))
            await settle(shape, bus, context)
            let reached = context.log.value.contains("subject stopped")
            #expect(reached == !options.isDisjoint(with: [.monitor, .high]), "\(label): stop \(context.log.value)")
            context.log.withLock { $0.removeAll() }
        }

        // A throwing handler's errors reach the error handler (it threw at each delivery).
        #expect((context.errors.value > 0) == shape.throwing, "\(label): errors \(context.errors.value)")

        // After dispose, nothing more.
        token.dispose()
        bus.dispatch(Chat(room: key, text: "after"))
        await settle(shape, bus, context)
        #expect(!context.log.value.contains("subject after"), "\(label): dispose")
        reference.dispose()
        stopper.dispose()
        withExtendedLifetime((owner, actorOwner, node)) {}
    }

    /// Lets queued and actor deliveries run (main-actor ones run now: the test is on the main
    /// actor; actors run on the cooperative pool, which it awaits, leaving the main actor free).
    private func settle(_ shape: Shape, _ bus: EventBus, _ context: Context) async {
        if shape.delivery == .queue { #expect(drain(context.queue)) }
        if shape.delivery == .actor {
            // Awaited, so that the main actor stays free (main-actor deliveries of other tests).
            let core = bus.core
            let settled = await waitUntil(timeout: actorTimeout) { @Sendable in core.inFlight.count == 0 }
            #expect(settled)
        }
    }

    private func subscribe(
        _ options: Option, _ shape: Shape, on target: (bus: EventBus, node: MainActorEventNode),
        owners: (Owner, ActorOwner), context: Context
    ) -> EventToken {
        let (owner, actorOwner) = owners
        if shape.delivery == .mainActorNode {
            var maker = target.node.on(Chat.self)
            if options.contains(.key) { maker = maker.ofType("k") }
            if options.contains(.high) { maker = maker.priority(.high) }
            if options.contains(.replay) { maker = maker.replayingSticky() }
            if options.contains(.isInternal) { maker = maker.markedInternal() }
            // `monitor()` makes it the bus's main-actor maker, which has the same `next`.
            if options.contains(.monitor) {
                return finishOnMainActor(maker.monitor(), shape, owner: owner, context: context)
            }
            if shape.finish.stops { return handleOnMainActor(maker, shape, owner: owner, context: context) }
            return finishOnMainActor(maker, shape, owner: owner, context: context)
        }
        var maker = target.bus.on(Chat.self)
        if options.contains(.key) { maker = maker.ofType("k") }
        if options.contains(.high) { maker = maker.priority(.high) }
        if options.contains(.replay) { maker = maker.replayingSticky() }
        if options.contains(.isInternal) { maker = maker.markedInternal() }
        if shape.delivery == .actor {
            let isolated =
                options.contains(.monitor) ? maker.monitor().isolated(to: actorOwner) : maker.isolated(to: actorOwner)
            return shape.finish == .next
                ? isolated.next { _, event in context.hit(event) }
                : isolated.next { _, event throws in try context.hitAndThrow(event) }
        }
        if options.contains(.monitor) { return finish(maker.monitor(), shape, owner: owner, context: context) }
        switch (shape.finish, shape.owned) {
        case (.handle, false):
            return maker.handle { event in
                context.hit(event)
                return .continue
            }
        case (.handle, true):
            return maker.freeWith(owner).handle { _, event in
                context.hit(event)
                return .continue
            }
        case (.throwingHandle, false):
            return maker.handle { event throws in
                try context.hitAndThrow(event)
                return .continue
            }
        case (.throwingHandle, true):
            return maker.freeWith(owner).handle { _, event throws in
                try context.hitAndThrow(event)
                return .continue
            }
        case (.next, _), (.throwingNext, _): return finish(maker, shape, owner: owner, context: context)
        }
    }

    /// The `next` of a nonisolated maker (synchronous, monitor, queued) or of the bus's main-actor
    /// maker made from it.
    private func finish<D: NonisolatedDelivery>(
        _ maker: SubscriberMaker<Chat, Never, D>, _ shape: Shape, owner: Owner, context: Context
    ) -> EventToken {
        switch (shape.delivery, shape.owned, shape.finish) {
        case (.synchronous, false, .next): return maker.next { context.hit($0) }
        case (.synchronous, false, _): return maker.next { event throws in try context.hitAndThrow(event) }
        case (.synchronous, true, .next): return maker.freeWith(owner).next { _, event in context.hit(event) }
        case (.synchronous, true, _):
            return maker.freeWith(owner).next { _, event throws in try context.hitAndThrow(event) }
        case (.queue, false, .next): return maker.atQueue(context.queue).next { context.hit($0) }
        case (.queue, false, _):
            return maker.atQueue(context.queue).next { event throws in try context.hitAndThrow(event) }
        case (.queue, true, .next):
            return maker.atQueue(context.queue).freeWith(owner).next { _, event in context.hit(event) }
        case (.queue, true, _):
            return maker.atQueue(context.queue).freeWith(owner).next { _, event throws in
                try context.hitAndThrow(event)
            }
        case (.mainActor, _, _): return finishOnMainActor(maker.onMainActor(), shape, owner: owner, context: context)
        case (.mainActorNode, _, _), (.actor, _, _):
            preconditionFailure("subscribed by subscribe(_:_:on:owners:context:)")
        }
    }

    /// The finisher of a main-actor maker: the bus's (`next` only) or a main-actor node's (`next`
    /// and `handle`).
    private func finishOnMainActor<D: MainActorDelivery>(
        _ maker: SubscriberMaker<Chat, Never, D>, _ shape: Shape, owner: Owner, context: Context
    ) -> EventToken {
        switch (shape.owned, shape.finish) {
        case (false, .next): return maker.next { context.hit($0) }
        case (false, .throwingNext): return maker.next { event throws in try context.hitAndThrow(event) }
        case (true, .next): return maker.freeWith(owner).next { _, event in context.hit(event) }
        case (true, .throwingNext):
            return maker.freeWith(owner).next { _, event throws in try context.hitAndThrow(event) }
        case (_, .handle), (_, .throwingHandle):
            preconditionFailure("a main-actor handle is finished by handleOnMainActor(_:_:owner:context:)")
        }
    }
}

extension OptionsByShapeTests {
    /// The `handle` of a main-actor node's maker, the only main-actor style that can stop.
    fileprivate func handleOnMainActor<D: MainActorDelivery & StoppingDelivery>(
        _ maker: SubscriberMaker<Chat, Never, D>, _ shape: Shape, owner: Owner, context: Context
    ) -> EventToken {
        switch (shape.owned, shape.finish) {
        case (false, .handle):
            return maker.handle { event in
                context.hit(event)
                return .continue
            }
        case (true, .handle):
            return maker.freeWith(owner).handle { _, event in
                context.hit(event)
                return .continue
            }
        case (false, _):
            return maker.handle { event throws in
                try context.hitAndThrow(event)
                return .continue
            }
        case (true, _):
            return maker.freeWith(owner).handle { _, event throws in
                try context.hitAndThrow(event)
                return .continue
            }
        }
    }
}

extension OptionsByShapeTests.Shape.Delivery {
    /// Whether the style's handlers run within the dispatch, so that its maker offers `handle`.
    var stops: Bool { self == .synchronous || self == .mainActorNode }
}

extension OptionsByShapeTests.Shape.Finish {
    /// Whether the finisher is a `handle`.
    var stops: Bool { self == .handle || self == .throwingHandle }
}
