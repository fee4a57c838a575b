import DatabaseRegions
import Testing
import TestSupport

/// The package's one implementation of SQLite's comparison rules, against
/// brute force and SQLite's documented cases.
@Suite(.onItsOwnThread) struct SQLiteRulesTests {
    @Test func identifiersCompareASCIILettersWithoutCase() {
        #expect(SQLiteIdentifier.areEqual("Player", "pLAYER"))
        #expect(SQLiteIdentifier.areEqual("_id9", "_ID9"))
        #expect(!SQLiteIdentifier.areEqual("é", "É"))
        #expect(!SQLiteIdentifier.areEqual("a", "a "))
        #expect(!SQLiteIdentifier.areEqual("\u{E9}", "e\u{301}"))  // equal for Swift, not for SQLite
        #expect(!SQLiteIdentifier.areEqual("[", "{"))  // 0x5B and 0x7B differ by 0x20 but are not letters
        #expect(SQLiteIdentifier.lowercased("PlAyer_É") == "player_É")
        let unchanged = "already lower"
        #expect(SQLiteIdentifier.lowercased(unchanged) == unchanged)
    }

    @Test func identifierEqualityMatchesBruteForce() {
        var random = SplitMix64(seed: 7)
        let alphabet: [UInt8] = Array("aAzZ@[`{_é".utf8)
        for _ in 0..<2_000 {
            let count = Int.random(in: 0...4, using: &random)
            let lhs = (0..<count).map { _ in alphabet.randomElement(using: &random)! }
            let rhs = lhs.map { byte in Bool.random(using: &random) ? flipCaseIfLetter(byte) : byte }
                + (Bool.random(using: &random) ? [] : [alphabet.randomElement(using: &random)!])
            let l = String(decoding: lhs, as: UTF8.self), r = String(decoding: rhs, as: UTF8.self)
            let expected = Array(l.utf8).map(lower) == Array(r.utf8).map(lower)
            #expect(SQLiteIdentifier.areEqual(l, r) == expected, "\(l) \(r)")
        }
    }

    @Test func bytesCompareAsMemcmpThenLength() {
        var random = SplitMix64(seed: 11)
        for _ in 0..<5_000 {
            let lhs = randomBytes(&random)
            var rhs = Bool.random(using: &random) ? lhs : randomBytes(&random)
            if Bool.random(using: &random), !rhs.isEmpty { rhs[Int.random(in: 0..<rhs.count, using: &random)] &+= 1 }
            let expected = lhs.lexicographicallyPrecedes(rhs) ? -1 : (lhs == rhs ? 0 : 1)
            let actual = lhs.withUnsafeBytes { l in rhs.withUnsafeBytes { r in SQLiteBinaryOrder.compare(l, r) } }
            #expect(actual == expected, "\(lhs) \(rhs)")
        }
        #expect(SQLiteBinaryOrder.compare(utf8: "abc", "abd") == -1)
        #expect(SQLiteBinaryOrder.compare(utf8: "é", "z") == 1)  // bytes, not characters
    }

    @Test func realsAndIntegersCompareExactly() {
        let big = Int64(1) << 53
        #expect(SQLiteBinaryOrder.compare(real: Double(big), integer: big + 1) == -1)
        #expect(SQLiteBinaryOrder.compare(real: Double(big), integer: big) == 0)
        #expect(SQLiteBinaryOrder.compare(real: 1.5, integer: 1) == 1)
        #expect(SQLiteBinaryOrder.compare(real: -1.5, integer: -1) == -1)
        #expect(SQLiteBinaryOrder.compare(real: 9.3e18, integer: .max) == 1)
        #expect(SQLiteBinaryOrder.compare(real: -9.3e18, integer: .min) == -1)
        #expect(SQLiteBinaryOrder.compare(real: -.infinity, integer: .min) == -1)
    }

    /// Against a reference built on `rounded` and `Int64(exactly:)`.
    @Test func realIntegerComparisonMatchesAReference() {
        func reference(_ real: Double, _ integer: Int64) -> Int {
            if real < -9.223372036854775808e18 { return -1 }
            if real >= 9.223372036854775808e18 { return 1 }
            let truncated = real.rounded(.down)
            let whole = Int64(truncated)
            if whole != integer { return whole < integer ? -1 : 1 }
            return real > truncated ? 1 : 0
        }
        var random = SplitMix64(seed: 5)
        let specials: [Double] = [0, -0.0, 0.5, -0.5, 1, -1, 1.5, -1.5, 9.007199254740992e15, -9.007199254740993e15,
                                  9.223372036854775807e18, -9.223372036854775808e18, 1e300, -1e300, .infinity, -.infinity]
        for _ in 0..<20_000 {
            let integer = Bool.random(using: &random) ? Int64.random(in: -3...3, using: &random) : Int64.random(in: .min ... .max, using: &random)
            let real: Double = switch Int.random(in: 0..<4, using: &random) {
            case 0: specials.randomElement(using: &random)!
            case 1: Double(integer) + [-1, -0.5, 0, 0.5, 1].randomElement(using: &random)!
            case 2: Double(bitPattern: random.next())
            default: Double.random(in: -1e19...1e19, using: &random)
            }
            guard !real.isNaN else { continue }
            #expect(SQLiteBinaryOrder.compare(real: real, integer: integer) == reference(real, integer), "\(real) \(integer)")
            #expect(SQLiteBinaryOrder.exactInteger(real) == Int64(exactly: real), "\(real)")
        }
    }

    @Test func storageClassesOrderNullNumbersTextsBlobs() {
        typealias Value = SQLiteRawValue<String, [UInt8]>
        let ordered: [Value] = [.null, .integer(-5), .real(-4.5), .integer(3), .real(3.25), .text(""), .text("a"), .blob([]), .blob([0])]
        for (i, lhs) in ordered.enumerated() {
            for (j, rhs) in ordered.enumerated() {
                let result = SQLiteBinaryOrder.compare(
                    lhs, rhs, texts: { SQLiteBinaryOrder.compare(utf8: $0, $1) },
                    blobs: { l, r in l.withUnsafeBytes { l in r.withUnsafeBytes { r in SQLiteBinaryOrder.compare(l, r) } } })
                #expect(result == (i < j ? -1 : (i == j ? 0 : 1)), "\(lhs) \(rhs)")
            }
        }
        var one = Hasher(), oneReal = Hasher()
        SQLiteBinaryOrder.hash(Value.integer(1), into: &one, text: { _, _ in }, blob: { _, _ in })
        SQLiteBinaryOrder.hash(Value.real(1), into: &oneReal, text: { _, _ in }, blob: { _, _ in })
        #expect(one.finalize() == oneReal.finalize())
    }

    private func lower(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }
    private func flipCaseIfLetter(_ byte: UInt8) -> UInt8 {
        (65...90).contains(byte) ? byte + 32 : ((97...122).contains(byte) ? byte - 32 : byte)
    }
    private func randomBytes(_ random: inout SplitMix64) -> [UInt8] {
        (0..<Int.random(in: 0...20, using: &random)).map { _ in UInt8.random(in: 0...3, using: &random) == 0 ? 0xFF : UInt8.random(in: 0...2, using: &random) }
    }
}
