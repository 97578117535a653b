/// The owner a subscription's handler is called with, as the maker's `Owner`: the bus only ever
/// passes back the live owner the subscription was made with (owned subscriptions are never called
/// without one), so the cast cannot fail.
// Unsafe: a checked cast would be a runtime call on every owner-bound delivery; the invariant above
// (the node holds only the maker's `Owner`, and calls only while it is alive) makes it exact.
@inline(__always)
func passedOwner<Owner: AnyObject>(_ owner: AnyObject?) -> Owner {
    unsafeDowncast(owner.unsafelyUnwrapped, to: Owner.self)
}
