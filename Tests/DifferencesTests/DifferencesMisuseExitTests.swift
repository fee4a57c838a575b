import Differences
import Testing
import TestSupport

/// The algorithms' programmer-error checks: each body runs in a child process
/// that must stop with a message. Isolated (`.ci/run` runs them alone, in
/// debug and release): Swift Testing reads a child's output on cooperative
/// threads, and a child that traps spends seconds printing its backtrace.
@Suite(.isolated) struct DifferencesMisuseExitTests {
    #if DEBUG
    @Test func unsortedLeftInputStopsOnAnAssertionNamingTheSideAndIDs() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            for _ in SortedDifference(left: [1, 5, 3], right: [2, 4]) {}
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("left sequence"))
        #expect(message.contains("id 3 comes after id 5"))
    }

    @Test func duplicateRightIDsStopOnAnAssertionNamingTheSideAndIDs() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            for _ in SortedDifference(left: [1, 5], right: [2, 2]) {}
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("right sequence"))
        #expect(message.contains("id 2 comes after id 2"))
    }

    @Test func anUnsortedKeptSnapshotStopsOnAnAssertionNamingTheLeftSideAndIDs() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let old = [1, 5, 3].map { Item(id: $0, value: 0) }
            var scanner = SetDifferenceScanner(initialElements: old)
            _ = scanner.diff(to: [Item(id: 2, value: 0)])
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("left sequence"))
        #expect(message.contains("id 3 comes after id 5"))
    }

    @Test func duplicateIDsInTheNewSnapshotStopOnAnAssertionNamingTheRightSideAndIDs() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var scanner = SetDifferenceScanner(initialElements: [Item(id: 1, value: 0), Item(id: 5, value: 0)])
            _ = scanner.diff(to: [2, 2].map { Item(id: $0, value: 0) })
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("right sequence"))
        #expect(message.contains("id 2 comes after id 2"))
    }
    #endif

    @Test func duplicateIDsAreAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            _ = OrderedDifference(from: [Item(id: 1, value: 0), Item(id: 1, value: 1)], to: [])
        }
        await #expect(processExitsWith: .failure) {
            _ = OrderedDifference(from: [], to: [Item(id: 2, value: 0), Item(id: 2, value: 1)])
        }
        await #expect(processExitsWith: .failure) {
            _ = OrderedDifference(from: [Item(id: 2, value: 0)], to: [Item(id: 2, value: 0), Item(id: 2, value: 1)])
        }
    }
}
