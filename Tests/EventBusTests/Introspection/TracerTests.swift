import Dispatch
import Testing

@testable import EventBus

@Suite("Tracing: typed records after unlocking", .tags(.stress), .offThePool)
struct TracerTests {
    struct Login: Event { let userID: String }
    struct Failure: Error {}
    final class Screen: Sendable {}

    /// A tracer that keeps every record's description, and the records themselves.
    final class Trace: Sendable {
        let records = Shared<[TraceRecord]>([])
        var lines: [String] { records.value.map(\.description) }
        func install(on bus: EventBus) { bus.tracer = { [records] record in records.withLock { $0.append(record) } } }
    }

    @Test("subscribe, dispatch and dispose each make one record, in order")
    func recordsInOrder() throws {
        let bus = EventBus()
        let trace = Trace()
        trace.install(on: bus)
        let token = bus.on(Login.self).next { _ in }
        let queued = bus.on(Login.self).atQueue(DispatchQueue(label: "q")).next { _ in }
        bus.dispatch(Login(userID: "42"))
        token.dispose()
        queued.dispose()
        let records = trace.records.value
        #expect(records.count == 5)
        guard records.count == 5 else { return }
        guard case .subscribed(let info) = records[0], case .dispatched(let dispatched) = records[2],
            case .ended(let ended) = records[3]
        else {
            Issue.record("unexpected records \(trace.lines)")
            return
        }
        #expect(info.id == token.id)
        #expect(dispatched.delivered == 1 && dispatched.enqueued == 1 && !dispatched.isStopped)
        #expect(dispatched.typeName.hasSuffix("Login"))
        #expect(ended.id == token.id && ended.reason == .disposed)
    }

    @Test("end reasons: disposed, bag disposed, owner gone, bus gone")
    func endReasons() {
        let trace = Trace()
        var bus: EventBus? = EventBus()
        trace.install(on: bus!)
        let bag = DisposeBag()
        bus!.on(Login.self).next { _ in }.disposed(by: bag)
        var screen: Screen? = Screen()
        bus!.on(Login.self).freeWith(screen).next { _, _ in }
        _ = bus!.on(Login.self).next { _ in }
        bag.dispose()
        screen = nil
        bus!.purge()
        bus = nil
        let reasons = trace.records.value.compactMap { record -> TraceRecord.Ended.Reason? in
            if case .ended(let ended) = record { return ended.reason }
            return nil
        }
        #expect(reasons == [.bagDisposed, .ownerGone, .busGone])
    }

    @Test("dead events, stops, sticky dispatches and handler errors are traced")
    func policyRecords() {
        let bus = EventBus()
        bus.handlerErrorHandler = { _ in }
        bus.deadEventHandler = { _ in }
        let trace = Trace()
        trace.install(on: bus)
        bus.dispatch(Login(userID: "nobody"))
        let stopper = bus.on(Login.self).handle { _ in .stop }
        bus.dispatch(Login(userID: "stopped"), sticky: .latest)
        stopper.dispose()
        let thrower = bus.on(Login.self).next { _ throws in throw Failure() }
        bus.dispatch(Login(userID: "fails"))
        thrower.dispose()
        let lines = trace.lines
        #expect(lines.contains { $0.hasPrefix("dead event") })
        #expect(lines.contains { $0.contains("1 delivered, 0 enqueued, stopped, sticky latest") })
        #expect(lines.contains { $0.hasPrefix("handler error") })
    }

    @Test("without a tracer nothing is recorded; removing it stops the records")
    func removable() {
        let bus = EventBus()
        let trace = Trace()
        trace.install(on: bus)
        bus.dispatch(Login(userID: "1"))
        bus.tracer = nil
        bus.dispatch(Login(userID: "2"))
        _ = bus.on(Login.self).next { _ in }
        #expect(trace.records.value.count == 2, "the first dispatch's record and its dead event only")
    }

    @Test("the tracer may call into the bus, from 4 threads dispatching at once")
    func tracerCallsIntoTheBus() {
        let bus = EventBus()
        let dispatched = Shared(0)
        bus.tracer = { [weak bus] record in
            guard case .dispatched = record, let bus else { return }
            _ = bus.subscriptionCount  // takes the lock: would deadlock if the tracer ran under it
            dispatched.increment()
        }
        let token = bus.on(Login.self).next { _ in }
        #expect(
            concurrently(4) { _ in
                for _ in 0..<500 { bus.dispatch(Login(userID: "x")) }
            })
        token.dispose()
        #expect(dispatched.value == 2000)
        print("tracer: 4 threads × 500 dispatches, \(dispatched.value) records, the tracer calling into the bus")
    }
}
