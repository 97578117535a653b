import Testing

@_spi(Integrations) @testable import EventBus

/// What a delivery style declares about stopping is what its `handle` does: on each style that
/// offers `handle` (``StoppingDelivery``: the bus's synchronous makers and a main-actor node's), with
/// each owner kind, throwing or not, `.stop` ends the dispatch for the handlers after it and not for
/// the monitors, and a thrown error counts as `.continue`.
@Suite("Stopping styles: each handle shape stops the dispatch it runs in")
@MainActor
struct StoppingStylesTests {
    enum Style: CaseIterable { case synchronous, mainActorNode }
    enum Form: CaseIterable { case returns, throwsAfterDeciding }

    final class Owner: Sendable {}
    struct Failure: Error {}

    @Test(
        "handle { } returns .stop: the later handlers miss the event, monitors see it; a throw continues",
        arguments: Style.allCases, [false, true])
    func stopOnEachShape(style: Style, owned: Bool) {
        for form in Form.allCases {
            let seen = Shared<[String]>([])
            let owner = Owner()
            let parent = MainActorEventNode(name: "parent")
            let child = MainActorEventNode(name: "child")
            child.mount(on: parent)
            let bus = style == .synchronous ? EventBus() : child.node.bus
            var tokens = [EventToken]()
            // Stops "halt"; for "fail" it throws instead of deciding (which counts as `.continue`).
            let decide: @Sendable (Chat) throws -> EventPropagation = { event in
                seen.append("subject \(event.text)")
                if form == .throwsAfterDeciding, event.text == "fail" { throw Failure() }
                return event.text == "halt" || event.text == "fail" ? .stop : .continue
            }
            switch (style, owned) {
            case (.synchronous, false): tokens.append(bus.on(Chat.self).priority(.high).handle { try decide($0) })
            case (.synchronous, true):
                tokens.append(
                    bus.on(Chat.self).priority(.high).freeWith(owner).handle { _, event in try decide(event) })
            case (.mainActorNode, false): tokens.append(child.on(Chat.self).priority(.high).handle { try decide($0) })
            case (.mainActorNode, true):
                tokens.append(
                    child.on(Chat.self).priority(.high).freeWith(owner).handle { _, event in try decide(event) })
            }
            tokens.append(bus.on(Chat.self).next { seen.append("later \($0.text)") })
            tokens.append(bus.on(Chat.self).monitor().next { seen.append("monitor \($0.text)") })
            tokens.append(parent.on(Chat.self).next { seen.append("parent \($0.text)") })

            let label = "\(style)\(owned ? " owned" : "") \(form)"
            for text in ["go", "halt", "fail"] {
                if style == .synchronous { bus.dispatch(Chat(text: text)) } else { child.postNow(Chat(text: text)) }
            }
            var expected = ["subject go", "later go", "monitor go"]
            if style == .mainActorNode { expected.append("parent go") }
            expected += ["subject halt", "monitor halt", "subject fail"]
            if form == .throwsAfterDeciding {
                expected += ["later fail", "monitor fail"]
                if style == .mainActorNode { expected.append("parent fail") }
            } else {
                expected.append("monitor fail")
            }
            #expect(seen.value == expected, "\(label)")
            for token in tokens { token.dispose() }
            withExtendedLifetime(owner) {}
        }
    }
}
