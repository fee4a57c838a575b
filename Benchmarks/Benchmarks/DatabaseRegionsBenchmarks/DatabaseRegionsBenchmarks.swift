import Benchmark
import DatabaseRegions

/// The dispatches to measure: a layout, K, and how many events one iteration
/// of the loop benchmark dispatches (the loop asks K regions per event:
/// 1 000 000 events against 10 000 regions would take minutes, so it
/// dispatches fewer events; figures are per event either way).
private let dispatches: [(layout: DispatchFixture.Layout, observerCount: Int, loopEventCount: Int)] = [
    (.sharedTables, 1, 1_000_000),
    (.sharedTables, 100, 1_000),
    (.sharedTables, 10_000, 1_000),
    (.tablePerObserver, 1, 1_000_000),
    (.tablePerObserver, 10_000, 1_000),
]

/// Built once, on first use, outside measurements (see `setup`).
private let fixtures: [String: DispatchFixture] = Dictionary(
    uniqueKeysWithValues: dispatches.map { layout, observerCount, loopEventCount in
        (
            name(layout, observerCount),
            DispatchFixture(layout: layout, observerCount: observerCount, loopEventCount: loopEventCount)
        )
    })

private func name(_ layout: DispatchFixture.Layout, _ observerCount: Int) -> String {
    switch layout {
    case .sharedTables: "K = \(observerCount)"
    case .tablePerObserver: "table per observer, K = \(observerCount)"
    }
}

/// The number of keys an index benchmark found, per 1 000 events: the
/// matches, which the index's cost is allowed to grow with.
private let keysPerThousandEvents = BenchmarkMetric.custom("Keys per 1000 events", useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    for (layout, observerCount, loopEventCount) in dispatches {
        let name = name(layout, observerCount)

        // One iteration dispatches 1 000 000 events; figures are per event.
        Benchmark(
            "Index dispatch, \(name)",
            configuration: .init(
                metrics: [.wallClock, .throughput, keysPerThousandEvents],
                timeUnits: .nanoseconds,
                warmupIterations: 1,
                scalingFactor: .mega,
                maxDuration: .seconds(4),
                maxIterations: 20),
            closure: { benchmark in
                let fixture = fixtures[name]!
                let events = fixture.events
                var total = 0
                benchmark.startMeasurement()
                for offset in benchmark.scaledIterations {
                    let keys = fixture.index.keys(impactedBy: events[offset])
                    total &+= keys.count
                    blackHole(keys)
                }
                benchmark.stopMeasurement()
                // The fixture checked the index against the loop on a sample.
                precondition(total == fixture.indexTotal, "The index returned \(total) keys, not \(fixture.indexTotal)")
                benchmark.measurement(keysPerThousandEvents, total * 1_000 / events.count)
            },
            setup: { _ = fixtures })

        // The same events through the visitor, which builds no array: what
        // an observation engine calls for every changed row.
        Benchmark(
            "Index visitor, \(name)",
            configuration: .init(
                metrics: [.wallClock, .throughput, .mallocCountTotal],
                timeUnits: .nanoseconds,
                warmupIterations: 1,
                scalingFactor: .mega,
                maxDuration: .seconds(4),
                maxIterations: 20),
            closure: { benchmark in
                let fixture = fixtures[name]!
                let events = fixture.events
                var total = 0
                benchmark.startMeasurement()
                for offset in benchmark.scaledIterations {
                    fixture.index.forEachKey(impactedBy: events[offset]) { key in
                        total &+= 1
                        blackHole(key)
                    }
                }
                benchmark.stopMeasurement()
                precondition(total == fixture.indexTotal, "The visitor found \(total) keys, not \(fixture.indexTotal)")
            },
            setup: { _ = fixtures })

        // One iteration dispatches `loopEventCount` events; figures are per event.
        Benchmark(
            "Loop dispatch, \(name)",
            configuration: .init(
                metrics: [.wallClock, .throughput],
                timeUnits: .nanoseconds,
                warmupIterations: 1,
                scalingFactor: BenchmarkScalingFactor(rawValue: loopEventCount)!,
                maxDuration: .seconds(4),
                maxIterations: 20),
            closure: { benchmark in
                let fixture = fixtures[name]!
                let events = fixture.events
                var total = 0
                benchmark.startMeasurement()
                for offset in benchmark.scaledIterations {
                    let keys = DispatchFixture.bruteForceKeys(in: fixture.regions, impactedBy: events[offset])
                    total &+= keys.count
                    blackHole(keys)
                }
                benchmark.stopMeasurement()
                // The loop must find as many keys as the index on the same events.
                precondition(total == fixture.loopTotal, "The loop returned \(total) keys, not \(fixture.loopTotal)")
            },
            setup: { _ = fixtures })
    }

    // Events that concern nobody: the work per event without matches, at
    // each K, and without allocation (the engine dispatches every changed
    // row). One iteration dispatches 1 000 000 such events.
    for observerCount in [1, 100, 10_000] {
        let name = name(.sharedTables, observerCount)
        Benchmark(
            "Index dispatch, \(name), events concerning nobody",
            configuration: .init(
                metrics: [.wallClock, .throughput, .mallocCountTotal],
                timeUnits: .nanoseconds,
                warmupIterations: 1,
                scalingFactor: .mega,
                maxDuration: .seconds(4),
                maxIterations: 20),
            closure: { benchmark in
                let fixture = fixtures[name]!
                let events = quietEvents[observerCount]!
                var total = 0
                var offset = 0
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    let keys = fixture.index.keys(impactedBy: events[offset])
                    total &+= keys.count
                    offset = offset == events.count - 1 ? 0 : offset + 1
                }
                benchmark.stopMeasurement()
                precondition(total == 0, "Events chosen to concern nobody concerned \(total) keys")
            },
            setup: { _ = quietEvents })
    }
}

/// For K = 1, 100 and 10 000 (`sharedTables`), the events that concern none
/// of the K observers (most of them).
private let quietEvents: [Int: [DatabaseEvent]] = Dictionary(
    uniqueKeysWithValues: [1, 100, 10_000].map { observerCount in
        let fixture = fixtures[name(.sharedTables, observerCount)]!
        let events = fixture.events.filter { fixture.index.keys(impactedBy: $0).isEmpty }
        // The index says "nobody": check it against the loop on a sample.
        for event in events.prefix(1_000) {
            precondition(DispatchFixture.bruteForceKeys(in: fixture.regions, impactedBy: event).isEmpty)
        }
        return (observerCount, events)
    })
