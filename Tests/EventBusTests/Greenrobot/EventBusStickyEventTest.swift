import Testing

@testable import EventBus

// Port of greenrobot's EventBusStickyEventTest.
//
// Adapted: `postSticky(e)` is `dispatch(e, sticky: .latest)` (greenrobot keeps the latest event per
// class); `@Subscribe(sticky = true)` is `replayingSticky()`; `getStickyEvent` is `sticky(_:)`;
// `removeStickyEvent(Class)` is `removeSticky(_:)`; `removeStickyEvent(event)` (removes it if it is
// the kept one, returns whether it did) is `takeSticky(_:)` compared with the event;
// `removeAllStickyEvents` is `removeAllSticky()`. `lastThread == currentThread` becomes "delivered
// before `next` returned" (the replay runs on the subscribing thread).
extension Greenrobot {
    @Suite("EventBusStickyEventTest (greenrobot)", .offThePool)
    struct EventBusStickyEventTest {
        /// The test class as a subscriber: sticky `onEvent(String)` and `onEvent(IntTestEvent)`.
        final class StickySubscriber: Sendable {
            let tracker = GreenrobotTracker()
            private let bag = DisposeBag()

            func register(on bus: EventBus, sticky: Bool = true) {
                var strings = bus.on(StringEvent.self)
                var ints = bus.on(IntTestEvent.self)
                if sticky {
                    strings = strings.replayingSticky()
                    ints = ints.replayingSticky()
                }
                strings.next { [tracker] event in tracker.track(event) }.disposed(by: bag)
                ints.next { [tracker] event in tracker.track(event) }.disposed(by: bag)
            }

            func unregister() { bag.dispose() }

            var eventCount: Int { tracker.eventCount }
            var lastEvent: String? { tracker.lastEvent }
        }

        @Test func testPostSticky() {
            let bus = EventBus()
            let this = StickySubscriber()
            bus.dispatch(StringEvent("Sticky"), sticky: .latest)
            this.register(on: bus)
            // Delivered before register returned: on this thread.
            #expect(this.lastEvent == "Sticky")
            #expect(this.eventCount == 1)
        }

        @Test func testPostStickyTwoEvents() {
            let bus = EventBus()
            let this = StickySubscriber()
            bus.dispatch(StringEvent("Sticky"), sticky: .latest)
            bus.dispatch(IntTestEvent(7), sticky: .latest)
            this.register(on: bus)
            #expect(this.eventCount == 2)
        }

        @Test func testPostStickyTwoSubscribers() {
            let bus = EventBus()
            let this = StickySubscriber()
            bus.dispatch(StringEvent("Sticky"), sticky: .latest)
            bus.dispatch(IntTestEvent(7), sticky: .latest)
            this.register(on: bus)
            // StickyIntTestSubscriber, tracking into the same counter.
            _ = bus.on(IntTestEvent.self).replayingSticky().next { [tracker = this.tracker] event in
                tracker.track(event)
            }
            #expect(this.eventCount == 3)

            bus.dispatch(StringEvent("Sticky"), sticky: .latest)
            #expect(this.eventCount == 4)

            bus.dispatch(IntTestEvent(8), sticky: .latest)
            #expect(this.eventCount == 6)
        }

        @Test func testPostStickyRegisterNonSticky() {
            let bus = EventBus()
            let nonSticky = StickySubscriber()
            bus.dispatch(StringEvent("Sticky"), sticky: .latest)
            nonSticky.register(on: bus, sticky: false)
            #expect(nonSticky.lastEvent == nil)
            #expect(nonSticky.eventCount == 0)
        }

        @Test func testPostNonStickyRegisterSticky() {
            let bus = EventBus()
            let this = StickySubscriber()
            bus.dispatch(StringEvent("NonSticky"))
            this.register(on: bus)
            #expect(this.lastEvent == nil)
            #expect(this.eventCount == 0)
        }

