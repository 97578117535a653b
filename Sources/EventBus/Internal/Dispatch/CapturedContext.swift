/// What ``BusCore/captureContext()`` took on a dispatching thread: the propagator's value, with the
/// propagator that will restore it (the one set when it was captured, whatever is set later).
struct CapturedContext: Sendable {
    let propagator: any EventContextPropagator
    let value: any Sendable
}
