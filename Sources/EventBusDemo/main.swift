// EventBusDemo: a small app's worth of EventBus in one file.
//
// A login service publishes typed events. A home screen and a profile screen subscribe bound to
// their own lifetimes; a chat screen listens to one room; an analytics service logs on a
// background queue; a session controller keeps its subscriptions in a DisposeBag.
//
// Run it with `swift run EventBusDemo`; the printed story is the point.

import Dispatch
import EventBus

// MARK: - Events

struct LoginEvent: Event {
    let userID: String
}

struct LogoutEvent: Event {
    let userID: String
}

/// A chat message is routed by room: `ofType("room-7")` receives only that room.
struct ChatMessage: Event {
    let room: String
    let from: String
    let text: String
    var eventType: String? { room }
}

// MARK: - Publisher

struct LoginService {
    let bus: EventBus

    func logIn(_ userID: String) {
        print("LoginService: \(userID) logged in")
        bus.dispatch(LoginEvent(userID: userID))
    }

    func logOut(_ userID: String) {
        print("LoginService: \(userID) logged out")
        bus.dispatch(LogoutEvent(userID: userID))
    }
}

// MARK: - Subscribers bound to their owner's lifetime

/// Screens are created and destroyed as the user navigates; their subscriptions must follow.
final class Screen: EventSubscribing, @unchecked Sendable {
    // @unchecked Sendable: the demo touches screens from one thread only.
    let name: String
    private(set) var greeting = "Welcome, guest"

    init(name: String, bus: EventBus) {
        self.name = name
        // Bound to self: no token to keep, no [weak self]; ends when the screen is deallocated.
        subscribe(LoginEvent.self, on: bus).next { screen, event in
            screen.greeting = "Welcome, user \(event.userID)"
            print("  \(screen.name): shows \"\(screen.greeting)\"")
        }
    }

    deinit { print("  \(name): closed (its subscriptions end with it)") }
}

final class ChatScreen: EventSubscribing, @unchecked Sendable {
    // @unchecked Sendable: the demo touches screens from one thread only.
    private(set) var transcript: [String] = []

    init(room: String, bus: EventBus) {
        subscribe(ChatMessage.self, on: bus).ofType(room).next { screen, message in
            screen.transcript.append("\(message.from): \(message.text)")
            print("  ChatScreen(\(room)): \(message.from) says \"\(message.text)\"")
        }
    }
}

// MARK: - A background subscriber

final class Analytics: Sendable {
    let queue = DispatchQueue(label: "analytics")
    let token: EventToken

    init(bus: EventBus) {
        token = bus.on(LoginEvent.self).atQueue(queue).next { event in
            print("  Analytics (background queue): recorded login of \(event.userID)")
        }
    }

    /// Waits until the analytics queue has processed everything sent so far.
    func flush() { queue.sync {} }
}

// MARK: - A DisposeBag

/// Keeps its tokens in a bag: when the controller goes, the bag goes, and both subscriptions end.
final class SessionController {
    private let bag = DisposeBag()

    init(bus: EventBus) {
        bus.on(LoginEvent.self).next { event in
            print("  SessionController: session started for \(event.userID)")
        }.disposed(by: bag)
        bus.on(LogoutEvent.self).next { event in
            print("  SessionController: session of \(event.userID) cleared")
        }.disposed(by: bag)
    }
}

// MARK: - The story

let bus = EventBus()
let service = LoginService(bus: bus)
let analytics = Analytics(bus: bus)
var session: SessionController? = SessionController(bus: bus)

print("1. Two screens are open; a user logs in.")
var home: Screen? = Screen(name: "HomeScreen", bus: bus)
var profile: Screen? = Screen(name: "ProfileScreen", bus: bus)
service.logIn("42")
analytics.flush()

print("\n2. The user leaves the profile screen; the next login reaches only the home screen.")
profile = nil
service.logIn("43")
analytics.flush()

print("\n3. A chat screen listens to room-7 only.")
let chat = ChatScreen(room: "room-7", bus: bus)
bus.dispatch(ChatMessage(room: "room-7", from: "ana", text: "hello room 7"))
bus.dispatch(ChatMessage(room: "room-9", from: "bob", text: "nobody on this screen hears me"))
print("  (room-9's message reached no one: \(chat.transcript.count) message in the transcript)")

print("\n4. Analytics stops listening; the session controller (and its DisposeBag) goes away.")
analytics.token.dispose()
service.logOut("43")
session = nil
home = nil
service.logIn("44")
analytics.flush()
print("  (login 44 reached no screen; the one subscription left is the chat screen's: \(bus.subscriptionCount))")

print("\nDone.")
