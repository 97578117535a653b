internal import EventBusRemote

/// Throws a ``ConformanceFailure`` (its check filled in by `run`) unless `condition` holds.
func expect(
    _ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) throws {
    guard !condition else { return }
    throw ConformanceFailure(check: "", message: message(), file: "\(file)", line: Int(line))
}

/// `value`, or a ``ConformanceFailure`` when it is `nil`.
func require<T>(
    _ value: T?, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) throws -> T {
    guard let value else {
        throw ConformanceFailure(check: "", message: message(), file: "\(file)", line: Int(line))
    }
    return value
}

/// Runs `body`, which must throw the cursor's lease-lost error (``DurableCursor/leaseLost``,
/// compared by its reflection).
func expectLeaseLost<C: DurableCursor, T>(
    _ cursor: C, _ what: String, file: StaticString = #fileID, line: UInt = #line,
    _ body: () async throws -> T
) async throws {
    let expected = String(reflecting: cursor.leaseLost)
    do {
        _ = try await body()
    } catch {
        try expect(
            String(reflecting: error) == expected, "\(what): threw \(String(reflecting: error)), not \(expected)",
            file: file, line: line)
        return
    }
    throw ConformanceFailure(
        check: "", message: "\(what): did not throw (expected \(expected))", file: "\(file)", line: Int(line))
}

/// Waits until `condition` holds, checking every 5 ms, for `limit` at most; whether it holds.
func eventually(within limit: Duration = .seconds(5), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}
