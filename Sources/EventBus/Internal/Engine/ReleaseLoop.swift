internal import _EventBusShims

/// Lets go of the references a bus operation gave up, after unlocking, so that the deinits this
/// runs never nest inside one another however many there are.
///
/// A deinit may call the bus again: a handler's captured `DisposeBag` disposes its tokens, an
/// owner-bound stream's feed ends its subscription. That call's own share of the sweep may reclaim
/// the next subscription whose owner is gone and let go of it, whose deinit calls the bus again,
/// and so on: released where they were let go of, a run of N such subscriptions would nest N deep
/// and overflow the stack (at about 12,000 on an 8 MiB main thread, 600 on a 512 KiB one). So the
/// first drop on a thread releases, then loops over what was dropped meanwhile: a drop made while
/// it runs (on the same thread, by a deinit it ran) joins the loop's list and is released once the
/// current release has returned. The stack then stays as deep as one release, whatever the run.
///
/// Each thread has its own loop (a thread-local slot in the shim): nothing is shared, no lock is
/// taken. Releases still happen on the thread that let go, before its outermost drop returns (so
/// an owner that must be released on the main queue still is). The list is allocated only when a
/// drop nests, and freed when its loop ends.
enum ReleaseLoop {
    /// Marks the slot of a thread whose loop runs and has nothing queued (no list allocated).
    @inline(__always)
    // unsafelyUnwrapped: the bit pattern 1 is not null, so the pointer always exists.
    private static var running: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 1).unsafelyUnwrapped }

    /// Releases `references` (anything holding references: a node, a tuple, an array) now, or, if
    /// this thread is already releasing for a bus, when its loop gets to them (before its outermost
    /// drop returns). No lock may be held.
    @inline(__always)
    static func drop<References>(_ references: consuming References) {
        let slot = eventbus_release_loop_slot()!
        guard slot.pointee == nil else {
            queue(references, in: slot)
            return
        }
        slot.pointee = running
        _ = consume references
        if slot.pointee != running { drain(slot) }
        slot.pointee = nil
    }

    /// Adds `references` to the list of the loop running on this thread.
    /// Generic, so that its callers pass `references` as they hold them: boxed in an `Any` here, not
    /// in their frames (a dispatch's is on the stack while handlers run).
    @inline(never)
    private static func queue<References>(
        _ references: consuming References, in slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) {
        if slot.pointee == running {
            let list = UnsafeMutablePointer<[Any]>.allocate(capacity: 1)
            list.initialize(to: [])
            slot.pointee = UnsafeMutableRawPointer(list)
        }
        slot.pointee!.assumingMemoryBound(to: [Any].self).pointee.append(references as Any)
    }

    /// Releases what the loop's list holds, one at a time (each release may add more), then frees
    /// the list.
    @inline(never)
    private static func drain(_ slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        let list = slot.pointee!.assumingMemoryBound(to: [Any].self)
        // The element is moved out of the list before it is released: a release that adds to the
        // list does not overlap an access to it.
        while let next = list.pointee.popLast() { _ = consume next }
        list.deinitialize(count: 1)
        list.deallocate()
    }
}
