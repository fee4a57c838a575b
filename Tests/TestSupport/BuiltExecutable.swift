import Foundation

/// The executables of this build that tests run as child processes
/// (`sqlite-watch`, `sqlite-replica`).
public enum BuiltExecutable {
    /// The executable `name` of this build, or nil when there is none.
    ///
    /// SwiftPM puts executables in the products directory of the build
    /// (debug or release alike), next to the test product: on Linux, the
    /// test executable `<Package>PackageTests.xctest`; on macOS, the bundle
    /// of that name, run by a host program. The environment variable
    /// `override` (a path), when set, wins.
    public static func url(named name: String, override: String) -> URL? {
        if let path = ProcessInfo.processInfo.environment[override] {
            return URL(fileURLWithPath: path)
        }
        for directory in directories {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Where `url(named:override:)` looks, for a failure's message.
    public static var directories: [URL] {
        var directories: [URL] = []
        if let executable = Bundle.main.executableURL { directories.append(executable.deletingLastPathComponent()) }
        directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
        directories.append(Bundle(for: BundleMarker.self).bundleURL.deletingLastPathComponent())
        directories.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        return directories
    }
}

/// A class of the test bundle, to find the bundle.
private final class BundleMarker {}
