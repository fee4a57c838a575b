import Testing

extension Trait where Self == ConditionTrait {
    /// For suites and tests that run exit tests (`#expect(processExitsWith:)`):
    /// skipped under ThreadSanitizer, run by every other test run.
    ///
    /// While a child process runs, Swift Testing blocks cooperative threads
    /// reading its pipes (its event channel and each observed stream): two of
    /// them, the whole pool on a two-core machine. Under the sanitizer, with
    /// the rest of the suite running in parallel, a child took 25 to 40
    /// seconds, and every async test of the process stalled meanwhile, long
    /// enough for their bounded waits to time out. The sanitizer run looks
    /// for races, which a child process that traps or counts descriptors
    /// does not exercise.
    static var skippedUnderThreadSanitizer: Self {
        .disabled(
            if: isRunningUnderThreadSanitizer,
            "exit tests block the cooperative pool for as long as their child runs: run without --sanitize=thread")
    }
}
