import EventBus
import Dispatch

struct Login: Event { let id: String }
struct Chat: Event { let room: String; var eventType: String? { room } }
final class Screen: EventSubscribing, @unchecked Sendable { var n = 0; deinit { print("screen deinit") } }
let bus = EventBus()
let t = bus.on(Login.self).next { print("login", $0.id) }
bus.on(Chat.self).ofType("a").ofType("b").next { print("keyed", $0.room) }
bus.on(Chat.self).next { print("unkeyed", $0.room) }
var s: Screen? = Screen()
s!.subscribe(Login.self, on: bus).next { owner, e in owner.n += 1; print("owner got", e.id, owner.n) }
bus.dispatch(Login(id: "1"))
bus.dispatch(Chat(room: "a")); bus.dispatch(Chat(room: "b")); bus.dispatch(Chat(room: "c"))
t.dispose(); t.dispose()
s = nil
bus.dispatch(Login(id: "2"))
print("count", bus.subscriptionCount, bus.subscriptionCount(of: Login.self))
let q = DispatchQueue(label: "q")
let qt = bus.on(Login.self).atQueue(q).next { print("queued", $0.id) }
bus.dispatch(Login(id: "3"))
q.sync {}
print("main?", DispatchQueue.main.label)
