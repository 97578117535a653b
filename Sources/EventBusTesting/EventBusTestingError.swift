/// Why a check of `EventBusTesting` failed: a thrown error with a readable message, so that it
/// fails a test under Swift Testing and XCTest alike.
///
/// ```swift
/// do {
///     try bus.requireNoLiveSubscriptions()
/// } catch let error as EventBusTestingError {
///     print(error.message)   // "2 live subscriptions: …" with one line per subscription
/// }
/// ```
public struct EventBusTestingError: Error, Sendable, CustomStringConvertible {
    /// What was expected and what happened, with the events or subscriptions involved.
    public let message: String

    /// An error with `message`.
    ///
    /// ```swift
    /// throw EventBusTestingError(message: "no login")
    /// ```
    public init(message: String) {
        self.message = message
    }

    /// The message.
    ///
    /// ```swift
    /// print(EventBusTestingError(message: "no login"))   // no login
    /// ```
    public var description: String { message }
}
