extension EventNode {
    /// Registers a synchronous answerer for requests of type `type` reaching this node, and
    /// returns its token.
    ///
    /// A request (`request(_:)`) asks the answerers of its route in order — this node's in
    /// registration order, then the parent's, and so on — until one returns
    /// ``Answer/answer(_:)``; ``Answer/pass`` lets the next one answer. The answerer runs on the
    /// requesting thread, with no lock held; an error it throws is thrown by `request`. Disposing
    /// the token, or deallocating the node, ends it.
    ///
    /// ```swift
    /// let root = EventNode(name: "Root")
    /// let token = root.answer(FetchChannelID.self) { _ in .answer("channel-2") }
    /// ```
    public func answer<R: Request>(
        _ type: R.Type, file: StaticString = #fileID, line: UInt = #line,
        _ answerer: @escaping @Sendable (R) throws -> Answer<R.Response>
    ) -> EventToken {
        let sequence = AnswerSequence.next()
        return registerAnswerer(R.self, file: file, line: line) { slot in
            guard sequence > slot.after else { return .continue }
            do {
                switch try answerer(slot.request) {
                case .answer(let response):
                    slot.state = .answered(response)
                    return .stop
                case .pass:
                    return .continue
                }
            } catch {
                slot.state = .failed(error)
                return .stop
            }
        }
    }

    /// Registers an `async` answerer for requests of type `type` reaching this node, and returns
    /// its token.
    ///
    /// As the synchronous `answer`, but only `try await request(_:)` can wait for it: the
    /// synchronous `request(_:)` that meets it before any answer throws
    /// ``ChainRequestError/asyncAnswerer(request:route:atDepth:)`` rather than skip it. It runs in
    /// the requesting task; the answerers after it are asked only if it returns ``Answer/pass``.
    ///
    /// ```swift
    /// let root = EventNode(name: "Root")
    /// let token = root.answer(Search.self) { search async in
    ///     .answer(["\(search.text)-1", "\(search.text)-2"])
    /// }
    /// ```
    public func answer<R: Request>(
        _ type: R.Type, file: StaticString = #fileID, line: UInt = #line,
        _ answerer: @escaping @Sendable (R) async throws -> Answer<R.Response>
    ) -> EventToken {
        let sequence = AnswerSequence.next()
        return registerAnswerer(R.self, file: file, line: line) { slot in
            guard sequence > slot.after else { return .continue }
            slot.state = .async(sequence: sequence, answer: answerer)
            return .stop
        }
    }

    /// Registers `body` as a synchronous subscription to `R`'s answer slots on this node's registry.
    private func registerAnswerer<R: Request>(
        _: R.Type, file: StaticString, line: UInt, _ body: @escaping @Sendable (AnswerSlot<R>) -> EventPropagation
    ) -> EventToken {
        SubscriberMaker<AnswerSlot<R>, Never, EventDelivery.Synchronous>(bus: bus).handle(file: file, line: line, body)
    }

    /// Asks `request` up the chain and returns the first answer: this node's answerers first, then
    /// each ancestor's, in route order.
    ///
    /// Synchronous, on the calling thread; the route is fixed when it starts. Throws
    /// ``ChainRequestError/unanswered(request:route:)`` when no answerer answered,
    /// ``ChainRequestError/asyncAnswerer(request:route:atDepth:)`` when an `async` answerer comes
    /// first (use `try await request(_:)`), or the error an answerer threw. Cost: O(depth) plus
    /// the answerers asked; no allocation unless it throws.
    ///
    /// ```swift
    /// let root = EventNode(name: "Root")
    /// let cell = EventNode(name: "Cell")
    /// cell.mount(on: root)
    /// let token = root.answer(FetchChannelID.self) { _ in .answer("channel-2") }
    /// let id = try cell.request(FetchChannelID())   // "channel-2"
    /// ```
    public func request<R: Request>(_ request: R) throws -> R.Response {
        let slotType = ObjectIdentifier(AnswerSlot<R>.self)  // a run-time look-up: once per request
        return try ChainRoute.with(from: self) { route in
            for (depth, node) in route.enumerated() {
                switch AnswerSlot.ask(request, at: node, slotType: slotType, after: 0) {
                case .none: continue
                case .answered(let response): return response
                case .failed(let error): throw error
                case .async:
                    throw ChainRequestError.asyncAnswerer(
                        request: String(reflecting: R.self), route: route.map(\.name), atDepth: depth)
                }
            }
            throw ChainRequestError.unanswered(request: String(reflecting: R.self), route: route.map(\.name))
        }
    }

    /// Asks `request` up the chain, awaiting `async` answerers, and returns the first answer.
    ///
    /// As the synchronous `request(_:)`, except that an `async` answerer is awaited in turn (in
    /// the calling task) and the answerers after it are asked if it passes. The route is fixed
    /// when it starts. Throws ``ChainRequestError/unanswered(request:route:)`` when no answerer
    /// answered, or the error an answerer threw. It runs on the caller's actor (`isolation`: leave
    /// it to its default), so synchronous answerers run there, as with the synchronous form (a
    /// ``MainActorEventNode``'s run on the main actor).
    ///
    /// ```swift
    /// let root = EventNode(name: "Root")
    /// let cell = EventNode(name: "Cell")
    /// cell.mount(on: root)
    /// let token = root.answer(Search.self) { search async in .answer([search.text]) }
    /// let hits = try await cell.request(Search(text: "x"))   // ["x"]
    /// ```
    public func request<R: Request>(
        _ request: R, isolation: isolated (any Actor)? = #isolation
    ) async throws -> R.Response {
        // The route is kept in an array: it lives across suspensions.
        let route = ChainRoute.with(from: self) { Array($0) }
        let slotType = ObjectIdentifier(AnswerSlot<R>.self)  // a run-time look-up: once per request
        for node in route {
            var after: UInt64 = 0
            while true {
                switch AnswerSlot.ask(request, at: node, slotType: slotType, after: after) {
                case .none: break
                case .answered(let response): return response
                case .failed(let error): throw error
                case .async(let sequence, let answerer):
                    switch try await answerer(request) {
                    case .answer(let response): return response
                    case .pass: after = sequence
                    }
                    continue
                }
                break
            }
        }
        throw ChainRequestError.unanswered(request: String(reflecting: R.self), route: route.map(\.name))
    }
}
