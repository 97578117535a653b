import Dispatch
import EventBus
import EventBusLogging
import Logging
import Testing

struct Login: Event {
    let userID: String
    var eventType: String? { userID }
}

struct Failure: Error {}

/// A log handler that keeps what it was given.
final class Capture: LogHandler, @unchecked Sendable {
    // @unchecked Sendable: `lines` is only touched under `lock`.
    struct Line {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    private let lock = SerialLock()
    private var stored: [Line] = []
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var lines: [Line] { lock.withLock { stored } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let line = Line(level: event.level, message: "\(event.message)", metadata: event.metadata ?? [:])
        lock.withLock { stored.append(line) }
    }
}

/// A lock without Foundation: a serial queue.
final class SerialLock: Sendable {
    private let queue = DispatchQueue(label: "capture")
    func withLock<T>(_ body: () -> T) -> T { queue.sync(execute: body) }
}

@Suite("EventBusLogTracer")
struct EventBusLogTracerTests {
    @Test("each record becomes one log line at the chosen level, handler errors at .error, with metadata")
    func logsRecords() throws {
        let capture = Capture()
        let logger = Logger(label: "test") { _ in capture }
        let bus = EventBus()
        bus.handlerErrorHandler = { _ in }
        _ = bus.addTracer(EventBusLogTracer(logger: logger, level: .info).tracer)
        let token = bus.on(Login.self).next { _ throws in throw Failure() }
        bus.dispatch(Login(userID: "42"))
        token.dispose()
        let lines = capture.lines
        #expect(lines.map(\.level) == [.info, .error, .info, .info])
        let dispatched = try #require(lines.first { $0.message.hasPrefix("dispatched") })
        #expect(dispatched.metadata["event.key"] == "42")
        #expect(dispatched.metadata["event.delivered"] == "1")
        let error = try #require(lines.first { $0.level == .error })
        #expect(error.metadata["subscription.callSite"]?.description.contains("EventBusLogTracerTests.swift") == true)
        let ended = try #require(lines.last)
        #expect(ended.metadata["subscription.endReason"] == "disposed")
    }

    @Test("every dead event is logged, whether or not the bus has a deadEventHandler, its type module-qualified")
    func logsEveryDeadEvent() {
        let capture = Capture()
        let logger = Logger(label: "test") { _ in capture }
        let bus = EventBus()
        _ = bus.addTracer(EventBusLogTracer(logger: logger, level: .info).tracer)
        bus.dispatch(Login(userID: "1"))
        bus.deadEventHandler = { _ in }
        bus.dispatch(Login(userID: "2"))
        bus.deadEventHandler = nil
        bus.dispatch(Login(userID: "3"))
        let dead = capture.lines.filter { $0.message.hasPrefix("dead event") }
        let name = String(reflecting: Login.self)
        #expect(name == "EventBusLoggingTests.Login")
        #expect(dead.map(\.message) == Array(repeating: "dead event \(name)", count: 3))
        #expect(dead.map { $0.metadata["event.type"] } == Array(repeating: .string(name), count: 3))
        #expect(dead.map { $0.metadata["event.key"] } == ["1", "2", "3"])
        let dispatched = capture.lines.filter { $0.message.hasPrefix("dispatched") }
        #expect(dispatched.allSatisfy { $0.metadata["event.type"] == .string(name) }, "one name for a type everywhere")
    }

    @Test("a chain node's tracer logs each hop with the node, depth and status")
    func logsChainHops() throws {
        let capture = Capture()
        let logger = Logger(label: "test") { _ in capture }
        let root = EventNode(name: "Root")
        let cell = EventNode(name: "Cell")
        cell.mount(on: root)
        let token = root.on(Login.self).handle { _ in .stop }
        _ = root.addTracer(EventBusLogTracer(logger: logger, level: .debug).tracer)
        cell.post(Login(userID: "7"))
        token.dispose()
        let hop = try #require(capture.lines.first { $0.message.hasPrefix("chain hop") })
        #expect(hop.level == .debug)
        #expect(hop.metadata["chain.node"] == "Root")
        #expect(hop.metadata["chain.depth"] == "1")
        #expect(hop.metadata["chain.status"] == "stopped")
        #expect(hop.metadata["event.delivered"] == "1")
    }

    @Test("a level below the logger's builds nothing and logs nothing")
    func respectsTheLevel() {
        let capture = Capture()
        capture.logLevel = .warning
        let logger = Logger(label: "test") { _ in capture }
        let bus = EventBus()
        _ = bus.addTracer(EventBusLogTracer(logger: logger).tracer)
        bus.dispatch(Login(userID: "1"))
        #expect(capture.lines.isEmpty)
    }

    @Test("added beside another tracer, it logs without displacing it, and its removal leaves the other")
    func besideOtherTracers() {
        let capture = Capture()
        let logger = Logger(label: "test") { _ in capture }
        let bus = EventBus()
        let other = Capture()  // what the other tracers saw
        let otherLogger = Logger(label: "other") { _ in other }
        bus.tracer = { _ in otherLogger.info("the app's") }  // the app's own, in the property's slot
        let metrics = bus.addTracer { _ in otherLogger.info("metrics") }  // another integration's
        let logging = bus.addTracer(EventBusLogTracer(logger: logger, level: .info).tracer)
        bus.dispatch(Login(userID: "1"))  // reaches nobody: a dispatch record and a dead event
        #expect(capture.lines.count == 2)
        #expect(
            other.lines.map(\.message) == ["the app's", "metrics", "the app's", "metrics"],
            "the other tracers still ran, in order")
        logging.remove()
        bus.dispatch(Login(userID: "2"))
        #expect(capture.lines.count == 2, "removed: no more lines")
        #expect(other.lines.count == 8)
        metrics.remove()
    }
}
