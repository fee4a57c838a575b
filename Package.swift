// swift-tools-version: 6.2

import PackageDescription

let package = Package(
    name: "ReactiveSQLite",
    products: [
        .library(name: "Differences", targets: ["Differences"]),
        .library(name: "DatabaseRegions", targets: ["DatabaseRegions"]),
        .library(name: "ReactiveSQLite", targets: ["ReactiveSQLite"]),
    ],
    targets: [
        // Core: pure Swift standard library, no Foundation.
        .target(name: "Differences", path: "Sources/Differences"),
        .target(name: "DatabaseRegions", path: "Sources/DatabaseRegions"),

        // Adapter: SQLite through its C API. Only ReactiveSQLite sees CSQLite.
        .systemLibrary(
            name: "CSQLite", path: "Adapters/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .target(
            name: "ReactiveSQLite", dependencies: ["CSQLite", "DatabaseRegions", "Differences"],
            path: "Adapters/SQLite"),

        // The main job until sqlite-watch exists: a tour of the algorithms.
        .executableTarget(name: "differences-demo", dependencies: ["Differences"], path: "Examples/DifferencesDemo"),

        // Helpers shared by the test targets (not a product).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "DifferencesTests", dependencies: ["Differences", "TestSupport"]),
        .testTarget(name: "DatabaseRegionsTests", dependencies: ["DatabaseRegions", "TestSupport"]),
        .testTarget(name: "ReactiveSQLiteTests", dependencies: ["ReactiveSQLite", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
