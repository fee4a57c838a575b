import Foundation
import ReactiveSQLite
import Testing

/// A change is what SQLite stores differently: `isStored(as:)` compares
/// storage classes and exact bytes, where `==` compares SQLite's `BINARY`
/// order (1 equals 1.0) and `String` follows canonical equivalence.
@Suite struct StoredValuesTests {
    private func value(_ storage: DatabaseValue.Storage) -> DatabaseValue { DatabaseValue(storage: storage) }

    @Test func valuesAreTheSameOnlyWhenStoredTheSame() {
        let precomposed = value(.text("caf\u{E9}"))
        let decomposed = value(.text("cafe\u{301}"))
        let latin1 = DatabaseValue(textBytes: [0x63, 0x61, 0x66, 0xE9])
        let cases: [(DatabaseValue, DatabaseValue, Bool)] = [
            (value(.null), value(.null), true),
            (value(.integer(1)), value(.integer(1)), true),
            (value(.integer(1)), value(.real(1.0)), false),
            (value(.real(0.5)), value(.real(0.5)), true),
            (value(.text("a")), value(.text("a")), true),
            (value(.text("a")), value(.text("b")), false),
            (value(.text("1")), value(.integer(1)), false),
            (precomposed, decomposed, false),
            (latin1, latin1, true),
            (latin1, DatabaseValue(textBytes: [0x63, 0x61, 0x66, 0xE8]), false),
            // The invalid bytes, repaired, read as U+FFFD: still not the
            // text that holds U+FFFD itself.
            (latin1, value(.text("caf\u{FFFD}")), false),
            (value(.blob(Data([1, 2]))), value(.blob(Data([1, 2]))), true),
            (value(.blob(Data([1, 2]))), value(.text("\u{1}\u{2}")), false),
            (value(.text(String(repeating: "long text ", count: 100))), value(.text(String(repeating: "long text ", count: 100))), true),
        ]
        for (lhs, rhs, same) in cases {
            #expect(lhs.isStored(as: rhs) == same, "\(lhs) and \(rhs)")
            #expect(rhs.isStored(as: lhs) == same, "\(rhs) and \(lhs)")
        }
        let row = Row(["id": 1, "name": "Arthur"])
        #expect(row.isStored(as: Row(["id": 1, "name": "Arthur"])))
        #expect(!row.isStored(as: Row(["id": 1.0, "name": "Arthur"])))
        #expect(!row.isStored(as: Row(["id": 1])))
        #expect(Row(["id": 1, "name": "Arthur"]).changedColumns(from: Row(["id": 1, "name": "Bea"])) == [1])
    }
}
