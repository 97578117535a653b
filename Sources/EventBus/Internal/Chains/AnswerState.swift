/// Where a request stands after a node's answerers ran.
enum AnswerState<R: Request> {
    /// No answerer of the node answered.
    case none
    case answered(R.Response)
    case failed(any Error)
    /// An async answerer came first: the synchronous request throws, the async one awaits it.
    case async(sequence: UInt64, answer: @Sendable (R) async throws -> Answer<R.Response>)
}
