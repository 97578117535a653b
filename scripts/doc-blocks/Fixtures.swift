// The declarations that the Swift blocks of README.md and the DocC articles take for granted: the
// app code around an example (its events, a screen, a queue), and on Linux stand-ins for the
// UIKit and Combine types the examples use. scripts/check-doc-blocks.sh compiles this file into a
// module, DocFixtures, that every block imports; a declaration the block makes itself shadows the
// one here, so a block that defines its own `LoginEvent` or `bus` is checked against its own.
//
// Only the types matter (nothing here runs), but each stand-in has the shape and the isolation of
// the real thing: a view controller is `@MainActor`, an `NSObject`, and so `EventSubscribing`.

public import Dispatch
public import EventBus
public import Foundation

#if canImport(EventBusFoundation)
    public import EventBusFoundation
#endif

// MARK: - The app around the examples

public let bus = EventBus.shared

public struct LoginEvent: Event {
    public let userID: String
    public init(userID: String) { self.userID = userID }
}

public struct LogoutEvent: Event {
    public init() {}
}

public struct ChatMessage: Event {
    public let room: String
    public let text: String
    public var eventType: String? { room }
    public init(room: String, text: String) {
        self.room = room
        self.text = text
    }
}

public struct BackTapped: Event {
    public init() {}
}

public struct ProfileRenamed: Event {
    public let name: String
    public init(name: String) { self.name = name }
}

public struct UserLoggedIn: Event {
    public let userID: String
    public init(userID: String) { self.userID = userID }
}

extension Notification.Name {
    public static let userDidLogIn = Notification.Name("UserDidLogIn")
    public static let userDidLogOut = Notification.Name("UserDidLogOut")
}

/// A screen that shows a greeting when someone logs in; `Sendable`, so it can be the owner of an
/// owner-passing handler that runs on any thread.
public final class ProfileScreen: EventSubscribing, @unchecked Sendable {  // `shown` is guarded by `lock`
    private let lock = NSLock()
    private var shown = ""

    public init(bus: EventBus = .shared) {
        bus.on(LoginEvent.self).freeWith(self).next { screen, event in screen.render(event) }
    }

    public var title: String { lock.withLock { shown } }
    public func render(_ event: LoginEvent) { show("Welcome, \(event.userID)") }
    public func show(_ text: String) { lock.withLock { shown = text } }
}

public let renderQueue = DispatchQueue(label: "render")
public func render(_ message: ChatMessage) { print(message.text) }
public func clearCaches() {}

public actor AuditLog {
    public init() {}
    public func record(_ userID: String) { print("audit:", userID) }
}

public let auditLog = AuditLog()

// MARK: - UIKit and Combine, where the platform has none

#if canImport(UIKit)
    @_exported public import UIKit
#else
    @MainActor open class UIResponder: NSObject {
        public nonisolated static let keyboardWillShowNotification = Notification.Name("UIKeyboardWillShowNotification")
        public nonisolated static let keyboardWillHideNotification = Notification.Name("UIKeyboardWillHideNotification")
        open var next: UIResponder? { nil }
    }

    @MainActor open class UIView: UIResponder {}

    @MainActor open class UILabel: UIView {
        open var text: String?
    }

    @MainActor open class UIViewController: UIResponder {
        open func viewDidLoad() {}
    }
#endif

#if canImport(Combine)
    @_exported public import Combine
#else
    public protocol ObservableObject: AnyObject {}

    @propertyWrapper
    public struct Published<Value> {
        public var wrappedValue: Value
        public init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
    }
#endif
