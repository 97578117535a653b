import Testing

@testable import EventBus

// Port of greenrobot's EventBusInheritanceTest.
//
// Adapted: Swift events are structs, so greenrobot's class and interface hierarchy is declared
// with `DeliveredAsSupertypes`: `Object` is the protocol `ObjectEvent`, the interfaces are
// protocols subscribed to with `on(anyOf:)`, and "MyEventExtended extends MyEvent" is a supertype
// entry that converts to a `MyEvent` value (delivered to `on(MyEvent.self)` subscribers). The list
// is flat, so each event lists every ancestor itself.
//
// Adapted differently on purpose: testEventClassHierarchySticky. Greenrobot replays sticky events
// to subscribers of their supertypes; ours keeps sticky events under their exact type only
// (documented on `on(anyOf:)`), so the expected counts are the exact-type ones.
//
// Skipped: testSubscriberClassHierarchy and testSubscriberClassHierarchyWithoutNewSubscriberMethod
// (subscriber classes inheriting and overriding @Subscribe methods: our subscriptions are made
// explicitly with `on(_:)`, there is no method discovery to inherit).
extension Greenrobot {
    @Suite("EventBusInheritanceTest (greenrobot)", .offThePool)
    struct EventBusInheritanceTest {
        /// `java.lang.Object`, as far as events go.
        protocol ObjectEvent: Sendable {}
        protocol MyEventInterface: Sendable {}
        protocol MyEventInterfaceExtended: MyEventInterface {}

        /// Greenrobot's `"Hello"` String event.
        struct Hello: Event, ObjectEvent, DeliveredAsSupertypes {
            static let supertypes: [Supertype<Self>] = [.as((any ObjectEvent).self) { $0 }]
        }

        struct MyEvent: Event, ObjectEvent, MyEventInterface, DeliveredAsSupertypes {
            static let supertypes: [Supertype<Self>] = [
                .as((any ObjectEvent).self) { $0 },
                .as((any MyEventInterface).self) { $0 },
            ]
        }

        struct MyEventExtended: Event, ObjectEvent, MyEventInterfaceExtended, DeliveredAsSupertypes {
            static let supertypes: [Supertype<Self>] = [
                .as((any ObjectEvent).self) { $0 },
                .as(MyEvent.self) { _ in MyEvent() },
                .as((any MyEventInterface).self) { $0 },
                .as((any MyEventInterfaceExtended).self) { $0 },
            ]
        }

        /// Greenrobot's anonymous `new MyEventInterfaceExtended() {}`.
        struct AnonymousInterfaceExtended: Event, ObjectEvent, MyEventInterfaceExtended, DeliveredAsSupertypes {
            static let supertypes: [Supertype<Self>] = [
                .as((any ObjectEvent).self) { $0 },
                .as((any MyEventInterface).self) { $0 },
                .as((any MyEventInterfaceExtended).self) { $0 },
            ]
        }

        /// The test class's counters and its five `onEvent` methods.
        final class Counts: Sendable {
            private let state = Shared<[String: Int]>([:])

            var countObjectEvent: Int { state.value["Object", default: 0] }
            var countMyEvent: Int { state.value["MyEvent", default: 0] }
            var countMyEventExtended: Int { state.value["MyEventExtended", default: 0] }
            var countMyEventInterface: Int { state.value["MyEventInterface", default: 0] }
            var countMyEventInterfaceExtended: Int { state.value["MyEventInterfaceExtended", default: 0] }

            private func count(_ name: String) { state.withLock { $0[name, default: 0] += 1 } }

