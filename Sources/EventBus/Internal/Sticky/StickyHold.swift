/// An `.untilDelivered` event held back (see `StickyStore`) while deliveries that may receive it are
/// under way with no lock held: those of its dispatch, or of a replay that enqueued it. It is what
/// each delivery that a dispatch or a replay enqueues carries, so that it can say, when it runs,
/// whether a handler ran for the event ("received" is decided there, for every mode).
///
/// The first delivery that runs a handler lets go of the event; once every delivery is over and
/// none did, it is kept for the next taker, in its place. Its holder (the dispatch, the replay)
/// ends the hold with what it did itself and how many deliveries it enqueued
/// (`Registry.endHolding`); each enqueued delivery finishes it when it has run or found its
/// subscription ended or its owner gone (`Registry.finishHolding`), before or after that.
final class StickyHold: @unchecked Sendable {
    // @unchecked Sendable: `pending` is only touched under the bus lock; the rest is immutable.

    /// The event type (its bucket's), the key, and the event's sequence in the store.
    let typeID: ObjectIdentifier
    let key: String?
    let sequence: UInt64
    /// The bus whose store keeps the event: an enqueued delivery finishes the hold there.
    let container: BusCore
    /// Under the bus lock: the enqueued deliveries not over yet, plus ``unended`` until the holder
    /// ends the hold (so an enqueued delivery that finishes first never brings it to 0).
    var pending = StickyHold.unended

    /// Above any number of deliveries one dispatch enqueues.
    static let unended = 1 << 48

    init(typeID: ObjectIdentifier, key: String?, sequence: UInt64, container: BusCore) {
        self.typeID = typeID
        self.key = key
        self.sequence = sequence
        self.container = container
    }
}
