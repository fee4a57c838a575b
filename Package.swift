// swift-tools-version: 6.2

import PackageDescription

/// Platforms without Apple's Combine, where ReactiveSQLiteCombine uses OpenCombine.
let openCombinePlatforms: [Platform] = [.linux, .android, .windows, .openbsd, .wasi]

/// Warnings are errors when this package is built as the root package (CI, contributors).
/// SwiftPM ignores warning control settings of dependencies, so users are not affected.
let strictWarnings: [SwiftSetting] = [.treatAllWarnings(as: .error)]

/// Test-only instrumentation (counters the tests read to check that an
/// observation took its fast path, or to wait for the external-change
/// watcher's next reading), compiled into debug builds, and into release
/// builds only when `REACTIVESQLITE_INTERNAL_CHECKS=1` is in the environment
/// (CI's release test run): the release builds that ship carry none of it.
/// The model is swift-collections' `COLLECTIONS_INTERNAL_CHECKS`.
let internalChecks: [SwiftSetting] = Context.environment["REACTIVESQLITE_INTERNAL_CHECKS"] == "1"
    ? [.define("REACTIVESQLITE_INTERNAL_CHECKS")]
    : [.define("REACTIVESQLITE_INTERNAL_CHECKS", .when(configuration: .debug))]

let package = Package(
    name: "ReactiveSQLite",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Differences", targets: ["Differences"]),
        .library(name: "DatabaseRegions", targets: ["DatabaseRegions"]),
        .library(name: "ReactiveSQLite", targets: ["ReactiveSQLite"]),
        .library(name: "ReactiveSQLiteCombine", targets: ["ReactiveSQLiteCombine"]),
        .library(name: "GRDBDifferences", targets: ["GRDBDifferences"]),
        .library(name: "ReactiveSQLiteServer", targets: ["ReactiveSQLiteServer"]),
        .executable(name: "sqlite-watch", targets: ["sqlite-watch"]),
        .library(name: "ReactiveSQLiteReplication", targets: ["ReactiveSQLiteReplication"]),
        .library(name: "ReactiveSQLitePostgres", targets: ["ReactiveSQLitePostgres"]),
        .executable(name: "sqlite-replica", targets: ["sqlite-replica"]),
    ],
    traits: [
        .trait(
            name: "GRDB",
            description: "Builds GRDBDifferences, our differences observations on GRDB's ValueObservation (fetches GRDB)."),
        .trait(
            name: "OpenCombine",
            description: "Builds ReactiveSQLiteCombine where Apple's Combine does not exist, on OpenCombine "
                + "(fetches OpenCombine). On Apple platforms the publishers use Combine, trait or not."),
        .trait(
            name: "SQLCipher",
            description: "Builds ReactiveSQLite against SQLCipher (pkg-config `sqlcipher`, apt `libsqlcipher-dev`) "
                + "instead of SQLite, for encrypted databases (`Database.usePassphrase(_:)`)."),
        .trait(
            name: "Server",
            description: "Builds ReactiveSQLiteServer (live queries over Server-Sent Events and WebSocket, "
                + "on Hummingbird) and `sqlite-watch --serve` (fetches Hummingbird and SwiftNIO)."),
        .trait(
            name: "PostgreSQL",
            description: "Builds ReactiveSQLitePostgres (PostgreSQL logical decoding into a SQLite replica) "
                + "and `sqlite-replica` (fetches postgres-nio)."),
        // Depending on ReactiveSQLite alone fetches and builds no third-party package.
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
        // A peer the GRDBDifferences bridge adapts to: never a dependency of ReactiveSQLite.
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        // The live-query server (trait Server).
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", exact: "2.8.1"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        // TLS for the server (trait Server), already in Hummingbird's graph.
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        // PostgreSQL as a replication source (trait PostgreSQL).
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
    ],
    targets: [
        // Core: pure Swift standard library, no Foundation.
        .target(name: "Differences", path: "Sources/Differences", swiftSettings: strictWarnings),
        .target(name: "DatabaseRegions", path: "Sources/DatabaseRegions", swiftSettings: strictWarnings),

        // Adapter: SQLite through its C API. Only ReactiveSQLite sees CSQLite
        // (or CSQLCipher, with the SQLCipher trait, in its place: the Swift
        // files import one or the other under `#if SQLCipher`).
        // A dependency cannot be conditioned on a trait being off, so CSQLite
        // stays a dependency with the trait: it links libsqlite3 only through
        // its module map (`link "sqlite3"`, applied when the module is
        // imported), not through pkg-config, whose flags SwiftPM would add
        // to every link, so that an SQLCipher build never loads libsqlite3
        // next to libsqlcipher (two copies of SQLite in one process). The
        // header and the library are in the compiler's default paths where
        // libsqlite3-dev installs them, and in Apple's SDKs.
        .systemLibrary(
            name: "CSQLite", path: "Adapters/CSQLite",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CSQLCipher", path: "Adapters/CSQLCipher", pkgConfig: "sqlcipher",
            providers: [.apt(["libsqlcipher-dev"])]),
        .target(
            name: "ReactiveSQLite",
            dependencies: [
                "CSQLite", "DatabaseRegions", "Differences",
                .target(name: "CSQLCipher", condition: .when(traits: ["SQLCipher"])),
            ],
            path: "Adapters/ReactiveSQLite", swiftSettings: strictWarnings + internalChecks),

        // Adapter: publishers, on Combine where it exists and OpenCombine elsewhere.
        .target(
            name: "ReactiveSQLiteCombine",
            dependencies: [
                "ReactiveSQLite",
                .product(name: "OpenCombine", package: "OpenCombine",
                         condition: .when(platforms: openCombinePlatforms, traits: ["OpenCombine"])),
            ],
            path: "Adapters/ReactiveSQLiteCombine", swiftSettings: strictWarnings),

        // Adapter: our differences on GRDB's own ValueObservation.
        .target(
            name: "GRDBDifferences",
            dependencies: [
                "Differences", "DatabaseRegions",
                .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["GRDB"])),
            ],
            path: "Adapters/GRDBDifferences", swiftSettings: strictWarnings),

        // Adapter: live queries served to remote clients (SSE, WebSocket) and
        // the page that shows them, on Hummingbird (trait Server; empty without it).
        .target(
            name: "ReactiveSQLiteServer",
            dependencies: [
                "ReactiveSQLite", "Differences",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(
                    name: "HummingbirdWebSocket", package: "hummingbird-websocket",
                    condition: .when(traits: ["Server"])),
                .product(
                    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"])),
            ],
            path: "Adapters/ReactiveSQLiteServer", swiftSettings: strictWarnings),

        // Replication: a source's transactions applied to a SQLite replica,
        // one SQLite transaction each, with the source position (no
        // third-party dependency).
        .target(
            name: "ReactiveSQLiteReplication", dependencies: ["ReactiveSQLite"],
            path: "Adapters/ReactiveSQLiteReplication", swiftSettings: strictWarnings),

        // PostgreSQL logical decoding (pgoutput) as a replication source, on
        // postgres-nio (trait PostgreSQL; the decoder alone without it).
        .target(
            name: "ReactiveSQLitePostgres",
            dependencies: [
                "ReactiveSQLiteReplication", "ReactiveSQLite",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["PostgreSQL"])),
            ],
            path: "Adapters/ReactiveSQLitePostgres", swiftSettings: strictWarnings),

        // Keeps a SQLite replica of PostgreSQL tables (trait PostgreSQL).
        .executableTarget(
            name: "sqlite-replica",
            dependencies: [
                "ReactiveSQLitePostgres", "ReactiveSQLiteReplication", "ReactiveSQLite", "SignalForwarding",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/sqlite-replica", swiftSettings: strictWarnings),

        // The command-line tools' handling of SIGINT, SIGTERM and the like.
        .target(name: "SignalForwarding", path: "Tools/SignalForwarding", swiftSettings: strictWarnings),

        // glibc's malloc_trim, which Swift's Glibc module does not declare.
        .target(name: "CMemory", path: "Tools/CMemory"),

        // The main job: watch a live query on any database file (a thin
        // command line over the library's observations, with its rendering
        // and messages), or serve it (`--serve`, trait Server).
        .executableTarget(
            name: "sqlite-watch",
            dependencies: [
                "ReactiveSQLite", "DatabaseRegions", "CMemory", "SignalForwarding",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .target(name: "ReactiveSQLiteServer", condition: .when(traits: ["Server"])),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(
                    name: "HummingbirdWebSocket", package: "hummingbird-websocket",
                    condition: .when(traits: ["Server"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"])),
            ],
            path: "Tools/sqlite-watch", swiftSettings: strictWarnings),

        // A tour of the algorithms.
        .executableTarget(
            name: "differences-demo", dependencies: ["Differences"], path: "Examples/DifferencesDemo",
            swiftSettings: strictWarnings),

        // A server payload mirrored into a table with the fewest writes
        // (SortedDifference and records' writes), counting its statements.
        .executableTarget(
            name: "payload-sync", dependencies: ["ReactiveSQLite"], path: "Examples/PayloadSync",
            swiftSettings: strictWarnings),

        // A todo app's screens kept live by `LiveValue` and a shared
        // observation while the sqlite3 shell edits the database.
        .executableTarget(
            name: "live-todos", dependencies: ["ReactiveSQLite"], path: "Examples/LiveTodos",
            swiftSettings: strictWarnings),

        // Helpers shared by the test targets (not a product).
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: strictWarnings),
        // The three kinds of database every database test runs on (not a product).
        .target(
            name: "DatabaseTestSupport", dependencies: ["ReactiveSQLite", "TestSupport"],
            path: "Tests/DatabaseTestSupport", swiftSettings: strictWarnings),
        .testTarget(
            name: "DifferencesTests", dependencies: ["Differences", "TestSupport"],
            swiftSettings: strictWarnings),
        .testTarget(
            name: "DatabaseRegionsTests", dependencies: ["DatabaseRegions", "TestSupport"],
            swiftSettings: strictWarnings),
        .testTarget(
            name: "ReactiveSQLiteTests", dependencies: ["ReactiveSQLite", "TestSupport", "DatabaseTestSupport"],
            swiftSettings: strictWarnings + internalChecks),
        .testTarget(
            name: "ReactiveSQLiteCombineTests",
            dependencies: [
                "ReactiveSQLiteCombine", "ReactiveSQLite", "DatabaseRegions", "TestSupport", "DatabaseTestSupport",
                .product(name: "OpenCombine", package: "OpenCombine",
                         condition: .when(platforms: openCombinePlatforms, traits: ["OpenCombine"])),
            ],
            swiftSettings: strictWarnings),
        .testTarget(
            name: "GRDBDifferencesTests",
            dependencies: [
                "GRDBDifferences", "Differences", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["GRDB"])),
            ],
            swiftSettings: strictWarnings),
        .testTarget(
            name: "SQLiteWatchTests",
            dependencies: [
                "sqlite-watch", "ReactiveSQLite", "TestSupport", "DatabaseTestSupport",
                // The browser tests drive Chromium through its DevTools WebSocket.
                .product(
                    name: "HummingbirdWSClient", package: "hummingbird-websocket",
                    condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: strictWarnings),
        .testTarget(
            name: "ReactiveSQLiteReplicationTests",
            dependencies: ["ReactiveSQLiteReplication", "ReactiveSQLite", "TestSupport", "DatabaseTestSupport"],
            swiftSettings: strictWarnings),
        .testTarget(
            name: "ReactiveSQLitePostgresTests",
            dependencies: [
                "ReactiveSQLitePostgres", "ReactiveSQLiteReplication", "ReactiveSQLite", "DatabaseRegions", "TestSupport",
                "DatabaseTestSupport", "sqlite-replica",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["PostgreSQL"])),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: strictWarnings),
        .testTarget(
            name: "ReactiveSQLiteServerTests",
            dependencies: [
                "ReactiveSQLiteServer", "ReactiveSQLite", "TestSupport", "DatabaseTestSupport",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(
                    name: "HummingbirdWebSocket", package: "hummingbird-websocket",
                    condition: .when(traits: ["Server"])),
                .product(
                    name: "HummingbirdWSClient", package: "hummingbird-websocket",
                    condition: .when(traits: ["Server"])),
                .product(
                    name: "HummingbirdWSTesting", package: "hummingbird-websocket",
                    condition: .when(traits: ["Server"])),
            ],
            swiftSettings: strictWarnings),
    ],
    swiftLanguageModes: [.v6]
)

// Documentation: the DocC plugin, only when the documentation is built
// (`.ci/docs` sets the variable), so that it never reaches a consumer's graph.
if Context.environment["REACTIVESQLITE_DOCS"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", exact: "1.5.0"))
}
