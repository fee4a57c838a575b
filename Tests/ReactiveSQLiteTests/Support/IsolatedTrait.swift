import Foundation
import Testing

extension Trait where Self == ConditionTrait {
    /// For tests that measure whether cooperative threads stay free, or that
    /// rendezvous between connections within a bounded patience: they
    /// need the process to themselves, because every other test running in
    /// parallel occupies the same two cooperative threads of this machine.
    /// `swift test` skips them; `.ci/run` runs them alone with
    /// `REACTIVESQLITE_ISOLATED_TESTS=1 swift test --filter "ConcurrencyTests|DatabasePoolTests"`.
    static var isolated: Self {
        .enabled(if: ProcessInfo.processInfo.environment["REACTIVESQLITE_ISOLATED_TESTS"] != nil,
                 "needs the process to itself: run by .ci/run with REACTIVESQLITE_ISOLATED_TESTS=1")
    }
}
