import BenchmarkSupport
import Differences

/// An element with an id and a value, as in a table row.
struct Item: Identifiable, Hashable, Sendable {
    var id: Int
    var value: Int
}

/// Two versions of a collection sorted by id: `new` has 1% of the elements
/// of `old` inserted, deleted or updated at random.
struct SortedInputs: Sendable {
    let old: [Item]
    let new: [Item]
    let oldIDs: [Int]
    let newIDs: [Int]

    init(count: Int, seed: UInt64 = 42) {
        var generator = SplitMix64(seed: seed)
        // Even ids, so that insertions can take the odd ids between them.
        let old = (0..<count).map { Item(id: 2 * $0, value: 0) }
        var new: [Item] = []
        new.reserveCapacity(count + count / 100)
        let changeRate = 100
        for item in old {
            guard Int.random(in: 0..<changeRate, using: &generator) == 0 else {
                new.append(item)
                continue
            }
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:  // insertion after the item
                new.append(item)
                new.append(Item(id: item.id + 1, value: 0))
            case 1:  // deletion
                break
            default:  // update
                new.append(Item(id: item.id, value: item.value + 1))
            }
        }
        self.old = old
        self.new = new
        self.oldIDs = old.map(\.id)
        self.newIDs = new.map(\.id)
    }
}

/// Two orderings of one collection: `new` has 1.5% of the elements of
/// `old` inserted, deleted or updated at random (each kind one chance in
/// 200), and another 1% moved to random places.
struct OrderedInputs: Sendable {
    let old: [Item]
    let new: [Item]

    init(count: Int, seed: UInt64 = 7) {
        var generator = SplitMix64(seed: seed)
        let old = (0..<count).map { Item(id: $0, value: 0) }
        var kept: [Item] = []
        var moved: [Item] = []
        var nextID = count
        for item in old {
            switch Int.random(in: 0..<200, using: &generator) {
            case 0:  // insertion after the item
                kept.append(item)
                kept.append(Item(id: nextID, value: 0))
                nextID += 1
            case 1:  // deletion
                break
            case 2:  // update
                kept.append(Item(id: item.id, value: item.value + 1))
            case 3, 4:  // move
                moved.append(item)
            default:
                kept.append(item)
            }
        }
        // Reinsert the moved elements at random positions, in one pass.
        let destinations = moved.map { _ in Int.random(in: 0...kept.count, using: &generator) }
            .sorted()
        moved.shuffle(using: &generator)
        var new: [Item] = []
        new.reserveCapacity(kept.count + moved.count)
        var movedIndex = 0
        for (offset, item) in kept.enumerated() {
            while movedIndex < moved.count, destinations[movedIndex] == offset {
                new.append(moved[movedIndex])
                movedIndex += 1
            }
            new.append(item)
        }
        new.append(contentsOf: moved[movedIndex...])
        self.old = old
        self.new = new
    }
}
