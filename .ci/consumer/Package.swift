// swift-tools-version: 6.2
// A fresh consumer of ReactiveSQLite alone: CI builds it and checks that
// no third-party package of a trait (GRDB, OpenCombine) is fetched or built.
import PackageDescription

let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "ReactiveSQLite", path: "../..")],
    targets: [
        .executableTarget(
            name: "Consumer", dependencies: [.product(name: "ReactiveSQLite", package: "ReactiveSQLite")]),
        // The core modules alone: they link with the Swift standard library
        // only (no Foundation, no libm).
        .executableTarget(
            name: "CoreConsumer",
            dependencies: [
                .product(name: "Differences", package: "ReactiveSQLite"),
                .product(name: "DatabaseRegions", package: "ReactiveSQLite"),
            ]),
    ]
)
