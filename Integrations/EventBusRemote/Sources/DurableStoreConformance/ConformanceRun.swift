/// What the three conformance suites' `run(_:)` share: the check named `name` of `Check` (the
/// suite's enum, `suite` its public name), run by `body` on a fresh store, a failure named after it.
///
/// - Throws: A ``ConformanceFailure`` for an unknown name, or naming the check that failed; what
///   `body` throws otherwise.
func runCheck<Check: RawRepresentable<String>>(
    _ name: String, of _: Check.Type, suite: String, _ body: (Check) async throws -> Void
) async throws {
    guard let check = Check(rawValue: name) else {
        throw ConformanceFailure(
            check: name, message: "no such check (see \(suite).checks)", file: #fileID, line: #line)
    }
    do {
        try await body(check)
    } catch var failure as ConformanceFailure {
        failure.check = name
        throw failure
    }
}
