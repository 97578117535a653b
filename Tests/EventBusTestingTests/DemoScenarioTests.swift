import Dispatch
import EventBus
import EventBusTesting
import Testing

/// The demo's login story (`swift run EventBusDemo`), tested the way an app would test its own
/// code with EventBusTesting: record what was published, wait for what arrives later, and end
/// with no subscription left behind and no handler error.
@Suite("The demo's scenario, tested with EventBusTesting")
struct DemoScenarioTests {
    @Test("logging in and out publishes one event each, in order, and leaves nothing behind")
    func loginStory() async throws {
        let bus = EventBus()
        let service = LoginService(bus: bus)
        let logins = bus.record(LoginEvent.self)
        let logouts = bus.record(LogoutEvent.self)

        var screen: ProfileScreen? = ProfileScreen(bus: bus)
        service.logIn("alice")
        service.logOut("alice")
        #expect(logins.events == [LoginEvent(userID: "alice")])
        #expect(logouts.events == [LogoutEvent(userID: "alice")])

        let analytics = DispatchQueue(label: "analytics")
        let tracked = Locked<[String]>([])
        let bag = DisposeBag()
        bus.on(LoginEvent.self).atQueue(analytics).next { event in tracked.withLock { $0.append(event.userID) } }
            .disposed(by: bag)
        service.logIn("bob")
        await bus.settle()
        #expect(tracked.withLock { $0 } == ["bob"])

        withExtendedLifetime(screen) {}
        screen = nil
        bag.dispose()
        bus.purge()
        try bus.requireNoLiveSubscriptions()
        try bus.requireNoHandlerErrors()
    }
}
