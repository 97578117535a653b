/// The tracers of one bus (or of the bus behind a chain node): the one ``EventConfigurable/tracer``
/// sets and those ``EventConfigurable/addTracer(_:)`` added, and the one closure that calls them
/// all, which the bus's core holds as its only tracer (`BusCore.tracer`), as swift-log's
/// `MultiplexLogHandler` stands for several handlers.
///
/// Every change composes that closure under this set's own lock, then hands it to the core, whose
/// lock is taken inside this one (never the other way round: the core never calls here) and which
/// releases the closure it replaces after unlocking. The closures a change lets go of are released
/// after this lock too, so no deinit of what a tracer captured runs under either lock: what the
/// core releases while this lock is held is only a composition, whose tracers this set (or the
/// change's local) still holds. Changes are serialized by this lock, so the core always ends up
/// with the closure of the last change.
struct TracerSet: Sendable {
    /// What the bus calls with each record.
    typealias Tracer = @Sendable (TraceRecord) -> Void

    /// The tracers, and whether the bus is gone.
    private struct State {
        /// The tracer the `tracer` property sets.
        var primary: Tracer?
        /// The tracers `addTracer(_:)` added, in the order they were added, with their tokens' ids.
        var added: [(id: UInt64, tracer: Tracer)] = []
        /// The id of the next added tracer.
        var nextID: UInt64 = 1
        /// The bus was deallocated: no change reaches its core any more.
        var closed = false

        /// The closure that calls every tracer, the primary first, then the added ones in order;
        /// `nil` with none (so that a dispatch with no tracer pays one load, as before), the tracer
        /// itself with one (a bus with one tracer pays no more than it did).
        var composed: Tracer? {
            let all = (primary.map { [$0] } ?? []) + added.map(\.tracer)
            switch all.count {
            case 0: return nil
            case 1: return all[0]
            default: return { record in for tracer in all { tracer(record) } }
            }
        }
    }

    private let state = Locked(State())
    /// The core whose tracer is the composed closure.
    let core: BusCore

    init(core: BusCore) {
        self.core = core
    }

    /// The tracer the `tracer` property set, if any (not the composed closure).
    var primary: Tracer? { state.withLock { state in state.primary } }

    /// Replaces the `tracer` property's tracer, leaving the added ones.
    func setPrimary(_ tracer: Tracer?) {
        var replaced = tracer
        state.withLock { state in
            guard !state.closed else { return }
            swap(&state.primary, &replaced)
            core.tracer = state.composed
        }
        ReleaseLoop.drop(replaced.take())
    }

    /// Adds `tracer` beside the others; returns its id, or `nil` if the bus is gone.
    func add(_ tracer: @escaping Tracer) -> UInt64? {
        state.withLock { state in
            guard !state.closed else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.added.append((id, tracer))
            core.tracer = state.composed
            return id
        }
    }

    /// Removes the added tracer `id`, if it is still there.
    func remove(_ id: UInt64) {
        let removed = state.withLock { state -> Tracer? in
            guard !state.closed, let index = state.added.firstIndex(where: { $0.id == id }) else { return nil }
            let removed = state.added.remove(at: index).tracer
            core.tracer = state.composed
            return removed
        }
        ReleaseLoop.drop(removed)
    }

    /// Whether the added tracer `id` is gone (removed, or its bus deallocated).
    func isRemoved(_ id: UInt64) -> Bool {
        state.withLock { state in state.closed || !state.added.contains { $0.id == id } }
    }

    /// The bus is being deallocated: forgets every tracer (the core lets go of the composed closure
    /// when it ends its subscriptions), and ignores later changes, a token's removal included.
    func close() {
        let forgotten = state.withLock { state in
            state.closed = true
            defer { (state.primary, state.added) = (nil, []) }
            return (state.primary, state.added)
        }
        ReleaseLoop.drop(forgotten)
    }
}
