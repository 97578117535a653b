// The stack a nested dispatch takes per level (a handler that dispatches again, depth-first):
// the distance between the same local's addresses at two depths, divided by the levels between
// them. Deterministic for a given binary; `check-plain-dispatch.sh` gates it, "Guarantees" states it.

import EventBus

/// An event that carries its depth.
private struct Nested: Event {
    let level: Int
}

/// An owner for the owner-bound handler.
private final class NestedOwner: Sendable {}

/// The address of a local of a frame called from the handler at each depth.
///
/// @unchecked Sendable: written and read by the one thread that dispatches.
private final class Marks: @unchecked Sendable {
    var addresses = [UInt](repeating: 0, count: 64)

    @inline(never)
    func mark(_ level: Int) {
        var local = level
        withUnsafeMutablePointer(to: &local) { addresses[level] = UInt(bitPattern: $0) }
    }
}

/// Bytes of stack per level of nested dispatch to one subscriber, plain (`next { event in }`) or
/// owner-bound (`freeWith(owner).next { owner, event in }`), measured between depths 10 and 40.
func stackPerNestedLevel(ownerBound: Bool) -> Int {
    let (from, to) = (10, 40)
    let bus = EventBus()
    let marks = Marks()
    let owner = NestedOwner()
    let token =
        if ownerBound {
            bus.on(Nested.self).freeWith(owner).next { [unowned bus] _, event in
                marks.mark(event.level)
                if event.level < to { bus.dispatch(Nested(level: event.level + 1)) }
            }
        } else {
            bus.on(Nested.self).next { [unowned bus] event in
                marks.mark(event.level)
                if event.level < to { bus.dispatch(Nested(level: event.level + 1)) }
            }
        }
    bus.dispatch(Nested(level: 1))
    withExtendedLifetime((owner, token)) {}
    return (Int(marks.addresses[from]) - Int(marks.addresses[to])) / (to - from)
}
