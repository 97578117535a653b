import Testing

@testable import EventBus

/// A dispatch stepped by hand, as the core's loop steps it, with no bus, no lock and no thread: the
/// registry begins it and advances it a chunk at a time; each chunk is delivered and checked. The
/// dispatch is wide (100 subscriptions of the event over three levels, keyed and unkeyed, and
/// monitors) and fans out to two supertypes, and a handler stops it part-way.
@Suite("Registry: a wide dispatch stepped phase by phase", .offThePool)
struct DispatchStateMachineTests {
    protocol Shape: Sendable { var side: Int { get } }
    protocol Tagged: Sendable { var tag: String { get } }

    struct Square: Event, Shape, Tagged, DeliveredAsSupertypes {
        let side: Int
        var tag: String { "square" }
        var eventType: String? { "k" }
        static let supertypes: [Supertype<Self>] = [.as((any Shape).self) { $0 }, .as((any Tagged).self) { $0 }]
    }

    /// What one chunk held: the phase and subject the registry left the dispatch in, and the
    /// labels of the subscriptions delivered to.
    struct Step: Equatable {
        let phase: Dispatch.Phase
        let subject: UInt8
        let labels: [String]
    }

    /// A registry and the core that makes the nodes (never locked here: the registry is driven
    /// directly). Each handler appends its label to `log`.
    final class Machine {
        var registry = Registry(clock: .system)
        let core = BusCore(clock: .system)
        let log = Shared<[String]>([])

        deinit {
            registry.removeAll()
            settle()
        }

        func settle() {
            var after = registry.takeAfterUnlock()
            core.perform(&after)
        }

        @discardableResult
        func subscribe<E: Sendable>(
            _: E.Type, _ label: String, key: String? = nil, priority: EventPriority = .normal,
            monitor: Bool = false, stops: Bool = false
        ) -> SubscriptionHandle? {
            var traits = SubscriptionTraits()
            traits.priority = priority
            traits.isMonitor = monitor
            let log = log
            let body: Body<E> =
                stops
                ? .immediate(
                    .general { _, _ in
                        log.append(label)
                        return .stop
                    })
                : .immediate(.event { _ in log.append(label) })
            let primary = core.makeNodes(
                keys: SubscriptionKeys(key.map { [$0] } ?? []), body: body, traits: traits, owner: nil,
                callSite: CallSite(fileID: #fileID, line: #line))
            defer { settle() }
            return registry.subscribe(primary, of: E.self, traits: traits, bus: nil)
        }

        /// Steps a dispatch of `event` to its end; returns each chunk delivered, and the dispatch
        /// as it ended.
        func step(_ event: Square, key: String?) -> (steps: [Step], ended: Dispatch) {
            let request = DispatchRequest(bus: nil)
            return withUnsafeTemporaryAllocation(
                of: Unmanaged<SubscriptionNode>.self, capacity: Dispatch.firstChunkCapacity
            ) { small in
                withUnsafeTemporaryAllocation(of: Unmanaged<SubscriptionNode>.self, capacity: Dispatch.chunkCapacity) {
                    large in
                    withUnsafePointer(to: event) { event in
                        var dispatch = Dispatch(request, chunk: small)
                        let start = registry.beginDispatch(event, key: key, request, ticks: 1, &dispatch)
                        settle()
                        guard case .subscribersAndSupertypes(let home) = start.route else {
                            Issue.record("route \(start.route)")
                            return ([], dispatch)
                        }
                        let subjects = home.bucket.supertypes!.subjects(home: home)
                        var steps: [Step] = []
                        var rounds = 0
                        while dispatch.count > 0 || dispatch.phase != .done {
                            rounds += 1
                            guard rounds < 1_000 else {
                                Issue.record("the dispatch did not end")
                                break
                            }
                            if dispatch.count > 0 {
                                let before = log.value.count
                                let address = subjects.address(of: dispatch.subject, event: UnsafeRawPointer(event))
                                let dead = dispatch.deliverChunk(address)
                                #expect(dead == 0)
                                let labels = Array(log.value[before...])
                                steps.append(Step(phase: dispatch.phase, subject: dispatch.subject, labels: labels))
                                if dispatch.isRetained {
                                    dispatch.endChunk()
                                    break
                                }
                            }
                            let next = dispatch.cursor != nil && !dispatch.isLargeChunk ? large : nil
                            registry.advanceDispatch(&dispatch, key: key, subjects: subjects, into: next)
                            settle()
                        }
                        return (steps, dispatch)
                    }
                }
            }
        }
    }

    @Test("100 subscribers, two supertypes, monitors and a stop: each phase in order, one subject per chunk")
    func wideDispatchWithSupertypesMonitorsAndStop() {
        let machine = Machine()
        // The event's own: 30 high keyed, 30 high unkeyed, 20 normal unkeyed (the 10th stops), 10 low,
        // 10 monitors.
        for i in 0..<30 { machine.subscribe(Square.self, "high k \(i)", key: "k", priority: .high) }
        for i in 0..<30 { machine.subscribe(Square.self, "high \(i)", priority: .high) }
        for i in 0..<20 { machine.subscribe(Square.self, "normal \(i)", stops: i == 9) }
        for i in 0..<10 { machine.subscribe(Square.self, "low \(i)", priority: .low) }
        for i in 0..<10 { machine.subscribe(Square.self, "monitor \(i)", monitor: true) }
        // The supertypes': handlers (never reached: the dispatch stops first) and monitors.
        for i in 0..<5 { machine.subscribe((any Shape).self, "shape \(i)") }
        for i in 0..<3 { machine.subscribe((any Shape).self, "shape monitor \(i)", monitor: true) }
        for i in 0..<2 { machine.subscribe((any Tagged).self, "tagged monitor \(i)", key: "k", monitor: true) }
        machine.subscribe((any Tagged).self, "tagged other key", key: "other", monitor: true)

        let (steps, ended) = machine.step(Square(side: 2), key: "k")

        let delivered = steps.flatMap(\.labels)
        let expected =
            (0..<30).map { "high k \($0)" } + (0..<30).map { "high \($0)" } + (0..<10).map { "normal \($0)" }
            + (0..<10).map { "monitor \($0)" } + (0..<3).map { "shape monitor \($0)" }
            + (0..<2).map { "tagged monitor \($0)" }
        #expect(delivered == expected)
        // The first chunk is the dispatch's own (4), then chunks of 32; a chunk never mixes subjects.
        #expect(steps.first?.labels.count == Dispatch.firstChunkCapacity)
        #expect(steps.allSatisfy { $0.labels.count <= Dispatch.chunkCapacity })
        for step in steps {
            let own = step.labels.allSatisfy { !$0.hasPrefix("shape") && !$0.hasPrefix("tagged") }
            #expect(step.subject == 0 ? own : !own)
        }
        // The phases in order: own handlers, (supertypes' handlers skipped after the stop), own
        // monitors, then each supertype's monitors.
        let phases = steps.map(\.phase)
        #expect(phases == phases.sorted { $0.rawValue < $1.rawValue })
        #expect(!phases.contains(.supertypeHandlers))
        #expect(steps.filter { $0.phase == .supertypeMonitors }.map(\.subject) == [1, 2])
        #expect(ended.phase == .done && ended.isStopped)
        #expect(ended.reached == expected.count)
        print(
            "dispatch stepped: \(steps.count) chunks, \(delivered.count) deliveries, phases \(Set(phases).map { "\($0)" }.sorted())"
        )
    }

    @Test("Without a stop, the supertypes' handlers come after the event's own, before any monitor")
    func supertypesHandlersBeforeMonitors() {
        let machine = Machine()
        for i in 0..<6 { machine.subscribe(Square.self, "own \(i)") }
        machine.subscribe(Square.self, "own monitor", monitor: true)
        for i in 0..<3 { machine.subscribe((any Shape).self, "shape \(i)") }
        machine.subscribe((any Tagged).self, "tagged", priority: .low)
        machine.subscribe((any Shape).self, "shape monitor", monitor: true)

        let (steps, ended) = machine.step(Square(side: 1), key: nil)

        #expect(
            steps.flatMap(\.labels)
                == (0..<6).map { "own \($0)" } + [
                    "shape 0", "shape 1", "shape 2", "tagged", "own monitor", "shape monitor",
                ])
        #expect(steps.map(\.phase).contains(.supertypeHandlers))
        #expect(ended.phase == .done && !ended.isStopped && ended.reached == 12)
    }

