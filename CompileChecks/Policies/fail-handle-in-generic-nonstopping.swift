import EventBus

// Generic code over a style that does not declare `StoppingDelivery` cannot `handle`: the
// requirement names the declaration.
func stopAnywhere<D: NonisolatedDelivery>(_ maker: SubscriberMaker<Tap, Never, D>) -> EventToken {
    maker.handle { _ in .stop }  // expected-error
}
