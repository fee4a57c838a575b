import Foundation
import TestSupport
import Testing

/// The child processes of the tests: an exit is seen whatever other
/// children run. With Foundation's `Process`, a child started on another
/// thread at the wrong moment kept the socket that tells the parent of the
/// first child's exit, which was then seen only when the second child
/// ended (a watch's early SIGTERM and a `sqlite3` shell seemed to hang).
// Three minutes: their children start on a machine that the parallel debug
// run keeps busy; with one, all four exceeded it once (121 s), waiting.
@Suite(.timeLimit(.minutes(3)))
struct SpawnedProcessTests {
    /// A descriptor the parent left open without close-on-exec, as
    /// Foundation's socket is while another thread starts a child, does not
    /// reach the child: it holds its three standard streams and nothing else.
    @Test func aChildHoldsOnlyItsStandardStreams() async throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let child = try SpawnedProcess("cat", [], standardInput: .pipe, standardOutput: .pipe, standardError: .pipe)
        // Its startup holds descriptors of its own for a moment (the
        // dynamic loader's libraries, the locale archive): a listing made
        // then showed a "3" (once, in a loaded CI run). Wait for it to hold
        // its three streams alone; a descriptor it inherited would stay.
        let path = "/proc/\(child.processIdentifier)/fd"
        let deadline = ContinuousClock.now + .seconds(10)
        var descriptors = try FileManager.default.contentsOfDirectory(atPath: path)
        while descriptors.sorted() != ["0", "1", "2"], ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
            descriptors = try FileManager.default.contentsOfDirectory(atPath: path)
        }
        #expect(descriptors.sorted() == ["0", "1", "2"])
        close(try #require(child.inputWriter))
        #expect(await child.waitForExit(timeout: .seconds(30)) == .exit(0))
        for reader in [child.outputReader, child.errorReader] { if let reader { close(reader) } }
    }

    /// A child that ends is seen to end while a child started after it
    /// still runs, and its output reaches its end.
    @Test func anExitIsSeenWhileALaterChildRuns() async throws {
        let first = try SpawnedProcess("cat", [], standardInput: .pipe, standardOutput: .pipe)
        let second = try SpawnedProcess("cat", [], standardInput: .pipe)
        defer { if let input = second.inputWriter { close(input) } }
        close(try #require(first.inputWriter))
        #expect(await first.waitForExit(timeout: .seconds(30)) == .exit(0))
        let reader = try #require(first.outputReader)
        var byte: UInt8 = 0
        #expect(read(reader, &byte, 1) == 0, "the first child's output is at its end")
        close(reader)
        #expect(second.ending == nil)
    }

    @Test func runCollectsBothStreamsAndTheStatus() async throws {
        let outcome = try await SpawnedProcess.run("sh", ["-c", "cat; echo oops >&2; exit 3"], input: "hello\n")
        #expect(outcome.termination == .exit(3))
        #expect(outcome.output == "hello\n")
        #expect(outcome.error == "oops\n")
        let killed = try SpawnedProcess.runBlocking("sh", ["-c", "kill -TERM $$"])
        #expect(killed.termination == .signal(SIGTERM))
    }

    /// More output than a pipe holds on both streams: neither read waits
    /// for the other.
    @Test func aChildThatFillsBothPipesEnds() async throws {
        let script = "head -c 200000 /dev/zero; head -c 200000 /dev/zero >&2"
        let outcome = try await SpawnedProcess.run("sh", ["-c", script])
        #expect(outcome.termination == .exit(0))
        #expect(outcome.output.utf8.count == 200_000)
        #expect(outcome.error.utf8.count == 200_000)
    }
}
