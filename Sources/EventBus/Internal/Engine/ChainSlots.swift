/// What a post hands an interceptor through the node's subscription registry: the event, at the
/// post's address, which the interceptor may replace.
///
/// Interceptors are registered as synchronous `handle` subscriptions to this type on the node's
/// registry (so registration order, tokens, bags and the dispose guarantee are the bus's), and a
/// post dispatches one of these per node: no allocation.
struct InterceptedEvent<E: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: the address is only dereferenced by interceptors, which are synchronous
    // (`.immediate` bodies), on the posting thread, during the post whose event it points to.
    private let address: UnsafeMutablePointer<E>

    /// A slot for the event at `address`, which must outlive every interceptor's call.
    init(at address: UnsafeMutablePointer<E>) {
        self.address = address
    }

    /// The event the post carries: read in place, and replaced by an interceptor that forwards
    /// another value.
    var event: E {
        unsafeAddress { UnsafePointer(address) }
        nonmutating unsafeMutableAddress { address }
    }
}

extension InterceptedEvent: ChainSlotType {
    static var slotName: String { "intercept(\(String(reflecting: E.self)))" }
}

/// What a request hands its answerers through a node's subscription registry: the request, where to
/// put the answer, and from which answerer on to ask (after an async answerer passed).
struct AnswerSlot<R: Request>: @unchecked Sendable {
    // @unchecked Sendable: as InterceptedEvent, answerers are synchronous `.immediate` bodies that
    // dereference the addresses on the requesting thread, during the request that made them.
    private let requestAddress: UnsafePointer<R>
    private let stateAddress: UnsafeMutablePointer<AnswerState<R>>
    /// Answerers with a sequence number up to this one were asked already.
    let after: UInt64

    /// The request asked, read in place.
    var request: R {
        unsafeAddress { requestAddress }
    }

    /// Where the request stands: an answerer sets it when it answers, fails or defers to `async`.
    var state: AnswerState<R> {
        unsafeAddress { UnsafePointer(stateAddress) }
        nonmutating unsafeMutableAddress { stateAddress }
    }

    /// Asks `node`'s answerers whose sequence number is above `after` (`slotType`: `AnswerSlot<R>`,
    /// looked up once per request by the caller): one dispatch of a slot on the node's registry,
    /// the request and its state at addresses in this frame (no allocation).
    static func ask(
        _ request: R, at node: ChainRoute.Stop, slotType: ObjectIdentifier, after: UInt64
    ) -> AnswerState<R> {
        var state = AnswerState<R>.none
        guard node.bus.core.chainInterest(slotType, slotType).first else { return state }
        withUnsafePointer(to: request) { request in
            withUnsafeMutablePointer(to: &state) { state in
                withUnsafePointer(to: AnswerSlot(requestAddress: request, stateAddress: state, after: after)) {
                    _ = node.bus.core.post(at: $0, key: nil)
                }
            }
        }
        return state
    }
}

extension AnswerSlot: ChainSlotType {
    static var slotName: String { "answer(\(String(reflecting: R.self)))" }
}
