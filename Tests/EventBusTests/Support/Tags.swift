import Testing

extension Tag {
    /// Suites that drive the bus from several threads, or hard: CI also runs them under
    /// ThreadSanitizer (`.ci/run`, `--filter tag:stress`).
    @Tag static var stress: Self
}
