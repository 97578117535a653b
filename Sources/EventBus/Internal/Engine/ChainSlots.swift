/// What a post hands an interceptor through the node's subscription registry: the event, in the
/// posting frame, which the interceptor may replace.
///
/// Interceptors are registered as synchronous `handle` subscriptions to this type on the node's
/// registry (so registration order, tokens, bags and the dispose guarantee are the bus's), and a
/// post dispatches one of these per node: no allocation.
struct InterceptedEvent<E: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: the pointer is only dereferenced by interceptors, which are synchronous
    // (`.immediate` bodies), on the posting thread, during the post whose frame it points into.
    let event: UnsafeMutablePointer<E>
}

extension InterceptedEvent: ChainSlotType {
    static var slotName: String { "intercept(\(String(reflecting: E.self)))" }
}

/// What a request hands its answerers through a node's subscription registry: the request, where to
/// put the answer, and from which answerer on to ask (after an async answerer passed).
struct AnswerSlot<R: Request>: @unchecked Sendable {
    // @unchecked Sendable: as InterceptedEvent, answerers are synchronous `.immediate` bodies that
    // dereference the pointers on the requesting thread, during the request that made them.
    let request: UnsafePointer<R>
    let state: UnsafeMutablePointer<AnswerState<R>>
    /// Answerers with a sequence number up to this one were asked already.
    let after: UInt64
}

extension AnswerSlot: ChainSlotType {
    static var slotName: String { "answer(\(String(reflecting: R.self)))" }
}

/// Where a request stands after a node's answerers ran.
enum AnswerState<R: Request> {
    /// No answerer of the node answered.
    case none
    case answered(R.Response)
    case failed(any Error)
    /// An async answerer came first: the synchronous request throws, the async one awaits it.
    case async(sequence: UInt64, answer: @Sendable (R) async throws -> Answer<R.Response>)
}

/// Answerers' sequence numbers: registration order across a node's answerers (which all sit at the
/// same level of its registry, so they are asked in this order).
enum AnswerSequence {
    private static let counter = Locked<UInt64>(0)

    static func next() -> UInt64 {
        counter.withLock { value in
            value += 1
            return value
        }
    }
}
