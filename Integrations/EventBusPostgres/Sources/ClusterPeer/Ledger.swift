import EventBusPostgres
import Foundation
import Logging
import PostgresNIO

/// The chaos ledger's handler (PEER_LEDGER=<table>, with PEER_CONSUMER): an exactly-once
/// transactional handler that inserts each ping's number into `table` (no unique constraint: a
/// second effect would show as a second row), after sleeping PEER_HANDLER_DELAY_MS milliseconds (0
/// by default: a transaction in flight long enough to be killed in). With PEER_POISON=<n>, the
/// handler of ping `n` kills its own process (SIGKILL) instead, every time it runs.
func registerLedger(table: String, on bridge: PostgresEventBridge) throws {
    let environment = ProcessInfo.processInfo.environment
    let delay = Int(environment["PEER_HANDLER_DELAY_MS"] ?? "") ?? 0
    let poison = Int(environment["PEER_POISON"] ?? "")
    guard table.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
        fail("PEER_LEDGER must be a plain table name")
    }
    let insert = "INSERT INTO \(table) (n) VALUES ($1)"
    try bridge.process(Ping.self) { ping, connection in
        if ping.n == poison {
            say("poison \(ping.n)")
            kill(getpid(), SIGKILL)
        }
        if delay > 0 { try await Task.sleep(for: .milliseconds(delay)) }
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(ping.n)
        try await connection.query(PostgresQuery(unsafeSQL: insert, binds: bindings), logger: ledgerLogger).consume()
    }
}

/// Silent: the peer's output is what the test reads.
let ledgerLogger = Logger(label: "ledger", factory: { _ in SwiftLogNoOpLogHandler() })

extension PostgresRowSequence {
    /// Reads the rows to the end.
    func consume() async throws {
        for try await _ in self {}
    }
}
