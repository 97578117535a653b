/// A store failed a check of ``DurableStoreConformance``: which check, what was expected, and
/// where in the suite the failing expectation is.
///
/// Thrown by ``DurableStoreConformance/run(_:)`` on the calling task; a test reports it as its
/// failure (its ``description`` names the file and line).
///
/// ```swift
/// do {
///     try await suite.run("leaseLapse")
/// } catch let failure as ConformanceFailure {
///     print(failure)   // DurableStoreConformance/LeaseChecks.swift:42: check leaseLapse: …
/// }
/// ```
public struct ConformanceFailure: Error, Sendable, CustomStringConvertible {
    /// The check's name (one of ``DurableStoreConformance/checks``).
    public var check: String
    /// What the store did, against what was expected.
    public var message: String
    /// The suite's file of the failing expectation (`#fileID`).
    public var file: String
    /// Its line.
    public var line: Int

    /// A failure of `check` at `file`:`line`.
    ///
    /// ```swift
    /// throw ConformanceFailure(check: "custom", message: "claimed 3, expected 2", file: #fileID, line: #line)
    /// ```
    public init(check: String, message: String, file: String, line: Int) {
        self.check = check
        self.message = message
        self.file = file
        self.line = line
    }

    /// `<file>:<line>: check <check>: <message>`.
    public var description: String { "\(file):\(line): check \(check): \(message)" }
}
