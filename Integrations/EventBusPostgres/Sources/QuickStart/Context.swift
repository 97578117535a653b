// What the README's quick start (main.swift, quoted there verbatim; `scripts/with-postgres.sh`
// checks that it is) takes from the application around it. Built, never run: it needs a server
// named `db`.
import Foundation
import Logging

/// The database password.
let secret = "secret"
/// The 32-byte key every instance of the cluster shares (`Configuration.authenticationKey`).
let clusterKey = Data(repeating: 7, count: 32)
/// The application's logger.
let logger = Logger(label: "app")
/// The order shipped.
let id = UUID()
