import Benchmark
import Differences

// Every benchmark runs one diff per iteration over inputs built once, outside
// timing, and checks its result against the baselines' (same counts), so a
// fast but wrong implementation cannot pass unnoticed.

let sizes = [10_000, 100_000, 1_000_000]

func configuration(_ count: Int, slow: Bool = false) -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock],
        timeUnits: .nanoseconds,
        warmupIterations: slow ? 0 : 2,
        maxDuration: .seconds(slow ? 6 : 2),
        maxIterations: slow ? 3 : (count >= 1_000_000 ? 30 : 200)
    )
}

/// Counts of a sorted merge: (left only, right only, common).
struct MergeCounts: Equatable {
    var left = 0
    var right = 0
    var common = 0
    var updated = 0
}

@inline(never)
func check(_ actual: MergeCounts, _ expected: MergeCounts, _ name: String) {
    precondition(actual == expected, "\(name): \(actual) != \(expected)")
}

/// The `[Int]` two-pointer merge: the baseline of `SortedDifference`.
@inline(never)
func baselineMerge(_ left: [Int], _ right: [Int]) -> MergeCounts {
    var counts = MergeCounts()
    var i = 0
    var j = 0
    while i < left.count, j < right.count {
        let l = left[i]
        let r = right[j]
        if l < r {
            counts.left += 1
            i += 1
        } else if r < l {
            counts.right += 1
            j += 1
        } else {
            counts.common += 1
            i += 1
            j += 1
        }
    }
    counts.left += left.count - i
    counts.right += right.count - j
    return counts
}

/// The struct two-pointer merge comparing values: the baseline of `SetDifferenceScanner`.
@inline(never)
func baselineStructMerge(_ left: [Item], _ right: [Item]) -> MergeCounts {
    var counts = MergeCounts()
    var i = 0
    var j = 0
    while i < left.count, j < right.count {
        let l = left[i]
        let r = right[j]
        if l.id < r.id {
            counts.left += 1
            i += 1
        } else if r.id < l.id {
            counts.right += 1
            j += 1
        } else {
            counts.common += 1
            if l != r { counts.updated += 1 }
            i += 1
            j += 1
        }
    }
    counts.left += left.count - i
    counts.right += right.count - j
    return counts
}

/// `SortedDifference` over `[Int]`, counting as `baselineMerge` does.
@inline(never)
func sortedDifferenceCounts(_ left: [Int], _ right: [Int]) -> MergeCounts {
    var counts = MergeCounts()
    for change in SortedDifference(left: left, right: right) {
        switch change {
        case .left: counts.left += 1
        case .right: counts.right += 1
        case .common: counts.common += 1
        }
    }
    return counts
}

/// `SortedDifference` over identifiable structs, counting as
/// `baselineStructMerge` does.
@inline(never)
func sortedDifferenceCounts(_ left: [Item], _ right: [Item]) -> MergeCounts {
    var counts = MergeCounts()
    for change in SortedDifference(left: left, right: right) {
        switch change {
        case .left: counts.left += 1
        case .right: counts.right += 1
        case .common(let old, let new):
            counts.common += 1
            if old != new { counts.updated += 1 }
        }
    }
    return counts
}

/// A Dictionary-keyed set difference.
@inline(never)
func dictionaryDiff(_ old: [Item], _ new: [Item]) -> SetDifference<Item> {
    var oldByID = [Int: Item](minimumCapacity: old.count)
    for item in old { oldByID[item.id] = item }
    var difference = SetDifference<Item>()
    var newIDs = Set<Int>(minimumCapacity: new.count)
    for item in new {
        newIDs.insert(item.id)
        if let oldItem = oldByID[item.id] {
            if oldItem != item { difference.updated.append(item) }
        } else {
            difference.inserted.append(item)
        }
    }
    for item in old where !newIDs.contains(item.id) {
        difference.deleted.append(item)
    }
    return difference
}

@inline(never)
func setDifferenceCounts(_ difference: SetDifference<Item>, common: Int) -> MergeCounts {
    MergeCounts(
        left: difference.deleted.count, right: difference.inserted.count,
        common: common, updated: difference.updated.count)
}

/// A scanner that lives across the iterations of its benchmark.
///
/// `@unchecked Sendable`: package-benchmark runs the iterations of one
/// benchmark one after the other, on one thread; nothing else touches it.
final class LiveScanner: @unchecked Sendable {
    var scanner: SetDifferenceScanner<Item, Int>
    var toNew = true
    init(_ scanner: SetDifferenceScanner<Item, Int>) { self.scanner = scanner }
}

