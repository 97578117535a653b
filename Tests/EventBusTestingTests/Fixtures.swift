import EventBus

struct LoginEvent: Event, Equatable {
    let userID: String
}

struct LogoutEvent: Event, Equatable {
    let userID: String
}

struct Failed: Error, Equatable {}

/// The demo's login service, as an app would have it.
struct LoginService {
    let bus: EventBus

    func logIn(_ userID: String) { bus.dispatch(LoginEvent(userID: userID)) }
    func logOut(_ userID: String) { bus.dispatch(LogoutEvent(userID: userID)) }
}

/// A screen whose subscription follows its lifetime, as in the demo.
final class ProfileScreen: Sendable {
    init(bus: EventBus) {
        bus.on(LoginEvent.self).freeWith(self).next { _, _ in }
    }
}
