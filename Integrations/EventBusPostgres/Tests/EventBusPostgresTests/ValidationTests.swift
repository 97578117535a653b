import ClusterSupport
import EventBus
import EventBusPostgres
import PostgresNIO
import Testing

/// Names checked without a database (nothing is opened before run()).
@Suite("Validation: channel and wire names")
struct ValidationTests {
    static let url = DatabaseURL("postgres://nobody@127.0.0.1:1/none")!

    static func bridge(_ channel: String, bus: EventBus = EventBus()) throws -> PostgresEventBridge {
        try PostgresEventBridge(
            bus: bus, listenConfiguration: url.connectionConfiguration(applicationName: "validation"),
            client: PostgresClient(configuration: url.clientConfiguration()), channel: channel)
    }

    @Test(
        "invalid channel names are refused at init",
        arguments: [
            "", "App", "1abc", "a-b", "a b", "a\"b", "x\"; DROP TABLE t; --", "é", String(repeating: "a", count: 64),
        ])
    func invalidChannel(_ name: String) {
        #expect(throws: PostgresEventBridgeError.self) { try Self.bridge(name) }
    }

    @Test(
        "valid channel names are accepted",
        arguments: ["a", "_", "app_events", "a1_", String(repeating: "a", count: 63)])
    func validChannel(_ name: String) throws {
        #expect(try Self.bridge(name).channel == name)
    }

    @Test("invalid, taken and second wire names are refused and reported; the same pair again is fine")
    func wireNames() async throws {
        struct First: Event, Codable {}
        struct Second: Event, Codable {}
        let bus = EventBus()
        let issues = Recorder(BridgeIssue.self, on: bus)
        let bridge = try Self.bridge("app_events", bus: bus)
        bridge.register(First.self, as: "first.v1")
        bridge.register(First.self, as: "first.v1")  // the same pair: nothing to report
        bridge.register(First.self, as: "first.v2")  // a second name for First
        bridge.register(Second.self, as: "first.v1")  // taken
        bridge.register(Second.self, as: "")
        bridge.register(Second.self, as: "with space")
        bridge.register(Second.self, as: #"quote""#)
        bridge.register(Second.self, as: String(repeating: "n", count: 129))
        #expect(await issues.wait(forCount: 6))
        try await Task.sleep(for: .milliseconds(100))
        #expect(issues.events.count == 6)
        #expect(
            issues.events.allSatisfy { if case .registrationRefused = $0 { true } else { false } })
    }
}
