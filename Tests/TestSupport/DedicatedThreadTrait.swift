import Foundation
import Testing

/// Runs each case of a test on a thread of its own, not on Swift's
/// cooperative pool.
///
/// The pool has as many threads as the machine has cores (two in CI), and
/// every test resumes on it. A test case that computes for seconds
/// without awaiting (a seeded differential test, a property test) holds a
/// pool thread all that time; two of them held both, and the tests that
/// wait for a deadline (a lock held for 20 s, an observation's value)
/// resumed minutes late and failed, dozens at once, on a loaded machine.
/// Under this trait, the test's code runs on its own thread, which the
/// system shares fairly with the others.
public struct DedicatedThreadTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // Each case gets its thread; the suite as a whole needs none.
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let executor = DedicatedThreadExecutor(name: test.name)
        defer { executor.finish() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == DedicatedThreadTrait {
    /// Runs each case of the test, or of every test of the suite, on a
    /// thread of its own (see `DedicatedThreadTrait`).
    public static var onItsOwnThread: Self { DedicatedThreadTrait() }
}

/// A task executor whose jobs run on one thread of its own.
///
/// `@unchecked Sendable`: `jobs` and `isFinished` are only touched with
/// `condition` locked.
final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var isFinished = false
    private var hasExited = false

    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = String("test: \(name)".prefix(15))
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        if hasExited {
            condition.unlock()
            // A job that came after the test ended: it runs elsewhere,
            // as this executor's.
            let executor = asUnownedTaskExecutor()
            DispatchQueue.global().async { job.runSynchronously(on: executor) }
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread end once it ran every job it has.
    func finish() {
        condition.lock()
        isFinished = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty, !isFinished { condition.wait() }
            if jobs.isEmpty {
                hasExited = true
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
