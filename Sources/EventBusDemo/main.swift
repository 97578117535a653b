// EventBusDemo: a small app's worth of EventBus in one file.
//
// A login service publishes typed events. A home screen and a profile screen subscribe bound to
// their own lifetimes; a chat screen listens to one room; an analytics service logs on a
// background queue; a session controller keeps its subscriptions in a DisposeBag; and legacy
// NotificationCenter code feeds typed subscribers through the bridge; a main-actor view model, an
// actor that owns its subscription (handlers isolated to it) and an audit task reading an
// AsyncStream show the Swift concurrency side; a sticky current user, a
// drawer that stops the back button and an analytics monitor show the delivery policies; a screen
// tree shows event chains (bubbling, an interceptor, a request, a monitor of a stopped event); a
// slow writer and a busy screen show flow control (back-pressure, keeping only the newest).
//
// Run it with `swift run EventBusDemo`; the printed story is the point.

import Dispatch
import EventBus
import EventBusFoundation
import Foundation  // only for the NotificationCenter chapter

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
/// Like real UI, they live on the main actor, and their handlers are checked by the compiler.
@MainActor
final class Screen: EventSubscribing {
    let name: String
    private(set) var greeting = "Welcome, guest"

    init(name: String, bus: EventBus) {
        self.name = name
        // Bound to self: no token to keep, no [weak self]; ends when the screen is deallocated.
        // Dispatched on the main thread, a main-actor handler runs before `dispatch` returns.
        subscribe(LoginEvent.self, on: bus).onMainActor().next { screen, event in
            screen.greeting = "Welcome, user \(event.userID)"
            print("  \(screen.name): shows \"\(screen.greeting)\"")
        }
    }

    deinit { print("  \(name): closed (its subscriptions end with it)") }
}

@MainActor
final class ChatScreen: EventSubscribing {
    private(set) var transcript: [String] = []

