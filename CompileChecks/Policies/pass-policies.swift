import Dispatch
import EventBus

// Everything the policies allow compiles.
func allowed(_ bus: EventBus, owner: Owner) -> [EventToken] {
    [
        bus.on(Tap.self).handle { _ in .stop },
        bus.on(Tap.self).priority(.high).handle { _ in .continue },
        bus.on(Tap.self).freeWith(owner).handle { _, _ in .continue },
        bus.on(Tap.self).monitor().next { _ in },
        bus.on(Tap.self).monitor().atQueue(.global()).next { _ in },
        bus.on(Tap.self).atQueue(.global()).monitor().next { _ in },
        bus.on(Tap.self).monitor().onMainActor().next { _ in },
        bus.on(Tap.self).replayingSticky().priority(.low).next { _ throws in },
        bus.on(Tap.self).handle { _ throws in .stop },
        bus.on(Tap.self).freeWith(owner).handle { _, _ throws in .continue },
        guardBack(bus.on(Tap.self)),
    ]
}

// A style declares whether its handlers can stop: generic code over the declaration may `handle`.
func guardBack<D: NonisolatedDelivery & StoppingDelivery>(_ maker: SubscriberMaker<Tap, Never, D>) -> EventToken {
    maker.handle { _ in .stop }
}

final class Owner: Sendable {}
