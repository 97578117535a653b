import EventBus
import EventBusTesting
import XCTest

/// The same kit under XCTest: thrown errors fail the test with their message.
final class EventBusTestingXCTests: XCTestCase {
    func testRecordAndExpect() async throws {
        let bus = EventBus()
        let logins = bus.record(LoginEvent.self)
        let login = bus.expectation(LoginEvent.self) { $0.userID == "42" }
        LoginService(bus: bus).logIn("42")
        let event = try await login.value(timeout: .seconds(1))
        XCTAssertEqual(event.userID, "42")
        XCTAssertEqual(logins.events, [LoginEvent(userID: "42")])
        try bus.requireNoLiveSubscriptions()
        try bus.requireNoHandlerErrors()
    }

    func testTimeoutIsAThrownError() async {
        let bus = EventBus()
        do {
            _ = try await bus.expect(LogoutEvent.self, timeout: .milliseconds(20))
            XCTFail("no error thrown")
        } catch {
            XCTAssertTrue("\(error)".contains("no event of that type was dispatched"), "\(error)")
        }
    }
}
