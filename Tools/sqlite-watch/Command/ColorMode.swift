import ArgumentParser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When the table output uses colors (`--color`).
enum ColorMode: String, CaseIterable, ExpressibleByArgument {
    /// Colors when standard output is a terminal, unless the `NO_COLOR`
    /// environment variable is set or `TERM` is `dumb`.
    case auto
    case always
    case never

    var usesColors: Bool {
        switch self {
        case .always: return true
        case .never: return false
        case .auto:
            let environment = ProcessInfo.processInfo.environment
            if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
            if environment["TERM"] == "dumb" { return false }
            return StandardStreams.outputIsTerminal
        }
    }
}
