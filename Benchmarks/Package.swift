// swift-tools-version: 6.2

import PackageDescription

let package = Package(
    name: "ReactiveSQLiteBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "ReactiveSQLite", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        // The baseline of the SQLite benchmarks only: never a dependency of the library.
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // Helpers shared by the benchmark targets.
        .target(name: "BenchmarkSupport", path: "Benchmarks/BenchmarkSupport"),
        .executableTarget(
            name: "DifferencesBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
                .product(name: "Differences", package: "ReactiveSQLite"),
            ],
            path: "Benchmarks/DifferencesBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "DatabaseRegionsBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
                .product(name: "DatabaseRegions", package: "ReactiveSQLite"),
            ],
            path: "Benchmarks/DatabaseRegionsBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "SQLiteBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
                .product(name: "ReactiveSQLite", package: "ReactiveSQLite"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Benchmarks/SQLiteBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "RecordWriteBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
                .product(name: "ReactiveSQLite", package: "ReactiveSQLite"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Benchmarks/RecordWriteBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ObservationBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
                .product(name: "ReactiveSQLite", package: "ReactiveSQLite"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Benchmarks/ObservationBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "DifferencesObservationBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
                .product(name: "ReactiveSQLite", package: "ReactiveSQLite"),
                .product(name: "Differences", package: "ReactiveSQLite"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // The system SQLite's C API, for the time SQLite alone takes.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            path: "Benchmarks/DifferencesObservationBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ReadBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
                .product(name: "ReactiveSQLite", package: "ReactiveSQLite"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Benchmarks/ReadBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