        @Test func testPostStickyTwice() {
            let bus = EventBus()
            let this = StickySubscriber()
            bus.dispatch(StringEvent("Sticky"), sticky: .latest)
            bus.dispatch(StringEvent("NewSticky"), sticky: .latest)
            this.register(on: bus)
            #expect(this.lastEvent == "NewSticky")
            #expect(this.eventCount == 1, "`.latest` keeps one event")
        }

        @Test func testPostStickyThenPostNormal() {
            let bus = EventBus()
            let this = StickySubscriber()
            bus.dispatch(StringEvent("Sticky"), sticky: .latest)
            bus.dispatch(StringEvent("NonSticky"))
            this.register(on: bus)
            #expect(this.lastEvent == "Sticky")
        }

        @Test func testPostStickyWithRegisterAndUnregister() {
            let bus = EventBus()
            let this = StickySubscriber()
            this.register(on: bus)
            bus.dispatch(StringEvent("Sticky"), sticky: .latest)
            #expect(this.lastEvent == "Sticky")

            this.unregister()
            this.register(on: bus)
            #expect(this.lastEvent == "Sticky")
            #expect(this.eventCount == 2)

            bus.dispatch(StringEvent("NewSticky"), sticky: .latest)
            #expect(this.eventCount == 3)
            #expect(this.lastEvent == "NewSticky")

            this.unregister()
            this.register(on: bus)
            #expect(this.eventCount == 4)
            #expect(this.lastEvent == "NewSticky")
        }

        @Test func testPostStickyAndGet() {
            let bus = EventBus()
            bus.dispatch(StringEvent("Sticky"), sticky: .latest)
            #expect(bus.sticky(StringEvent.self) == StringEvent("Sticky"))
            #expect(bus.sticky(StringEvent.self) == StringEvent("Sticky"), "reading does not remove it")
        }

        @Test func testPostStickyRemoveClass() {
            let bus = EventBus()
            let this = StickySubscriber()
            bus.dispatch(StringEvent("Sticky"), sticky: .latest)
            #expect(bus.removeSticky(StringEvent.self) == 1)
            #expect(bus.sticky(StringEvent.self) == nil)
            this.register(on: bus)
            #expect(this.lastEvent == nil)
            #expect(this.eventCount == 0)
        }

        @Test func testPostStickyRemoveEvent() {
            let bus = EventBus()
            let this = StickySubscriber()
            bus.dispatch(StringEvent("Sticky"), sticky: .latest)
            #expect(bus.takeSticky(StringEvent.self) == StringEvent("Sticky"))
            #expect(bus.sticky(StringEvent.self) == nil)
            this.register(on: bus)
            #expect(this.lastEvent == nil)
            #expect(this.eventCount == 0)
        }

        @Test func testPostStickyRemoveAll() {
            let bus = EventBus()
            let this = StickySubscriber()
            bus.dispatch(StringEvent("Sticky"), sticky: .latest)
            bus.dispatch(IntTestEvent(77), sticky: .latest)
            #expect(bus.stickyCount == 2)
            bus.removeAllSticky()
            #expect(bus.sticky(StringEvent.self) == nil)
            #expect(bus.sticky(IntTestEvent.self) == nil)
            #expect(bus.stickyCount == 0)
            this.register(on: bus)
            #expect(this.lastEvent == nil)
            #expect(this.eventCount == 0)
        }

        @Test func testRemoveStickyEventInSubscriber() {
            let bus = EventBus()
            let this = StickySubscriber()
            // RemoveStickySubscriber: removes the kept event while it is being delivered live.
            let removed = Shared(-1)
            _ = bus.on(StringEvent.self).replayingSticky().next { [weak bus] _ in
                let count = bus?.removeSticky(StringEvent.self) ?? -1
                removed.withLock { $0 = count }
            }
            bus.dispatch(StringEvent("Sticky"), sticky: .latest)
            #expect(removed.value == 1, "the event is kept before the subscribers run")
            this.register(on: bus)
            #expect(this.lastEvent == nil)
            #expect(this.eventCount == 0)
            #expect(bus.sticky(StringEvent.self) == nil)
        }
    }
}