    init(room: String, bus: EventBus) {
        subscribe(ChatMessage.self, on: bus).ofType(room).onMainActor().next { screen, message in
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

// MARK: - Migrating from NotificationCenter

extension Notification.Name {
    /// A notification an old part of the app has posted for years.
    static let legacyUserDidLogIn = Notification.Name("LegacyUserDidLogInNotification")
    /// One that old observers still listen to, now fed by a typed event.
    static let legacyCartDidChange = Notification.Name("LegacyCartDidChangeNotification")
}

/// The typed event new code subscribes to instead of parsing `userInfo`.
struct UserLoggedIn: Event {
    let userID: String
}

struct CartChanged: Event {
    let itemCount: Int
}

/// Legacy code, unchanged: posts and observes with NotificationCenter only.
final class LegacyAccountManager {
    let center: NotificationCenter
    private var observer: (any NSObjectProtocol)?

    init(center: NotificationCenter) {
        self.center = center
        observer = center.addObserver(forName: .legacyCartDidChange, object: nil, queue: nil) { notification in
            print(
                "  LegacyBadge (NotificationCenter observer): cart has \(notification.userInfo?["count"] ?? "?") items")
        }
    }

    deinit {
        if let observer { center.removeObserver(observer) }
    }

    func logIn(_ userID: String) {
        print("  LegacyAccountManager posts \(Notification.Name.legacyUserDidLogIn.rawValue) (id \(userID))")
        center.post(name: .legacyUserDidLogIn, object: self, userInfo: ["id": userID])
    }
}

func notificationCenterChapter() {
    print("\n5. Migrating from NotificationCenter: a legacy notification feeds a typed subscriber.")
    let center = NotificationCenter()
    let bridgedBus = EventBus(notificationCenter: center)
    let legacy = LegacyAccountManager(center: center)

    // Once, at app start: the legacy name ↔ typed events. A notification that does not convert
    // (no "id") is skipped and reported; it never crashes.
    bridgedBus.notificationBridgeIssueHandler = { issue in print("  bridge issue: \(issue)") }
    bridgedBus.bridge(notification: .legacyUserDidLogIn, to: UserLoggedIn.self) { notification in
        (notification.userInfo?["id"] as? String).map(UserLoggedIn.init)
    }
    bridgedBus.bridge(CartChanged.self) { event in
        Notification(name: .legacyCartDidChange, object: nil, userInfo: ["count": event.itemCount])
    }

    // New code: typed subscribers only.
    let welcome = bridgedBus.on(UserLoggedIn.self).next { event in
        print("  WelcomeBanner (typed subscriber): hello \(event.userID)")
    }

    legacy.logIn("ana")  // legacy post → typed subscriber
    center.post(name: .legacyUserDidLogIn, object: nil)  // no "id": skipped and reported
    print("  CartScreen dispatches CartChanged(itemCount: 3)")
    bridgedBus.dispatch(CartChanged(itemCount: 3))  // typed dispatch → legacy observer

    welcome.dispose()
    legacy.logIn("bob")  // nobody on the bus hears this one
    print("  (after dispose: \(bridgedBus.subscriptionCount(of: UserLoggedIn.self)) UserLoggedIn subscribers)")
}

// MARK: - Swift concurrency

struct DownloadFinished: Event {
    let file: String
}

/// A SwiftUI/UIKit-style view model: main-actor state, updated by events published from anywhere.
@MainActor
final class DownloadsViewModel: EventSubscribing {
    private(set) var status = "idle"

    func start(bus: EventBus) {
        // A @MainActor handler: the compiler checks that touching `status` is allowed here.
        subscribe(DownloadFinished.self, on: bus).onMainActor().next { model, event in
            model.status = "\(event.file) downloaded"
            print("  DownloadsViewModel (main actor): shows \"\(model.status)\"")
        }
    }
}

/// A server-style component: state in an actor, updated by events from anywhere. Its subscriptions
/// are isolated to it: handlers touch `files` with no `await`, one event at a time, in order.
actor DownloadLedger: EventSubscribing {
    private(set) var files: [String] = []
    private var waiter: (count: Int, continuation: CheckedContinuation<[String], Never>)?

    func start(bus: EventBus) {
        subscribe(DownloadFinished.self, on: bus).next { ledger, event in
            ledger.files.append(event.file)  // isolated to the actor: checked by the compiler
            if let waiter = ledger.waiter, ledger.files.count >= waiter.count {
                ledger.waiter = nil
                waiter.continuation.resume(returning: ledger.files)
            }
        }
    }

    /// The files recorded, once there are at least `count` of them.
    func files(atLeast count: Int) async -> [String] {
        if files.count >= count { return files }
        return await withCheckedContinuation { waiter = (count, $0) }
    }
}

@MainActor
func swiftConcurrencyChapter(bus: EventBus) async {
    print("\n6. Swift concurrency: a main-actor view model, an actor owner, and an audit task reading a stream.")
    let model = DownloadsViewModel()
    model.start(bus: bus)
    let ledger = DownloadLedger()
    await ledger.start(bus: bus)

    // A stream: every DownloadFinished from now on, consumed by a task at its own pace. Made in
    // the capture list, it subscribes now, and the task holds the only reference to it.
    let auditor = Task { [downloads = bus.events(of: DownloadFinished.self)] in
        var audited: [String] = []
        for await event in downloads {
            audited.append(event.file)
            if audited.count == 2 { break }  // the task ends, the stream goes, so does the subscription
        }
        return audited
    }

    bus.dispatch(DownloadFinished(file: "a.zip"))  // on the main actor: delivered synchronously
    print("  (dispatch on the main actor returned; the view model already shows \"\(model.status)\")")

    await Task.detached {
        bus.dispatch(DownloadFinished(file: "b.zip"))  // from a background thread: enqueued to the main actor
        print("  (background dispatch returned at once: the view model's update went through the main queue)")
    }.value
    // Back on the main actor, after the enqueued delivery ran.
    print("  (the view model now shows \"\(model.status)\")")

    let audited = await auditor.value
    print("  Audit task read from its stream, in dispatch order: \(audited.joined(separator: ", "))")
    let recorded = await ledger.files(atLeast: 2)
    print(
        "  DownloadLedger (an actor owner) recorded, on the actor, in dispatch order: \(recorded.joined(separator: ", "))"
    )
    print(
        "  (the stream's subscription ended with the task; the view model's and the ledger's remain: \(bus.subscriptionCount(of: DownloadFinished.self)))"
    )
}

// MARK: - Delivery policies

struct BackTapped: Event {}

/// A side drawer: while open, it consumes the back button before the navigation sees it.
final class Drawer: EventSubscribing, @unchecked Sendable {
    // @unchecked Sendable: `isOpen` is only touched on the demo's main thread.
    var isOpen = false

    init(bus: EventBus) {
        bus.on(BackTapped.self).priority(.high).freeWith(self).handle { drawer, _ in
            guard drawer.isOpen else { return .continue }
            drawer.isOpen = false
            print("  Drawer (high priority): closes itself and stops the back tap")
            return .stop
        }
    }
}

func deliveryPoliciesChapter() {
    print("\n7. Delivery policies: a sticky current user, a back button a drawer can stop, and a monitor.")
    let bus = EventBus()
    bus.deadEventHandler = { dead in print("  (dead event: nobody handled \(type(of: dead.event)))") }
    bus.dispatch(LoginEvent(userID: "42"), sticky: .latest)
    print("  LoginService dispatched LoginEvent(42) as sticky; no screen is open yet")
    let token = bus.on(LoginEvent.self).replayingSticky().next { event in
        print("  SettingsScreen (opened later): shows \"signed in as \(event.userID)\" at once, from the sticky event")
    }
    let drawer = Drawer(bus: bus)
    _ = bus.on(BackTapped.self).next { _ in print("  Navigation: goes back one screen") }
    _ = bus.on(BackTapped.self).monitor().next { _ in print("  Analytics (monitor): back tap recorded") }
    drawer.isOpen = true
    print("  The user taps back with the drawer open:")
    bus.dispatch(BackTapped())
    print("  The user taps back again:")
    bus.dispatch(BackTapped())
    bus.dispatch(LogoutEvent(userID: "42"))
    token.dispose()
    print("  (\(bus.stickyCount) sticky event kept: the current user, for the next screen that asks)")
    withExtendedLifetime(drawer) {}
}

// MARK: - Event chains

struct CellTapped: Event { let id: Int }
struct Impression: Event {
    let item: Int
    var section: String? = nil
}
struct FetchChannelID: Request { typealias Response = String }

/// A screen of a UI tree: its node is its place in the chain.
final class TreeScreen: EventNodeOwner, Sendable {
    let eventNode: EventNode
    init(_ name: String) { eventNode = EventNode(name: name) }
}

func eventChainsChapter() throws {
    print("\n8. Event chains: a cell's tap bubbles up its own screens only.")
    let root = TreeScreen("RootScreen")
    let container = TreeScreen("FeedContainer")
    let content = TreeScreen("FeedContent")
    let otherScreen = TreeScreen("SettingsScreen")
    let cell = TreeScreen("PhotoCell")
    container.mount(on: root)
    content.mount(on: container)
    otherScreen.mount(on: root)
    cell.mount(on: content)
    print("  The tree:")
    for line in root.eventNode.treeDescription.split(separator: "\n") { print("    \(line)") }

    let bag = DisposeBag()
    content.on(CellTapped.self).next { owner, event in
        print("  \(owner.eventNode.name): opens photo \(event.id)")
    }
    otherScreen.on(CellTapped.self).next { _, _ in print("  SettingsScreen: never hears a feed cell") }
    container.eventNode.intercept(Impression.self) { event in
        var event = event
        event.section = "feed"
        print("  FeedContainer (interceptor): adds section \"feed\" to the impression")
        return .forward(event)
    }.disposed(by: bag)
    root.eventNode.on(Impression.self).next { event in
        print("  RootScreen: analytics records item \(event.item) in section \(event.section ?? "?")")
    }.disposed(by: bag)
    root.eventNode.answer(FetchChannelID.self) { _ in .answer("channel-2") }.disposed(by: bag)

    print("  The user taps photo 7 (route: \(cell.eventNode.route.joined(separator: " → "))):")
    cell.eventNode.post(CellTapped(id: 7))
    cell.eventNode.post(Impression(item: 7))
    let channel = try cell.eventNode.request(FetchChannelID())
    print("  PhotoCell asks up the chain for its channel: \(channel) (answered by RootScreen)")

    print("  With a full-screen viewer open, the content consumes the back tap; a monitor still sees it:")
    content.on(BackTapped.self).handle { _, _ in
        print("  FeedContent: closes the viewer and stops the back tap")
        return .stop
    }
    root.eventNode.on(BackTapped.self).next { _ in print("  RootScreen: pops (not reached)") }.disposed(by: bag)
    root.eventNode.on(BackTapped.self).monitor().next { _ in
        print("  RootScreen (monitor): back tap recorded, although it was stopped")
    }.disposed(by: bag)
    let outcome = cell.eventNode.post(BackTapped())
    print("  post returned \(outcome)")
    if cell.eventNode.post(LogoutEvent(userID: "44")).isUnhandled {
        print("  Nobody on the route handles LogoutEvent: the cell runs its default action")
    }
}

func seeingChapter(bus: EventBus) {
    print("\n9. Seeing what happens: who listens to what, and a trace of the next events.")
    for info in bus.subscriptions { print("  listening: \(info)") }
    // A tracer of its own, beside any other (logging, metrics): the token removes this one only.
    let trace = bus.addTracer { record in print("  trace: \(record)") }
    bus.dispatch(ChatMessage(room: "room-7", from: "ana", text: "still here?"))
    trace.remove()

    let root = EventNode(name: "RootScreen")
    let cell = EventNode(name: "PhotoCell")
    cell.mount(on: root)
    let stopper = root.on(BackTapped.self).handle { _ in .stop }
    for node in [cell, root] { node.tracer = { record in print("  trace: \(record)") } }
    cell.post(BackTapped())
    stopper.dispose()
}

// MARK: - Flow control

struct AuditRecord: Event {
    let id: Int
}

struct UploadProgress: Event {
    let percent: Int
}

/// A slow consumer and a fast producer: the producer's `send` waits while the writer is behind.
/// A busy screen that wants only the newest progress: older updates are dropped, and counted.
func flowControlChapter() async {
    print(
        "\n10. Flow control: a slow audit writer the producer waits for, and a progress bar that keeps only the newest."
    )
    let bus = EventBus()
    let writer = DispatchQueue(label: "audit-writer")
    let stored = Locked(0)
    let writing = bus.on(AuditRecord.self).atQueue(writer)
        .buffering(.backPressure(highWatermark: 10, limit: 100))
        .next { _ in
            usleep(100)  // a slow insert
            stored.withLock { $0 += 1 }
        }
    var mostWaiting = 0
    for id in 0..<500 {
        await bus.send(AuditRecord(id: id))  // waits while more than 10 wait for the writer
        mostWaiting = max(mostWaiting, writing.info?.pendingCount ?? 0)
    }
    writer.sync {}
    print("  500 records sent, \(stored.withLock { $0 }) stored; never more than 11 waiting: \(mostWaiting <= 11)")

    let screen = DispatchQueue(label: "busy-screen")
    let shown = Locked<[Int]>([])
    let bar = bus.on(UploadProgress.self).atQueue(screen).buffering(.bufferingNewest(1))
        .next { progress in shown.withLock { $0.append(progress.percent) } }
    screen.suspend()  // the screen is busy while the upload reports progress
    for percent in 0...100 { bus.dispatch(UploadProgress(percent: percent)) }
    screen.resume()
    screen.sync {}
    print(
        "  The busy screen showed \(shown.withLock { $0 }.map { "\($0)%" }.joined(separator: ", ")); \(bar.info?.droppedCount ?? 0) older updates dropped and counted (the bus: \(bus.droppedDeliveryCount))"
    )
    writing.dispose()
    bar.dispose()
}

/// A value behind an `NSLock`, for the handlers above (which run on their queues).
final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched in `withLock`, holding `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
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

notificationCenterChapter()
await swiftConcurrencyChapter(bus: bus)
deliveryPoliciesChapter()
try eventChainsChapter()
seeingChapter(bus: bus)
await flowControlChapter()

print("\nDone.")
