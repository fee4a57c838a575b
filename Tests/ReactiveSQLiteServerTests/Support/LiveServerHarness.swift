#if Server
import DatabaseTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWebSocket
import ReactiveSQLite
import ReactiveSQLiteServer
import TestSupport

/// The schema of the server tests: players in teams.
let playersSQL = """
    CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, team TEXT NOT NULL, score INTEGER NOT NULL);
    INSERT INTO player VALUES (1, 'Arthur', 'red', 100), (2, 'Barbara', 'blue', 80), (3, 'Craig', 'red', 60);
    """

/// Serves `server` on a loopback port for the duration of `body` (with
/// HummingbirdTesting's live server), routes at `/live`.
func withLiveServer(
    _ server: LiveQueryServer,
    _ body: @Sendable @escaping (_ port: Int, _ client: any TestClientProtocol) async throws -> Void
) async throws {
    let router = Router(context: BasicWebSocketRequestContext.self)
    server.addRoutes(to: router)
    let app = Application(router: router, server: .http1WebSocketUpgrade(webSocketRouter: router))
    try await app.test(.live) { client in
        guard let port = client.port else { throw SSEClientError("no port") }
        try await body(port, client)
    }
}

/// The replica a client holds when it is up to date: a fresh fetch of
/// `sql`, rendered as the server renders rows.
func freshReplica(
    _ reader: any DatabaseReader, sql: String, arguments: StatementArguments = StatementArguments(),
    keys: [String], isOrdered: Bool
) throws -> JSONRowReplica {
    let rows = try reader.read { db in try SQLRequest<Row>(sql: sql, arguments: arguments).fetchAll(db) }
    var replica = JSONRowReplica(keys: keys, isOrdered: isOrdered)
    let columnNames = rows.first?.columnNames ?? []
    replica.apply(event: "rows", data: RowJSON.rows(rows, columnNames: columnNames))
    return replica
}

#endif
