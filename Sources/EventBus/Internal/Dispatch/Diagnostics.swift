internal import _EventBusShims

/// Where the bus's own diagnostics go when the app set no handler for them (a handler's error, a
/// NotificationCenter bridge's issue): standard error, in debug builds only; release builds stay
/// silent. One place for both, so that tests can route the diagnostics they provoke to a log.
package enum Diagnostics {
    /// Replaces standard error for the diagnostics written within `Diagnostics.$sink.withValue`,
    /// that is on that task, on its thread: a test's synchronous dispatch. Tests set it so that the
    /// diagnostics they expect go to their log, and assert on them, rather than to the output.
    @TaskLocal package static var sink: Sink?

    /// Where a task's diagnostics go instead of standard error. A struct, not the function itself:
    /// Swift 6.3.1's optimizer miscompiles a task-local whose value is an optional function type
    /// (binding one crashed optimized builds).
    package struct Sink: Sendable {
        package let write: @Sendable (String) -> Void

        package init(_ write: @escaping @Sendable (String) -> Void) {
            self.write = write
        }
    }

    /// Writes `line` to the task's ``sink``, else to standard error, in debug builds only.
    package static func writeInDebugBuilds(_ line: String) {
        #if DEBUG
            if let sink {
                sink.write(line)
            } else {
                eventbus_print_error(line)
            }
        #endif
    }
}
