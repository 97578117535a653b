/// The context hook (DESIGN §14): the two functions every delivery that leaves the dispatching
/// thread uses. On the dispatching thread, when it enqueues: `let context = captureContext()`;
/// where it runs: `withContext(context, delivery) { call the handler }`.
extension BusCore {
    /// The bus's context propagator. The one it replaces is released after unlocking.
    var contextPropagator: (any EventContextPropagator)? {
        get { withRegistry { registry in registry.contextPropagator } }
        set {
            // The registry publishes whether one is set (`RegistrySnapshot.propagates`).
            ReleaseLoop.drop(withRegistry { registry in registry.replaceContextPropagator(with: newValue) })
        }
    }

    /// The dispatching thread's context, to be restored where the delivery runs: `nil`, with one
    /// atomic load and nothing allocated, when no propagator is set (or it had nothing to carry).
    /// Call it on the dispatching thread, with no lock held.
    @inline(__always)
    func captureContext() -> CapturedContext? {
        guard propagates.current != 0 else { return nil }
        return captureContextNow()
    }

    /// ``captureContext()`` with a propagator set: reads it under the lock, captures after
    /// unlocking (user code).
    @inline(never)
    private func captureContextNow() -> CapturedContext? {
        guard let propagator = withRegistry({ registry in registry.contextPropagator }),
            let value = propagator.capture()
        else { return nil }
        return CapturedContext(propagator: propagator, value: value)
    }

    /// Runs `body` (a delivery) with `context` restored around it by the propagator that captured
    /// it; just runs it when `context` is `nil` (`delivery` is then never evaluated). Call it where
    /// the delivery runs, with no lock held.
    @inline(__always)
    func withContext<R>(
        _ context: CapturedContext?, _ delivery: @autoclosure () -> EventContextDelivery, _ body: () -> R
    ) -> R {
        guard let context else { return body() }
        return Self.restore(context, delivery(), body)
    }

    /// ``withContext(_:_:_:)`` for a stream's asynchronous loop body, on `isolation`.
    static func withContext(
        _ context: CapturedContext?, _ delivery: @autoclosure () -> EventContextDelivery,
        isolation: isolated (any Actor)?, _ body: () async -> Void
    ) async {
        guard let context else { return await body() }
        var ran = false
        await context.propagator.restore(context.value, for: delivery(), isolation: isolation) {
            ran = true
            await body()
        }
        if !ran { await body() }
    }

    /// The restoring path of ``withContext(_:_:_:)``, out of line so that the frames of the
    /// deliveries that have no context do not grow. A propagator that does not call its body has
    /// it called afterwards, without the context.
    @inline(never)
    private static func restore<R>(_ context: CapturedContext, _ delivery: EventContextDelivery, _ body: () -> R) -> R {
        var result: R?
        context.propagator.restore(context.value, for: delivery) { result = body() }
        return result ?? body()
    }
}
