/// The bus's tracer and handlers: set under the lock, the replaced ones released after unlocking,
/// and called with no lock held.
extension BusCore {
    /// The bus's tracer. Like the handlers below, the one it replaces is swapped out under the lock
    /// and released after unlocking, through ``ReleaseLoop`` (the deinits of what it captured may
    /// call the bus).
    var tracer: (@Sendable (TraceRecord) -> Void)? {
        get { withRegistry { registry in registry.tracer } }
        set { ReleaseLoop.drop(withRegistry { registry in registry.replaceTracer(with: newValue) }) }
    }

    /// Hands `record` to the tracer, if there is one (read under the lock, called outside it).
    func trace(_ record: @autoclosure () -> TraceRecord) {
        guard let tracer else { return }
        tracer(record())
    }

    /// The bus's dead-event handler.
    var deadEventHandler: (@Sendable (DeadEvent) -> Void)? {
        get { withRegistry { registry in registry.deadEventHandler } }
        set { ReleaseLoop.drop(withRegistry { registry in registry.replaceDeadEventHandler(with: newValue) }) }
    }

    /// The bus's handler-error handler.
    var handlerErrorHandler: (@Sendable (HandlerError) -> Void)? {
        get { withRegistry { registry in registry.handlerErrorHandler } }
        set { ReleaseLoop.drop(withRegistry { registry in registry.replaceHandlerErrorHandler(with: newValue) }) }
    }

    /// Hands a dead event to the dead-event handler and to the tracer, each if it is set (both read
    /// in one lock acquisition, called after unlocking). Only a dispatch whose `reports` has bit 1
    /// calls this, so a bus with neither never gets here. (Only events are dispatched with a bus, so
    /// the cast never fails.)
    func reportDead<E: Sendable>(_ event: E, key: String?) {
        let (handler, tracer) = withRegistry { registry in (registry.deadEventHandler, registry.tracer) }
        guard handler != nil || tracer != nil, let event = event as? any Event else { return }
        let dead = DeadEvent(event: event, key: key, type: E.self)
        handler?(dead)
        tracer?(.deadEvent(dead))
    }

    /// Hands a dispatch's record to the tracer.
    func traceDispatch<E>(_: E.Type, key: String?, _ tally: Tally, sticky: StickyDispatch?) {
        trace(
            .dispatched(
                TraceRecord.Dispatched(
                    type: E.self, key: key, delivered: tally.reached - tally.enqueued,
                    enqueued: tally.enqueued, isStopped: tally.isStopped, sticky: sticky?.policy)))
    }

    /// Hands an error thrown by `node`'s handler to the error handler (no lock held by the caller).
    func report(_ error: HandlerError, from node: SubscriptionNode) {
        let (handler, firstForNode, traces, evicted) = withRegistry { registry in
            defer { node.printedError = true }
            let evicted = registry.noteHandlerError(error)
            return (registry.handlerErrorHandler, !node.printedError, registry.hasTracer, evicted)
        }
        ReleaseLoop.drop(consume evicted)
        if let handler {
            handler(error)
        } else if firstForNode {
            HandlerError.printInDebugBuilds(error)
        }
        if traces { trace(.handlerError(error)) }
    }
}
