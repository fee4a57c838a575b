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

let benchmarks: @Sendable () -> Void = {
    for (layout, observerCount, loopEventCount) in dispatches {
        let name = name(layout, observerCount)

        // One iteration dispatches 1 000 000 events; figures are per event.
        Benchmark(
            "Index dispatch, \(name)",
            configuration: .init(
                metrics: [.wallClock, .throughput],
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

    // Events that concern nobody must not allocate: the engine dispatches
    // every changed row. One iteration dispatches 1 000 000 such events.
    Benchmark(
        "Index dispatch, K = 10000, events concerning nobody",
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal],
            timeUnits: .nanoseconds,
            warmupIterations: 1,
            scalingFactor: .mega,
            maxDuration: .seconds(4),
            maxIterations: 20),
        closure: { benchmark in
            let fixture = fixtures[name(.sharedTables, 10_000)]!
            let events = quietEvents
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

/// The events that concern none of the 10 000 observers (most of them).
private let quietEvents: [DatabaseEvent] = {
    let fixture = fixtures[name(.sharedTables, 10_000)]!
    let events = fixture.events.filter { fixture.index.keys(impactedBy: $0).isEmpty }
    // The index says "nobody": check it against the loop on a sample.
    for event in events.prefix(1_000) {
        precondition(DispatchFixture.bruteForceKeys(in: fixture.regions, impactedBy: event).isEmpty)
    }
    return events
}()
