import Foundation
import TestSupport

/// The programs the tests run: the built `sqlite-watch`, and the `sqlite3`
/// shell that changes databases from another process.
enum Executables {
    /// The `sqlite-watch` executable of this build.
    ///
    /// SwiftPM puts it in the products directory of the build (debug or
    /// release alike), next to the test product: on Linux, the test
    /// executable `<Package>PackageTests.xctest`; on macOS, the bundle of
    /// that name, run by a host program. The `SQLITE_WATCH_EXECUTABLE`
    /// environment variable overrides the search.
    static func sqliteWatch() throws -> URL {
        if let url = BuiltExecutable.url(named: "sqlite-watch", override: "SQLITE_WATCH_EXECUTABLE") { return url }
        throw ChildProcessFailure(
            description: "sqlite-watch not found next to the tests in \(BuiltExecutable.directories.map(\.path)): "
                + "build it (swift build), or set SQLITE_WATCH_EXECUTABLE")
    }

    /// The `sqlite3` shell, from the usual places or the `PATH`.
    static func sqlite3() throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = ["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"] + path.split(separator: ":").map(String.init)
        for directory in directories {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent("sqlite3")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw ChildProcessFailure(description: "the sqlite3 shell is not installed (apt-get install sqlite3)")
    }
}