    @Test("Every node a chunk pinned is unpinned by the next advance: ended during the dispatch, it is unlinked then")
    func pinsAreReleased() {
        let machine = Machine()
        var handles: [SubscriptionHandle] = []
        for i in 0..<40 { handles.append(machine.subscribe(Square.self, "own \(i)")!) }
        // Its own subscribers only: no supertypes' phases.
        let request = DispatchRequest(bus: nil, asSupertypes: false)
        withUnsafeTemporaryAllocation(of: Unmanaged<SubscriptionNode>.self, capacity: Dispatch.firstChunkCapacity) {
            chunk in
            withUnsafePointer(to: Square(side: 3)) { event in
                var dispatch = Dispatch(request, chunk: chunk)
                _ = machine.registry.beginDispatch(event, key: nil, request, ticks: 1, &dispatch)
                machine.settle()
                #expect(dispatch.count == 4 && !dispatch.isRetained && dispatch.cursor != nil)
                // Ended while pinned: still linked (the dispatch holds it) until the advance.
                let ended = machine.registry.end(handles[1], reason: .disposed)
                #expect(ended)
                let bucket = dispatch.bucket!.takeUnretainedValue()
                #expect(bucket.linkedCount == 40)
                machine.registry.advanceDispatch(&dispatch, key: nil, subjects: nil)
                machine.settle()
                #expect(bucket.linkedCount == 39)
                // The rest, a chunk of 4 at a time in this small buffer, until done.
                while dispatch.phase != .done || dispatch.count > 0 {
                    if dispatch.isRetained { break }
                    machine.registry.advanceDispatch(&dispatch, key: nil, subjects: nil)
                    machine.settle()
                }
                if dispatch.isRetained { dispatch.endChunk() }
            }
        }
        for handle in handles { _ = machine.registry.end(handle, reason: .disposed) }
        machine.settle()
        #expect(machine.registry.subscriptionCount == 0)
    }
}
