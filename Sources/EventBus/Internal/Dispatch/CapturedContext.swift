/// What ``BusCore/captureContext()`` took on a dispatching thread: the propagator's value, with the
/// propagator that will restore it (the one set when it was captured, whatever is set later).
///
/// A class, so that a pending delivery carries one word for it (`nil` without a propagator).
final class CapturedContext: Sendable {
    let propagator: any EventContextPropagator
    let value: any Sendable

    init(propagator: any EventContextPropagator, value: any Sendable) {
        self.propagator = propagator
        self.value = value
    }
}
