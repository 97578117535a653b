import Foundation
public import PostgresNIO

/// A `postgres://user[:password]@host[:port]/database` URL, turned into the two configurations a
/// bridge needs.
public struct DatabaseURL: Sendable {
    /// The environment variable the tests, the demo and the benchmark read the URL from.
    public static let environmentVariable = "EVENTBUS_POSTGRES_URL"

    /// The server's host name or address.
    public let host: String
    /// The server's port; 5432 when the URL has none.
    public let port: Int
    /// The role to connect as.
    public let username: String
    /// The role's password, if the URL has one.
    public let password: String?
    /// The database, if the URL names one.
    public let database: String?

    /// Parses `string`; `nil` unless it is a postgres URL with a host and a user.
    public init?(_ string: String) {
        guard let components = URLComponents(string: string),
            components.scheme == "postgres" || components.scheme == "postgresql",
            let host = components.host, !host.isEmpty, let user = components.user
        else { return nil }
        self.host = host
        self.port = components.port ?? 5432
        self.username = user
        self.password = components.password
        let path = components.path.drop { $0 == "/" }
        self.database = path.isEmpty ? nil : String(path)
    }

    /// The URL in `EVENTBUS_POSTGRES_URL`, if set and valid.
    public static var fromEnvironment: DatabaseURL? {
        ProcessInfo.processInfo.environment[environmentVariable].flatMap(DatabaseURL.init)
    }

    /// For a bridge's dedicated listening connection, named `applicationName` in
    /// `pg_stat_activity`.
    public func connectionConfiguration(applicationName: String) -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: .disable)
        configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        return configuration
    }

    /// For the pool a bridge publishes through.
    public func clientConfiguration() -> PostgresClient.Configuration {
        PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: .disable)
    }
}