let benchmarks: @Sendable () -> Void = {
    for count in sizes {
        let inputs = SortedInputs(count: count)
        let expected = baselineStructMerge(inputs.old, inputs.new)
        let expectedIDs = MergeCounts(left: expected.left, right: expected.right, common: expected.common)

        Benchmark("SortedDifference.Int n=\(count)", configuration: configuration(count)) { benchmark in
            for _ in benchmark.scaledIterations {
                let counts = sortedDifferenceCounts(inputs.oldIDs, inputs.newIDs)
                check(counts, expectedIDs, "SortedDifference")
                blackHole(counts)
            }
        }

        Benchmark("SortedDifference.Identifiable n=\(count)", configuration: configuration(count)) { benchmark in
            for _ in benchmark.scaledIterations {
                let counts = sortedDifferenceCounts(inputs.old, inputs.new)
                check(counts, expected, "SortedDifference.Identifiable")
                blackHole(counts)
            }
        }

        Benchmark("Baseline.MergeInt n=\(count)", configuration: configuration(count)) { benchmark in
            for _ in benchmark.scaledIterations {
                let counts = baselineMerge(inputs.oldIDs, inputs.newIDs)
                check(counts, expectedIDs, "baselineMerge")
                blackHole(counts)
            }
        }

        // A live scanner, as an observation keeps one: each iteration diffs
        // to the other version (old -> new, then new -> old, ...).
        let reversed = MergeCounts(
            left: expected.right, right: expected.left, common: expected.common, updated: expected.updated)
        let live = LiveScanner(SetDifferenceScanner(initialElements: inputs.old))
        Benchmark("SetDifferenceScanner n=\(count)", configuration: configuration(count)) { benchmark in
            for _ in benchmark.scaledIterations {
                let difference = live.scanner.diff(to: live.toNew ? inputs.new : inputs.old)
                check(
                    setDifferenceCounts(difference, common: expected.common), live.toNew ? expected : reversed,
                    "SetDifferenceScanner")
                live.toNew.toggle()
                blackHole(difference)
            }
        }

        Benchmark("Baseline.MergeStruct n=\(count)", configuration: configuration(count)) { benchmark in
            for _ in benchmark.scaledIterations {
                let counts = baselineStructMerge(inputs.old, inputs.new)
                check(counts, expected, "baselineStructMerge")
                blackHole(counts)
            }
        }

        Benchmark("Baseline.DictionaryDiff n=\(count)", configuration: configuration(count)) { benchmark in
            for _ in benchmark.scaledIterations {
                let difference = dictionaryDiff(inputs.old, inputs.new)
                check(setDifferenceCounts(difference, common: expected.common), expected, "dictionaryDiff")
                blackHole(difference)
            }
        }

        Benchmark("Baseline.SumIDs n=\(count)", configuration: configuration(count)) { benchmark in
            for _ in benchmark.scaledIterations {
                var sum = 0
                for id in inputs.oldIDs { sum &+= id }
                for id in inputs.newIDs { sum &+= id }
                blackHole(sum)
            }
        }

        Benchmark("Baseline.StdlibDifference n=\(count)", configuration: configuration(count, slow: true)) { benchmark in
            for _ in benchmark.scaledIterations {
                let difference = inputs.new.difference(from: inputs.old)
                precondition(inputs.old.applying(difference) == inputs.new)
                blackHole(difference)
            }
        }

        let ordered = OrderedInputs(count: count)
        let orderedExpected = OrderedDifference(from: ordered.old, to: ordered.new)
        precondition(ordered.old.applying(orderedExpected.collectionDifference) == ordered.new)

        Benchmark("OrderedDifference n=\(count)", configuration: configuration(count)) { benchmark in
            for _ in benchmark.scaledIterations {
                let difference = OrderedDifference(from: ordered.old, to: ordered.new)
                precondition(difference.moves.count == orderedExpected.moves.count)
                blackHole(difference)
            }
        }

        // The standard library's diff with moves is quadratic in the worst
        // case and takes seconds at 1M: it runs once per size.
        Benchmark("Baseline.StdlibInferringMoves n=\(count)", configuration: configuration(count, slow: true)) { benchmark in
            for _ in benchmark.scaledIterations {
                let difference = ordered.new.difference(from: ordered.old).inferringMoves()
                blackHole(difference)
            }
        }
    }
}
