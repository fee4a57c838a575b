// swift-tools-version: 6.2

import PackageDescription

let package = Package(
    name: "ReactiveSQLite",
    products: [
        .library(name: "Differences", targets: ["Differences"]),
        .library(name: "DatabaseRegions", targets: ["DatabaseRegions"]),
    ],
    targets: [
        // Core: pure Swift standard library, no Foundation.
        .target(name: "Differences", path: "Sources/Differences"),
        .target(name: "DatabaseRegions", path: "Sources/DatabaseRegions"),

        // The main job until sqlite-watch exists: a tour of the algorithms.
        .executableTarget(name: "differences-demo", dependencies: ["Differences"], path: "Examples/DifferencesDemo"),

        .testTarget(name: "DifferencesTests", dependencies: ["Differences"]),
        .testTarget(name: "DatabaseRegionsTests", dependencies: ["DatabaseRegions"]),
    ],
    swiftLanguageModes: [.v6]
)
