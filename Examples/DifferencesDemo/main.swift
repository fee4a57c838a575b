// A tour of the Differences core: the three diff algorithms on small,
// concrete data. Run it with `swift run differences-demo`.

import Differences

struct Player: Identifiable, Equatable, CustomStringConvertible {
    var id: Int
    var name: String
    var score: Int
    var description: String { "\(name)#\(id)(\(score))" }
}

// 1. SortedDifference: synchronize a local table with a server payload,
//    both sorted by id, with the fewest writes.
let local = [
    Player(id: 1, name: "Arthur", score: 100),
    Player(id: 2, name: "Barbara", score: 80),
    Player(id: 4, name: "Dora", score: 60),
]
let server = [
    Player(id: 2, name: "Barbara", score: 95),
    Player(id: 3, name: "Craig", score: 70),
    Player(id: 4, name: "Dora", score: 60),
]
print("1. SortedDifference: local table vs server payload")
for change in SortedDifference(left: local, right: server) {
    switch change {
    case .left(let player):
        print("   DELETE \(player)")
    case .right(let player):
        print("   INSERT \(player)")
    case .common(let old, let new) where old != new:
        print("   UPDATE \(old) -> \(new)")
    case .common(let player, _):
        print("   keep   \(player)")
    }
}

// 2. SetDifferenceScanner: successive snapshots of a live query, turned
//    into inserted / updated / deleted elements (map annotations, caches).
print("2. SetDifferenceScanner: successive snapshots")
var scanner = SetDifferenceScanner<Player, Int>()
for snapshot in [local, server, [server[1]]] {
    let difference = scanner.diff(to: snapshot)
    print("   inserted \(difference.inserted), updated \(difference.updated), deleted \(difference.deleted)")
}

// 3. OrderedDifference: a leaderboard re-sorted by score, as a list view
//    animates it: deletions, insertions, moves and updates.
print("3. OrderedDifference: leaderboard by score")
let before = local.sorted { $0.score > $1.score }
let after = server.sorted { $0.score > $1.score }
let difference = OrderedDifference(from: before, to: after)
print("   before \(before)")
print("   after  \(after)")
print("   deletions \(difference.deletions), insertions \(difference.insertions), moves \(difference.moves), updates \(difference.updates)")
precondition(before.applying(difference.collectionDifference) == after)
print("   applying its CollectionDifference to `before` gives `after`")
