import Testing

extension Tag {
    /// Suites that drive the bus from several threads (as `EventBusTests`' tag of the same name):
    /// CI also runs them under ThreadSanitizer.
    @Tag static var stress: Self
}
