import Testing

@testable import EventBus

/// `.untilDelivered` is kept exactly when nobody received it, decided from what the delivery
/// reached: the index's side, where a subscription can be registered with its owner already gone
/// (the public makers hold the owner while they register, so a replay through them finds it alive).
@Suite("Policies: .untilDelivered decided after delivery", .offThePool)
struct StickyHoldTests {
    struct Note: Event {
        let text: String
        var room: String? = nil
        var eventType: String? { room }
    }

    /// Registers a replaying subscription owned by an owner that is already gone, on the
    /// dispatching thread, as `freeWith(owner).replayingSticky().next { owner, event in }` would.
    private func subscribeReplayingWithOwnerGone(to bus: EventBus, got: Shared<[String]>) {
        var traits = SubscriptionTraits()
        traits.isOwned = true
        traits.replaysSticky = true
        let body = Body<Note>.immediate(
            .general { _, note in
                got.append(note.text)
                return .continue
            })
        let primary = bus.core.makeNodes(
            keys: SubscriptionKeys(), body: body, traits: traits, owner: nil,
            callSite: CallSite(fileID: #fileID, line: #line))
        _ = bus.core.subscribe(primary, of: Note.self, traits: traits, deliversNow: true, bus: bus)
    }

    @Test("A replay that takes .untilDelivered events and finds its owner gone puts them back, in order")
    func replayToGoneOwnerPutsBack() {
        let bus = EventBus()
        bus.dispatch(Note(text: "a"), sticky: .untilDelivered)
        bus.dispatch(Note(text: "b", room: "7"), sticky: .untilDelivered)
        bus.dispatch(Note(text: "c", room: "8"), sticky: .latest)
        let lost = Shared<[String]>([])
        subscribeReplayingWithOwnerGone(to: bus, got: lost)
        #expect(lost.value.isEmpty)
        #expect(bus.stickyCount == 3, "nobody received them, so they are kept")
        let got = Shared<[String]>([])
        _ = bus.on(Note.self).replayingSticky().next { got.append($0.text) }
        #expect(got.value == ["a", "b", "c"])
        #expect(bus.stickyCount == 1, "the .untilDelivered ones had one taker")
    }
}
