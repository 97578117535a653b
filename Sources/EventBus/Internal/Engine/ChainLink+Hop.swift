/// The chain route walk's reads of a link (``ChainRoute``): references handed over retained, as
/// `Unmanaged`, so the walk moves them into its stops without another retain and release.
extension ChainLink {
    /// What a walk reads of a link: its bus and mounted parent, retained for their stops, whether
    /// it has a provided parent, and when its parent last changed.
    struct Hop {
        var bus: Unmanaged<EventBus>?
        var parent: Unmanaged<ChainLink>?
        var providesParent: Bool
        var changed: Int
    }

    /// Reads the ``Hop`` under the link's lock (where the link keeps its bus and parent alive until
    /// they are retained). O(1).
    func hop() -> Hop {
        state.withLock { state in
            Hop(
                bus: state.bus.map { .passRetained($0) }, parent: state.parent.map { .passRetained($0) },
                providesParent: state.providedParent != nil, changed: state.changed)
        }
    }

    /// The node the provided parent returns, its link retained (the closure is asked with no lock
    /// held: user code); `nil` without one.
    var providedParentLink: Unmanaged<ChainLink>? {
        guard let provide = state.withLock(\.providedParent), let node = provide() else { return nil }
        return .passRetained(node.link)
    }
}
