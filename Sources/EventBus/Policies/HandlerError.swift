/// An error thrown by a subscriber's handler, as ``EventConfigurable/handlerErrorHandler`` receives it.
///
/// A throwing handler (`next { event throws in … }`) never throws into the dispatcher: the error is
/// caught, the remaining subscribers still run, and the bus hands this report to its
/// ``EventConfigurable/handlerErrorHandler`` on the handler's thread, with no lock held. Without a handler,
/// debug builds print the first error of each subscription to standard error; release builds stay
/// silent.
///
/// ```swift
/// let bus = EventBus()
/// bus.handlerErrorHandler = { failure in
///     print("\(failure.typeName) handler at \(failure.fileID):\(failure.line) threw \(failure.error)")
/// }
/// ```
public struct HandlerError: Error, Sendable, CustomStringConvertible {
    /// The error the handler threw, unchanged.
    public let error: any Error
    /// The event type's name, as `String(reflecting:)` prints it (`MyApp.LoginEvent`).
    public let typeName: String
    /// The id of the subscription whose handler threw: its ``EventToken/id``.
    public let subscriptionID: UInt64
    /// The `#fileID` of the `next` call that made the subscription (`MyApp/Session.swift`).
    public let fileID: String
    /// The line of that call.
    public let line: Int

    init(error: any Error, typeName: String, subscriptionID: UInt64, callSite: CallSite) {
        self.error = error
        self.typeName = typeName
        self.subscriptionID = subscriptionID
        fileID = callSite.fileID.description
        line = Int(callSite.line)
    }

    /// One line: the subscription, where it was made, and the error.
    ///
    /// ```swift
    /// EventBus.shared.handlerErrorHandler = { print($0.description) }
    /// ```
    public var description: String {
        "EventBus: the handler of subscription \(subscriptionID) to \(typeName) (\(fileID):\(line)) threw \(error)"
    }

    /// What a bus without an error handler does: print in debug builds, nothing in release builds.
    static func printInDebugBuilds(_ report: HandlerError) {
        Diagnostics.writeInDebugBuilds(report.description)
    }
}
