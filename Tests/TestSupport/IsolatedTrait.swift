import Foundation
import Testing

extension Trait where Self == ConditionTrait {
    /// For tests that need the process to themselves:
    /// - tests that measure whether cooperative threads stay free, or that
    ///   rendezvous between connections within a bounded patience, because
    ///   every other test running in parallel occupies the same two
    ///   cooperative threads of this machine;
    /// - exit tests, because Swift Testing reads a child's output with
    ///   blocking reads on cooperative threads: a long child (the leak tests
    ///   open thousands of databases) stalls every `async` test of the run,
    ///   and their bounded waits then fail.
    ///
    /// `swift test` skips them; `.ci/run` runs each group alone, with
    /// `REACTIVESQLITE_ISOLATED_TESTS=1 swift test --filter "ConcurrencyTests|DatabasePoolTests"`,
    /// then `--filter WritersBesideTheWatchTests` alone,
    /// and `REACTIVESQLITE_ISOLATED_TESTS=1 swift test --filter "LeakTests|MisuseExitTests"`
    /// (the exit tests in debug and release builds). `.ci/run` refuses an
    /// exit test in a suite without this trait: a child that traps prints a
    /// backtrace, which took 46 seconds on a loaded machine.
    public static var isolated: Self {
        .enabled(if: ProcessInfo.processInfo.environment["REACTIVESQLITE_ISOLATED_TESTS"] != nil,
                 "needs the process to itself: run by .ci/run with REACTIVESQLITE_ISOLATED_TESTS=1")
    }
}