            /// `eventBus.register(this)` (or of `StickySubscriber`, with `sticky`).
            func register(on bus: EventBus, sticky: Bool = false) {
                var object = bus.on(anyOf: (any ObjectEvent).self)
                var myEvent = bus.on(MyEvent.self)
                var extended = bus.on(MyEventExtended.self)
                var interface = bus.on(anyOf: (any MyEventInterface).self)
                var interfaceExtended = bus.on(anyOf: (any MyEventInterfaceExtended).self)
                if sticky {
                    object = object.replayingSticky()
                    myEvent = myEvent.replayingSticky()
                    extended = extended.replayingSticky()
                    interface = interface.replayingSticky()
                    interfaceExtended = interfaceExtended.replayingSticky()
                }
                _ = object.next { [self] _ in count("Object") }
                _ = myEvent.next { [self] _ in count("MyEvent") }
                _ = extended.next { [self] _ in count("MyEventExtended") }
                _ = interface.next { [self] _ in count("MyEventInterface") }
                _ = interfaceExtended.next { [self] _ in count("MyEventInterfaceExtended") }
            }
        }

        @Test func testEventClassHierarchy() {
            let bus = EventBus()
            let this = Counts()
            this.register(on: bus)

            bus.dispatch(Hello())
            #expect(this.countObjectEvent == 1)

            bus.dispatch(MyEvent())
            #expect(this.countObjectEvent == 2)
            #expect(this.countMyEvent == 1)

            bus.dispatch(MyEventExtended())
            #expect(this.countObjectEvent == 3)
            #expect(this.countMyEvent == 2)
            #expect(this.countMyEventExtended == 1)
        }

        @Test func testEventClassHierarchySticky() {
            let bus = EventBus()
            let this = Counts()
            bus.dispatch(Hello(), sticky: .latest)
            bus.dispatch(MyEvent(), sticky: .latest)
            bus.dispatch(MyEventExtended(), sticky: .latest)
            this.register(on: bus, sticky: true)
            // Greenrobot: 1, 2, 3. Ours replays only to subscribers of the exact type.
            #expect(this.countMyEventExtended == 1)
            #expect(this.countMyEvent == 1)
            #expect(this.countObjectEvent == 0)
            #expect(this.countMyEventInterface == 0)
        }

        @Test func testEventInterfaceHierarchy() {
            let bus = EventBus()
            let this = Counts()
            this.register(on: bus)

            bus.dispatch(MyEvent())
            #expect(this.countMyEventInterface == 1)

            bus.dispatch(MyEventExtended())
            #expect(this.countMyEventInterface == 2)
            #expect(this.countMyEventInterfaceExtended == 1)
        }

        @Test func testEventSuperInterfaceHierarchy() {
            let bus = EventBus()
            let this = Counts()
            this.register(on: bus)

            bus.dispatch(AnonymousInterfaceExtended())
            #expect(this.countMyEventInterface == 1)
            #expect(this.countMyEventInterfaceExtended == 1)
            #expect(this.countObjectEvent == 1)
            #expect(this.countMyEvent == 0)
        }

        // Beyond the Java test: the order of a dispatch (own type first, then the supertypes in the
        // order declared), and a supertype with no subscriber costs no conversion.
        @Test func testDeliveryOrderAndLazyConversion() {
            struct Converted: Event, ObjectEvent, MyEventInterface, DeliveredAsSupertypes {
                static let conversions = Shared(0)
                static let supertypes: [Supertype<Self>] = [
                    .as((any MyEventInterface).self) { event in
                        conversions.increment()
                        return event
                    },
                    .as((any ObjectEvent).self) { $0 },
                ]
            }
            let bus = EventBus()
            let calls = Shared<[String]>([])
            _ = bus.on(anyOf: (any ObjectEvent).self).next { _ in calls.append("Object") }
            _ = bus.on(Converted.self).next { _ in calls.append("Converted") }
            bus.dispatch(Converted())
            #expect(calls.value == ["Converted", "Object"])
            #expect(Converted.conversions.value == 0)

            _ = bus.on(anyOf: (any MyEventInterface).self).next { _ in calls.append("MyEventInterface") }
            bus.dispatch(Converted())
            #expect(calls.value == ["Converted", "Object", "Converted", "MyEventInterface", "Object"])
            #expect(Converted.conversions.value == 1)
        }
    }
}
