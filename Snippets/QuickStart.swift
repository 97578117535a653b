import EventBus

// 1. Define events: any Sendable value type.
struct LoginEvent: Event {
    let userID: String
}

struct ChatMessage: Event {
    let room: String
    let text: String
    var eventType: String? { room }  // optional second routing key
}

// 2. Subscribe. Bound to an owner, a subscription ends when the owner is deallocated.
final class ProfileScreen: EventSubscribing, Sendable {
    func start() {
        subscribe(LoginEvent.self).next { screen, event in
            screen.show("Welcome, \(event.userID)")
        }
    }

    func show(_ text: String) { print(text) }
}

let screen = ProfileScreen()
screen.start()

// Or keep a token: a subscription without an owner, here to one key.
let bus = EventBus.shared
let token = bus.on(ChatMessage.self)
    .ofType("room-7")
    .next { message in print("room-7:", message.text) }

// 3. Publish, from anywhere. Synchronous subscribers have run when dispatch returns.
bus.dispatch(LoginEvent(userID: "42"))  // prints: Welcome, 42
bus.dispatch(ChatMessage(room: "room-7", text: "hi"))  // prints: room-7: hi
bus.dispatch(ChatMessage(room: "room-9", text: "…"))  // prints nothing: another room

token.dispose()
