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

    /// ``withContext(_:_:_:)`` for a stream's asynchronous loop body, on `isolation`. With no
    /// `context` (the dispatcher had none to carry), the bus's propagator, if one is set, runs
    /// `body` in its ``EventContextPropagator/withoutContext(for:isolation:_:)``: the consuming
    /// task's own context does not leak into an event that came without one.
    func withContext(
        _ context: CapturedContext?, _ delivery: @autoclosure () -> EventContextDelivery,
        isolation: isolated (any Actor)?, _ body: () async -> Void
    ) async {
        var calls = 0
        if let context {
            let propagator = context.propagator
            await propagator.restore(context.value, for: delivery(), isolation: isolation) {
                calls += 1
                guard calls == 1 else { return Self.report(.calledTwice, by: propagator, delivery()) }
                await body()
            }
            guard calls == 0 else { return }
            Self.report(.notCalled, by: propagator, delivery())
        } else if propagates.current != 0, let propagator = withRegistry({ registry in registry.contextPropagator }) {
            await propagator.withoutContext(for: delivery(), isolation: isolation) {
                calls += 1
                guard calls == 1 else { return Self.report(.calledTwice, by: propagator, delivery()) }
                await body()
            }
            guard calls == 0 else { return }
            Self.report(.notCalled, by: propagator, delivery())
        }
        await body()
    }

    /// The restoring path of ``withContext(_:_:_:)``, out of line so that the frames of the
    /// deliveries that have no context do not grow. The body runs once whatever the propagator
    /// does: one it does not call is called afterwards, without the context; a second call
    /// returns at once. Both are reported (debug builds).
    @inline(never)
    private static func restore<R>(_ context: CapturedContext, _ delivery: EventContextDelivery, _ body: () -> R) -> R {
        var result: R?
        var calls = 0
        context.propagator.restore(context.value, for: delivery) {
            calls += 1
            guard calls == 1 else { return report(.calledTwice, by: context.propagator, delivery) }
            result = body()
        }
        if let result { return result }
        report(.notCalled, by: context.propagator, delivery)
        return body()
    }

    /// How a propagator broke the rule of calling its body exactly once.
    enum BodyMisuse {
        /// `restore` returned without calling its body: the bus called it afterwards.
        case notCalled
        /// The body was called a second time: that call returned at once.
        case calledTwice
    }

    /// Reports a propagator's misuse of its body on the bus's diagnostics (standard error, debug
    /// builds only): the delivery itself ran once.
    private static func report(
        _ misuse: BodyMisuse, by propagator: any EventContextPropagator, _ delivery: EventContextDelivery
    ) {
        let what =
            switch misuse {
            case .notCalled: "did not call its body for \(delivery): the bus called it afterwards, without the context"
            case .calledTwice: "called its body twice for \(delivery): the second call did nothing"
            }
        Diagnostics.writeInDebugBuilds(
            "EventBus: the context propagator \(String(reflecting: type(of: propagator))) \(what) (call it exactly once)"
        )
    }
}
