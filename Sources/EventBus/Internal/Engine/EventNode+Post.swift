/// A chain post's walk of its route (``EventNode/post(_:)``): the event at one address for the
/// whole route, so that interceptors change it in place and each node's dispatch borrows it.
extension EventNode {
    /// Delivers `event` along `route`; see ``post(_:)``.
    static func post<E: Event>(_ event: E, along route: UnsafeBufferPointer<ChainRoute.Stop>) -> ChainOutcome {
        var event = event
        // One address for the whole route: interceptors change the event there, handlers read it.
        return withUnsafeMutablePointer(to: &event) { post(at: $0, along: route) }
    }

    /// ``post(_:along:)`` for the event at `event`, which interceptors may change in place.
    private static func post<E: Event>(
        at event: UnsafeMutablePointer<E>, along route: UnsafeBufferPointer<ChainRoute.Stop>
    ) -> ChainOutcome {
        var delivered = 0
        var ending: ChainOutcome?
        // Looked up once: a generic type's metadata is a run-time look-up in unspecialized code.
        let interceptorType = ObjectIdentifier(InterceptedEvent<E>.self)
        let eventType = ObjectIdentifier(E.self)
        for depth in route.indices {
            let core = route[depth].bus.core
            let ended = ending != nil
            let interest = core.chainInterest(interceptorType, eventType)
            var reached = 0
            if interest.first && !ended {
                let interception = withUnsafePointer(to: InterceptedEvent(at: event)) {
                    core.post(at: $0, key: nil)
                }
                if interception.isStopped { ending = .dropped(atDepth: depth, delivered: 0) }
            }
            if interest.second {
                // After a stop or a drop, only the monitors' walk (as a bus dispatch's after a stop).
                let key = event.pointee.routingKey
                let tally = ending == nil ? core.post(at: event, key: key) : core.postToMonitors(at: event, key: key)
                reached = tally.reached
                if ending == nil && tally.isStopped { ending = .stopped(atDepth: depth, delivered: 0) }
            }
            delivered += reached
            if interest.isTraced, let tracer = core.tracer {
                let status = Self.status(ended: ended, ending)
                tracer(.chainHop(Self.hop(E.self, at: route[depth], depth: depth, reached: reached, status)))
            }
        }
        switch ending {
        case .stopped(let depth, _): return .stopped(atDepth: depth, delivered: delivered)
        case .dropped(let depth, _): return .dropped(atDepth: depth, delivered: delivered)
        default: return delivered == 0 ? .unhandled : .delivered(count: delivered)
        }
    }
}
