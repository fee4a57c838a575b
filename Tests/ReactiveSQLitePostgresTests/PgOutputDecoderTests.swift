import Foundation
import ReactiveSQLitePostgres
import TestSupport
import Testing

/// The pgoutput decoder: every message PostgreSQL 15 sent in the recorded
/// scenarios (`Fixtures/*.txt`, recorded by `Fixtures/record.sh`) decodes to
/// exactly what the scenario did, encodes back to the same bytes, and no
/// input, however malformed, makes the decoder trap or allocate more than
/// it holds.
@Suite struct PgOutputDecoderTests {
    // MARK: - Recorded scenarios

    @Test func insertsOfTwoTransactionsDescribeTheTableOnce() throws {
        let messages = try Fixture("insert").decoded()
        let player = try Self.relationID("player", in: messages)
        #expect(
            try Self.transcript(messages) == [
                Self.begin,
                .relation(Self.player(id: player)),
                .insert(relationID: player, new: Self.tuple(.text("1"), .text("Arthur"), .text("10"))),
                .insert(relationID: player, new: Self.tuple(.text("2"), .text("Barbara"), .null)),
                Self.commit,
                Self.begin,
                .insert(relationID: player, new: Self.tuple(.text("3"), .text("Craig"), .text("30"))),
                Self.commit,
            ])
    }

    @Test func anUpdateThatKeepsTheKeySendsNoOldRow() throws {
        let messages = try Fixture("update").decoded()
        let player = try Self.relationID("player", in: messages)
        #expect(
            try Self.transcript(messages) == [
                Self.begin,
                .relation(Self.player(id: player)),
                .update(relationID: player, old: nil, new: Self.tuple(.text("1"), .text("Arthur"), .text("11"))),
                Self.commit,
            ])
    }

    @Test func anUpdateOfTheKeySendsTheOldKey() throws {
        let messages = try Fixture("update-key").decoded()
        let membership = try Self.relationID("membership", in: messages)
        let relation = PgOutputRelation(
            id: membership, namespace: "public", name: "membership", replicaIdentity: Self.identityDefault,
            columns: [
                .init(isKey: true, name: "team_id", typeOID: TypeOID.integer),
                .init(isKey: true, name: "player_id", typeOID: TypeOID.integer),
                .init(isKey: false, name: "role", typeOID: TypeOID.text),
            ])
        #expect(
            try Self.transcript(messages) == [
                Self.begin,
                .relation(relation),
                .update(
                    relationID: membership,
                    old: .key(Self.tuple(.text("1"), .text("1"), .null)),
                    new: Self.tuple(.text("1"), .text("2"), .text("coach"))),
                Self.commit,
            ])
    }

    @Test func replicaIdentityFullSendsTheWholeOldRow() throws {
        let messages = try Fixture("replica-identity-full").decoded()
        let audit = try Self.relationID("audit", in: messages)
        let relation = PgOutputRelation(
            id: audit, namespace: "public", name: "audit", replicaIdentity: UInt8(ascii: "f"),
            columns: [
                .init(isKey: true, name: "id", typeOID: TypeOID.integer),
                .init(isKey: true, name: "note", typeOID: TypeOID.text),
                .init(isKey: true, name: "amount", typeOID: TypeOID.bigint),
            ])
        #expect(
            try Self.transcript(messages) == [
                Self.begin,
                .relation(relation),
                .update(
                    relationID: audit,
                    old: .row(Self.tuple(.text("1"), .text("first"), .text("100"))),
                    new: Self.tuple(.text("1"), .text("changed"), .text("100"))),
                Self.commit,
                Self.begin,
                .delete(relationID: audit, old: .row(Self.tuple(.text("2"), .null, .text("200")))),
                Self.commit,
            ])
    }

    @Test func replicaIdentityUsingAnIndexKeysOnItsColumns() throws {
        let messages = try Fixture("replica-identity-index").decoded()
        let badge = try Self.relationID("badge", in: messages)
        let relation = PgOutputRelation(
            id: badge, namespace: "public", name: "badge", replicaIdentity: UInt8(ascii: "i"),
            columns: [
                .init(isKey: false, name: "id", typeOID: TypeOID.integer),
                .init(isKey: true, name: "code", typeOID: TypeOID.text),
                .init(isKey: false, name: "label", typeOID: TypeOID.text),
            ])
        #expect(
            try Self.transcript(messages) == [
                Self.begin,
                .relation(relation),
                .update(
                    relationID: badge,
                    old: .key(Self.tuple(.null, .text("gold"), .null)),
                    new: Self.tuple(.text("1"), .text("GOLD"), .text("Gold"))),
                Self.commit,
                Self.begin,
                .delete(relationID: badge, old: .key(Self.tuple(.null, .text("GOLD"), .null))),
                Self.commit,
            ])
    }

    @Test func aDeleteSendsTheOldKey() throws {
        let messages = try Fixture("delete").decoded()
        let player = try Self.relationID("player", in: messages)
        #expect(
            try Self.transcript(messages) == [
                Self.begin,
                .relation(Self.player(id: player)),
                .delete(relationID: player, old: .key(Self.tuple(.text("2"), .null, .null))),
                Self.commit,
            ])
    }

    @Test func aTruncateListsItsTablesAndOptions() throws {
        let messages = try Fixture("truncate").decoded()
        let player = try Self.relationID("player", in: messages)
        let team = try Self.relationID("team", in: messages)
        let teamRelation = PgOutputRelation(
            id: team, namespace: "public", name: "team", replicaIdentity: Self.identityDefault,
            columns: [
                .init(isKey: true, name: "id", typeOID: TypeOID.integer),
                .init(isKey: false, name: "name", typeOID: TypeOID.text),
            ])
        #expect(
            try Self.transcript(messages) == [
                Self.begin,
                .relation(Self.player(id: player)),
                .relation(teamRelation),
                // CASCADE (1) | RESTART IDENTITY (2)
                .truncate(options: 3, relationIDs: [player, team]),
                Self.commit,
                Self.begin,
                // A truncated table has a new file: PostgreSQL describes it again.
                .relation(teamRelation),
                .truncate(options: 0, relationIDs: [team]),
                Self.commit,
            ])
    }

    @Test func aUserDefinedTypeIsDescribedBeforeItsTable() throws {
        let messages = try Fixture("enum-type").decoded()
        let player = try Self.relationID("player", in: messages)
        let mood = try #require(
            messages.lazy.compactMap { message -> UInt32? in
                if case .type(let oid, _, _) = message { oid } else { nil }
            }.first)
        #expect(mood >= 16384, "a type created by a user has an OID past the built-in ones")
        var relation = Self.player(id: player)
        relation.columns.append(.init(isKey: false, name: "mood", typeOID: mood))
        #expect(
            try Self.transcript(messages) == [
                Self.begin,
                .type(oid: mood, namespace: "public", name: "mood"),
                .relation(relation),
                .insert(relationID: player, new: Self.tuple(.text("1"), .text("Arthur"), .text("10"), .text("happy"))),
                Self.commit,
            ])
    }

    @Test func valuesOfEveryTypeInTheirTextRepresentation() throws {
        let messages = try Fixture("types").decoded()
        let typed = try Self.relationID("typed", in: messages)
        let nulls = [PgOutputValue](repeating: .null, count: 11)
        #expect(
            try Self.transcript(messages) == [
                Self.begin,
                .relation(Self.typed(id: typed)),
                .insert(
                    relationID: typed,
                    new: PgOutputTuple(values: [
                        .text("1"), .text("-32768"), .text("2147483647"), .text("-9223372036854775808"),
                        .text("héllo, wörld ✓"), .text("varchar"),
                        .text("123456789012345678901234567890.123456789012345678901234567890"), .text("-0.500"),
                        .text("t"), .text(#"\x00ff10"#),
                        .text("2024-02-29 13:45:30.123456"), .text("2024-02-29 11:45:30.5+00"),
                    ])),
                Self.commit,
                Self.begin,
                .insert(relationID: typed, new: PgOutputTuple(values: [.text("2")] + nulls)),
                Self.commit,
                Self.begin,
                .insert(
                    relationID: typed,
                    new: PgOutputTuple(values: [
                        .text("3"), .null, .null, .null, .text(""), .null, .text("NaN"), .null, .text("f"),
                        .text(#"\x"#), .null, .null,
                    ])),
                Self.commit,
            ])
    }

    @Test func valuesOfEveryTypeInTheirBinaryRepresentation() throws {
        let messages = try Fixture("binary").decoded()
        let typed = try Self.relationID("typed", in: messages)
        let nulls = [PgOutputValue](repeating: .null, count: 11)
        // numeric: digits in base 10 000, weight of the first digit, sign
        // (0x4000 negative, 0xC000 NaN), display scale.
        let large = Self.numeric(
            weight: 7, sign: 0, scale: 30,
            digits: [12, 3456, 7890, 1234, 5678, 9012, 3456, 7890, 1234, 5678, 9012, 3456, 7890, 1234, 5678, 9000])
        #expect(
            try Self.transcript(messages) == [
                Self.begin,
                .relation(Self.typed(id: typed)),
                .insert(
                    relationID: typed,
                    new: PgOutputTuple(values: [
                        .binary(Self.bigEndian(Int32(1))), .binary(Self.bigEndian(Int16.min)),
                        .binary(Self.bigEndian(Int32.max)), .binary(Self.bigEndian(Int64.min)),
                        .binary(Array("héllo, wörld ✓".utf8)), .binary(Array("varchar".utf8)),
                        large, Self.numeric(weight: -1, sign: 0x4000, scale: 3, digits: [5000]),
                        .binary([1]), .binary([0x00, 0xFF, 0x10]),
                        // Microseconds since 2000-01-01 00:00:00 (UTC for timestamptz).
                        .binary(Self.bigEndian(Int64(762_529_530_123_456))),
                        .binary(Self.bigEndian(Int64(762_522_330_500_000))),
                    ])),
                Self.commit,
                Self.begin,
                .insert(relationID: typed, new: PgOutputTuple(values: [.binary(Self.bigEndian(Int32(2)))] + nulls)),
                Self.commit,
                Self.begin,
                .insert(
                    relationID: typed,
                    new: PgOutputTuple(values: [
                        .binary(Self.bigEndian(Int32(3))), .null, .null, .null, .binary([]), .null,
                        Self.numeric(weight: 0, sign: 0xC000, scale: 0, digits: []), .null, .binary([0]), .binary([]),
                        .null, .null,
                    ])),
                Self.commit,
            ])
    }

    @Test func anUnmodifiedValueStoredOutOfLineIsNotSent() throws {
        let messages = try Fixture("toast").decoded()
        let toasted = try Self.relationID("toasted", in: messages)
        let relation = PgOutputRelation(
            id: toasted, namespace: "public", name: "toasted", replicaIdentity: Self.identityDefault,
            columns: [
                .init(isKey: true, name: "id", typeOID: TypeOID.integer),
                .init(isKey: false, name: "counter", typeOID: TypeOID.integer),
                .init(isKey: false, name: "body", typeOID: TypeOID.text),
            ])
        #expect(
            try Self.transcript(messages) == [
                Self.begin,
                .relation(relation),
                .update(relationID: toasted, old: nil, new: Self.tuple(.text("1"), .text("1"), .unchangedToast)),
                Self.commit,
            ])
    }

    @Test func logicalMessagesInAndOutsideTransactions() throws {
        let messages = try Fixture("message").decoded()
        let player = try Self.relationID("player", in: messages)
        #expect(
            try Self.transcript(messages) == [
                Self.begin,
                .relation(Self.player(id: player)),
                .insert(relationID: player, new: Self.tuple(.text("1"), .text("Arthur"), .text("10"))),
                .message(
                    transactional: true, lsn: 0, prefix: "reactive", content: Array("in a transaction".utf8)),
                Self.commit,
                .message(transactional: false, lsn: 0, prefix: "reactive.raw", content: [0x00, 0xFF, 0x0A]),
                Self.begin,
                .insert(relationID: player, new: Self.tuple(.text("2"), .text("Barbara"), .text("20"))),
                Self.commit,
            ])
    }

    @Test func aReplicatedTransactionNamesItsOrigin() throws {
        let messages = try Fixture("origin").decoded()
        let player = try Self.relationID("player", in: messages)
        #expect(
            try Self.transcript(messages) == [
                Self.begin,
                .origin(lsn: 0x1234_5678, name: "upstream"),
                .relation(Self.player(id: player)),
                .insert(relationID: player, new: Self.tuple(.text("1"), .text("Arthur"), .text("10"))),
                Self.commit,
            ])
        // The origin's commit time replaces the local one: 2024-01-01 00:00:00 UTC.
        guard case .begin(let begin) = messages.first else { throw Failure("no begin") }
        #expect(begin.commitTime == 757_382_400_000_000)
    }

    // MARK: - Round trips

    @Test(arguments: Fixture.names) func everyRecordedMessageEncodesBackToItsBytes(name: String) throws {
        for bytes in try Fixture(name).messages {
            let message = try PgOutputMessage(decoding: bytes)
            #expect(PgOutputEncoding.bytes(of: message) == bytes, "\(message)")
        }
    }

    @Test func randomMessagesDecodeToThemselves() throws {
        var generator = SplitMix64(seed: 0x7067_6F75_7470_7574)
        for _ in 0..<2_000 {
            let message = PgOutputEncoding.randomMessage(using: &generator)
            #expect(try PgOutputMessage(decoding: PgOutputEncoding.bytes(of: message)) == message)
        }
    }

    @Test func anyCollectionOfBytesDecodes() throws {
        let bytes = try Fixture("types").messages[2]
        let expected = try PgOutputMessage(decoding: bytes)
        #expect(try PgOutputMessage(decoding: Data(bytes)) == expected)
        #expect(try PgOutputMessage(decoding: ([0xAA] + bytes + [0xAA]).dropFirst().dropLast()) == expected)
        #expect(try PgOutputMessage(decoding: bytes.lazy.map { $0 }) == expected)
    }

    // MARK: - Malformed input

    /// A malformed message, and where and why decoding it must fail.
    struct Malformed: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var offset: Int
        var reasonPrefix: String
        var testDescription: String { name }
    }

    static let malformed: [Malformed] = {
        // Tag, relation ID, new tuple.
        let insertPrefix: [UInt8] = Array("I".utf8) + [0, 0, 0x40, 0x01] + Array("N".utf8)
        // Tag, relation ID, namespace "", name "t".
        let relationPrefix: [UInt8] = Array("R".utf8) + [0, 0, 0x40, 0x01, 0, 0x74, 0]
        return [
            Malformed(name: "empty", bytes: [], offset: 0, reasonPrefix: "truncated: the message tag"),
            Malformed(name: "unknown tag", bytes: Array("X".utf8), offset: 0, reasonPrefix: "unknown message tag 'X'"),
            Malformed(
                name: "stream start (protocol version 2)", bytes: Array("S".utf8) + [0, 0, 0, 1, 1], offset: 0,
                reasonPrefix: "unknown message tag 'S'"),
            Malformed(
                name: "truncated begin", bytes: Array("B".utf8) + [0, 0, 0], offset: 1,
                reasonPrefix: "truncated: the final LSN needs 8 bytes, 3 remain"),
            Malformed(
                name: "trailing byte", bytes: insertPrefix + [0, 1] + Array("n".utf8) + [0], offset: 9,
                reasonPrefix: "1 trailing bytes"),
            Malformed(
                name: "more values than bytes", bytes: insertPrefix + [0x7F, 0xFF] + Array("nnn".utf8), offset: 6,
                reasonPrefix: "32767 values announced, but 3 bytes remain"),
            Malformed(
                name: "negative number of values", bytes: insertPrefix + [0xFF, 0xFF], offset: 6,
                reasonPrefix: "the number of values is negative (-1)"),
            Malformed(
                name: "value longer than the message",
                bytes: insertPrefix + [0, 1] + Array("t".utf8) + [0x7F, 0xFF, 0xFF, 0xFF, 0x31], offset: 13,
                reasonPrefix: "truncated: value 0 needs 2147483647 bytes, 1 remain"),
            Malformed(
                name: "negative value length",
                bytes: insertPrefix + [0, 1] + Array("b".utf8) + [0xFF, 0xFF, 0xFF, 0xFF], offset: 9,
                reasonPrefix: "the length of value 0 is negative (-1)"),
            Malformed(
                name: "text that is not UTF-8", bytes: insertPrefix + [0, 1] + Array("t".utf8) + [0, 0, 0, 1, 0xC3],
                offset: 13, reasonPrefix: "the text of value 0 is not valid UTF-8"),
            Malformed(
                name: "unknown value kind", bytes: insertPrefix + [0, 1] + Array("x".utf8), offset: 8,
                reasonPrefix: "unknown kind 'x' of value 0"),
            Malformed(
                name: "insert without its new tuple", bytes: Array("I".utf8) + [0, 0, 0x40, 0x01] + Array("K".utf8),
                offset: 5, reasonPrefix: "unknown tuple kind 'K' (expected 'N')"),
            Malformed(
                name: "update with an unknown old tuple", bytes: Array("U".utf8) + [0, 0, 0x40, 0x01, 0x00],
                offset: 5, reasonPrefix: "unknown tuple kind 0x00 (expected 'K', 'O' or 'N')"),
            Malformed(
                name: "delete without its old tuple", bytes: Array("D".utf8) + [0, 0, 0x40, 0x01] + Array("N".utf8),
                offset: 5, reasonPrefix: "unknown tuple kind 'N' (expected 'K' or 'O')"),
            Malformed(
                name: "string without its NUL", bytes: Array("Y".utf8) + [0, 0, 0x40, 0x48] + Array("public".utf8),
                offset: 5, reasonPrefix: "truncated: the type namespace has no terminating NUL"),
            Malformed(
                name: "unknown replica identity", bytes: relationPrefix + Array("x".utf8), offset: 8,
                reasonPrefix: "unknown replica identity 'x'"),
            Malformed(
                name: "more columns than bytes",
                bytes: relationPrefix + Array("d".utf8) + [0, 2] + [UInt8](repeating: 0, count: 19),
                offset: 9, reasonPrefix: "2 columns announced, but 19 bytes remain (at least 10 each)"),
            Malformed(
                name: "unknown column flags",
                bytes: relationPrefix + Array("d".utf8) + [0, 1, 2, 0x61, 0] + [UInt8](repeating: 0, count: 8),
                offset: 11, reasonPrefix: "unknown flags 0x02 of column 0"),
            Malformed(
                name: "more relations than bytes",
                bytes: Array("T".utf8) + [0x7F, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0x40, 0x01], offset: 1,
                reasonPrefix: "2147483647 relations announced, but 4 bytes remain (at least 4 each)"),
            Malformed(
                name: "message content longer than the message",
                bytes: Array("M".utf8) + [1] + [UInt8](repeating: 0, count: 8) + [0x70, 0] + [0x7F, 0xFF, 0xFF, 0xFF],
                offset: 16, reasonPrefix: "truncated: the message content needs 2147483647 bytes, 0 remain"),
            Malformed(
                name: "unknown message flags", bytes: Array("M".utf8) + [2], offset: 1,
                reasonPrefix: "unknown message flags 0x02"),
        ]
    }()

    @Test(arguments: malformed) func malformedInputThrowsAtTheFieldAtFault(_ malformed: Malformed) {
        #expect {
            try PgOutputMessage(decoding: malformed.bytes)
        } throws: { error in
            guard let error = error as? PgOutputDecodingError else { return false }
            return error.offset == malformed.offset && error.reason.hasPrefix(malformed.reasonPrefix)
                && error.description.contains("byte \(malformed.offset):")
        }
    }

    @Test(arguments: Fixture.names) func everyTruncatedMessageThrows(name: String) throws {
        for bytes in try Fixture(name).messages {
            for length in 0..<bytes.count {
                #expect(throws: PgOutputDecodingError.self) { try PgOutputMessage(decoding: bytes[..<length]) }
            }
        }
    }

    // MARK: - Fuzz

    /// Whether decoding `bytes` returned, or threw an error at an offset
    /// inside the input (it must never trap).
    static func decodesOrThrowsInside(_ bytes: [UInt8]) -> Bool {
        do {
            _ = try PgOutputMessage(decoding: bytes)
            return true
        } catch {
            return error.offset >= 0 && error.offset <= bytes.count
        }
    }

    @Test(arguments: Fixture.names) func everyMessageWithAFlippedByteDecodesOrThrows(name: String) throws {
        var outside = 0
        for bytes in try Fixture(name).messages {
            for index in bytes.indices {
                for mask: UInt8 in [0xFF, 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80] {
                    var flipped = bytes
                    flipped[index] ^= mask
                    if !Self.decodesOrThrowsInside(flipped) { outside += 1 }
                }
            }
        }
        #expect(outside == 0)
    }

    @Test func randomBytesDecodeOrThrow() throws {
        var generator = SplitMix64(seed: 0xF022_0000_0000_0001)
        let samples = try Fixture.names.flatMap { try Fixture($0).messages }
        // Bytes that the protocol gives meaning to, so that random inputs
        // get past the first fields: tags, kinds, small counts and lengths.
        let meaningful = Array("BCORYIUDTMNKOntub".utf8) + [0, 0, 0, 1, 2, 3, 0xFF]
        var outside = 0
        for round in 0..<200_000 {
            var bytes: [UInt8]
            switch round % 3 {
            case 0:
                // Uniformly random bytes.
                bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                    UInt8(truncatingIfNeeded: generator.next())
                }
            case 1:
                // A valid tag, then bytes mostly drawn from the meaningful ones.
                bytes = [meaningful[Int.random(in: 0..<10, using: &generator)]]
                for _ in 0..<Int.random(in: 0...40, using: &generator) {
                    bytes.append(
                        Bool.random(using: &generator)
                            ? meaningful[Int.random(in: meaningful.indices, using: &generator)]
                            : UInt8(truncatingIfNeeded: generator.next()))
                }
            default:
                // A recorded message with a few random bytes changed, added or removed.
                bytes = samples[Int.random(in: samples.indices, using: &generator)]
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let index = Int.random(in: 0...bytes.count, using: &generator)
                    let byte = meaningful[Int.random(in: meaningful.indices, using: &generator)]
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0 where index < bytes.count: bytes[index] = byte
                    case 1: bytes.insert(byte, at: index)
                    default: if index < bytes.count { bytes.remove(at: index) }
                    }
                }
            }
            if !Self.decodesOrThrowsInside(bytes) { outside += 1 }
        }
        #expect(outside == 0)
    }
}

// MARK: - Fixtures

/// A scenario recorded by `Fixtures/record.sh`: its messages, in the order
/// PostgreSQL sent them.
private struct Fixture {
    /// Every recorded scenario.
    static let names = [
        "insert", "update", "update-key", "replica-identity-full", "replica-identity-index", "delete", "truncate",
        "enum-type", "types", "binary", "toast", "message", "origin",
    ]

    /// The bytes of each message.
    let messages: [[UInt8]]

    /// Reads `Fixtures/<name>.txt`: `#` comment lines, then one message per
    /// line, in hexadecimal.
    init(_ name: String) throws {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "txt", subdirectory: "Fixtures"))
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        messages = try lines.filter { !$0.hasPrefix("#") }.map { line in
            try #require(Self.bytes(hex: line), "not hexadecimal: \(line)")
        }
        try #require(!messages.isEmpty, "\(name).txt has no message")
    }

    /// The decoded messages.
    func decoded() throws -> [PgOutputMessage] {
        try messages.map { try PgOutputMessage(decoding: $0) }
    }

    /// The bytes of an even number of hexadecimal digits.
    static func bytes(hex: Substring) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// A failure of a test's own assumption.
private struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

// MARK: - Expected values

/// OIDs of PostgreSQL's built-in types (`pg_type`).
private enum TypeOID {
    static let boolean: UInt32 = 16
    static let bytea: UInt32 = 17
    static let bigint: UInt32 = 20
    static let smallint: UInt32 = 21
    static let integer: UInt32 = 23
    static let text: UInt32 = 25
    static let varchar: UInt32 = 1043
    static let timestamp: UInt32 = 1114
    static let timestamptz: UInt32 = 1184
    static let numeric: UInt32 = 1700
}

extension PgOutputDecoderTests {
    /// Where `transcript` puts each Begin and Commit, once checked.
    static let begin = PgOutputMessage.begin(PgOutputBegin(finalLSN: 0, commitTime: 0, xid: 0))
    static let commit = PgOutputMessage.commit(PgOutputCommit(commitLSN: 0, endLSN: 0, commitTime: 0))

    static let identityDefault = UInt8(ascii: "d")

    static func tuple(_ values: PgOutputValue...) -> PgOutputTuple {
        PgOutputTuple(values: values)
    }

    /// `CREATE TABLE player (id integer PRIMARY KEY, name text NOT NULL, score integer)`.
    static func player(id: UInt32) -> PgOutputRelation {
        PgOutputRelation(
            id: id, namespace: "public", name: "player", replicaIdentity: identityDefault,
            columns: [
                .init(isKey: true, name: "id", typeOID: TypeOID.integer),
                .init(isKey: false, name: "name", typeOID: TypeOID.text),
                .init(isKey: false, name: "score", typeOID: TypeOID.integer),
            ])
    }

    /// The table of every type (`TYPED` in `record.sh`).
    static func typed(id: UInt32) -> PgOutputRelation {
        PgOutputRelation(
            id: id, namespace: "public", name: "typed", replicaIdentity: identityDefault,
            columns: [
                .init(isKey: true, name: "id", typeOID: TypeOID.integer),
                .init(isKey: false, name: "small", typeOID: TypeOID.smallint),
                .init(isKey: false, name: "regular", typeOID: TypeOID.integer),
                .init(isKey: false, name: "big", typeOID: TypeOID.bigint),
                .init(isKey: false, name: "txt", typeOID: TypeOID.text),
                // varchar(n): n + 4 (the length word).
                .init(isKey: false, name: "var", typeOID: TypeOID.varchar, typeModifier: 24),
                .init(isKey: false, name: "num", typeOID: TypeOID.numeric),
                // numeric(p, s): (p << 16 | s) + 4.
                .init(isKey: false, name: "num_scaled", typeOID: TypeOID.numeric, typeModifier: (12 << 16 | 3) + 4),
                .init(isKey: false, name: "flag", typeOID: TypeOID.boolean),
                .init(isKey: false, name: "data", typeOID: TypeOID.bytea),
                .init(isKey: false, name: "ts", typeOID: TypeOID.timestamp),
                .init(isKey: false, name: "tstz", typeOID: TypeOID.timestamptz),
            ])
    }

    /// The big-endian bytes of an integer.
    static func bigEndian(_ value: some FixedWidthInteger) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }

    /// The binary representation of a numeric (`numeric_send`).
    static func numeric(weight: Int16, sign: UInt16, scale: UInt16, digits: [Int16]) -> PgOutputValue {
        .binary(
            bigEndian(Int16(digits.count)) + bigEndian(weight) + bigEndian(sign) + bigEndian(scale)
                + digits.flatMap { bigEndian($0) })
    }

    /// The ID of the first relation named `name`.
    static func relationID(_ name: String, in messages: [PgOutputMessage]) throws -> UInt32 {
        for case .relation(let relation) in messages where relation.name == name {
            return relation.id
        }
        throw Failure("no relation \(name)")
    }

    /// The messages with each Begin and Commit replaced by `begin` and
    /// `commit`, and the LSN of each logical message by 0, once their
    /// values are checked: a Begin opens each transaction and its Commit
    /// closes it, with the same commit LSN and time; LSNs grow along the
    /// stream; transaction IDs grow; relations, types, origins and changes
    /// come inside transactions.
    static func transcript(
        _ messages: [PgOutputMessage], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [PgOutputMessage] {
        var open: PgOutputBegin?
        var position: UInt64 = 0
        var lastXID: UInt32 = 0
        var transcript: [PgOutputMessage] = []
        for message in messages {
            switch message {
            case .begin(let begin):
                #expect(open == nil, "a Begin inside a transaction", sourceLocation: sourceLocation)
                #expect(begin.finalLSN > position, sourceLocation: sourceLocation)
                #expect(begin.xid > lastXID, sourceLocation: sourceLocation)
                #expect(begin.commitTime > 0, sourceLocation: sourceLocation)
                open = begin
                lastXID = begin.xid
                transcript.append(Self.begin)
            case .commit(let commit):
                let begin = try #require(open, "a Commit outside a transaction", sourceLocation: sourceLocation)
                #expect(commit.flags == 0, sourceLocation: sourceLocation)
                #expect(commit.commitLSN == begin.finalLSN, sourceLocation: sourceLocation)
                #expect(commit.endLSN > commit.commitLSN, sourceLocation: sourceLocation)
                #expect(commit.commitTime == begin.commitTime, sourceLocation: sourceLocation)
                open = nil
                position = commit.endLSN
                transcript.append(Self.commit)
            case .message(let transactional, let lsn, let prefix, let content):
                if transactional {
                    let begin = try #require(open, "a transactional message outside", sourceLocation: sourceLocation)
                    #expect(lsn > position && lsn <= begin.finalLSN, sourceLocation: sourceLocation)
                } else {
                    #expect(open == nil, "a non-transactional message inside", sourceLocation: sourceLocation)
                    #expect(lsn > position, sourceLocation: sourceLocation)
                    position = lsn
                }
                transcript.append(.message(transactional: transactional, lsn: 0, prefix: prefix, content: content))
            default:
                #expect(open != nil, "\(message) outside a transaction", sourceLocation: sourceLocation)
                transcript.append(message)
            }
        }
        #expect(open == nil, "a transaction without its Commit", sourceLocation: sourceLocation)
        return transcript
    }
}

// MARK: - Encoder

/// A pgoutput encoder for the round trips (the library only decodes).
private enum PgOutputEncoding {
    /// The bytes of `message`, as PostgreSQL would send it.
    static func bytes(of message: PgOutputMessage) -> [UInt8] {
        var bytes: [UInt8] = []
        func byte(_ character: Unicode.Scalar) { bytes.append(UInt8(ascii: character)) }
        func integer(_ value: some FixedWidthInteger) { bytes += PgOutputDecoderTests.bigEndian(value) }
        func string(_ value: String) { bytes += Array(value.utf8) + [0] }
        func tuple(_ tuple: PgOutputTuple) {
            integer(Int16(tuple.values.count))
            for value in tuple.values {
                switch value {
                case .null: byte("n")
                case .unchangedToast: byte("u")
                case .text(let text):
                    byte("t")
                    integer(Int32(text.utf8.count))
                    bytes += Array(text.utf8)
                case .binary(let data):
                    byte("b")
                    integer(Int32(data.count))
                    bytes += data
                }
            }
        }
        func old(_ old: PgOutputOldRow) {
            switch old {
            case .key(let key):
                byte("K")
                tuple(key)
            case .row(let row):
                byte("O")
                tuple(row)
            }
        }
        switch message {
        case .begin(let begin):
            byte("B")
            integer(begin.finalLSN)
            integer(begin.commitTime)
            integer(begin.xid)
        case .commit(let commit):
            byte("C")
            integer(commit.flags)
            integer(commit.commitLSN)
            integer(commit.endLSN)
            integer(commit.commitTime)
        case .origin(let lsn, let name):
            byte("O")
            integer(lsn)
            string(name)
        case .relation(let relation):
            byte("R")
            integer(relation.id)
            string(relation.namespace)
            string(relation.name)
            integer(relation.replicaIdentity)
            integer(Int16(relation.columns.count))
            for column in relation.columns {
                integer(UInt8(column.isKey ? 1 : 0))
                string(column.name)
                integer(column.typeOID)
                integer(column.typeModifier)
            }
        case .type(let oid, let namespace, let name):
            byte("Y")
            integer(oid)
            string(namespace)
            string(name)
        case .insert(let relationID, let new):
            byte("I")
            integer(relationID)
            byte("N")
            tuple(new)
        case .update(let relationID, let oldRow, let new):
            byte("U")
            integer(relationID)
            if let oldRow { old(oldRow) }
            byte("N")
            tuple(new)
        case .delete(let relationID, let oldRow):
            byte("D")
            integer(relationID)
            old(oldRow)
        case .truncate(let options, let relationIDs):
            byte("T")
            integer(Int32(relationIDs.count))
            integer(options)
            for id in relationIDs { integer(id) }
        case .message(let transactional, let lsn, let prefix, let content):
            byte("M")
            integer(UInt8(transactional ? 1 : 0))
            integer(lsn)
            string(prefix)
            integer(Int32(content.count))
            bytes += content
        }
        return bytes
    }

    /// A random message of any kind, with random fields.
    static func randomMessage(using generator: inout SplitMix64) -> PgOutputMessage {
        func integer<T: FixedWidthInteger>(_: T.Type = T.self) -> T { T.random(in: .min ... .max, using: &generator) }
        func string() -> String {
            let pieces = ["a", "z", "_", "0", "é", "✓", " ", "public", "\u{1F600}"]
            return (0..<Int.random(in: 0...6, using: &generator)).map { _ in
                pieces[Int.random(in: pieces.indices, using: &generator)]
            }.joined()
        }
        func bytes() -> [UInt8] { (0..<Int.random(in: 0...8, using: &generator)).map { _ in integer() } }
        func tuple() -> PgOutputTuple {
            PgOutputTuple(
                values: (0..<Int.random(in: 0...5, using: &generator)).map { _ in
                    switch Int.random(in: 0..<4, using: &generator) {
                    case 0: .null
                    case 1: .unchangedToast
                    case 2: .text(string())
                    default: .binary(bytes())
                    }
                })
        }
        func old() -> PgOutputOldRow { Bool.random(using: &generator) ? .key(tuple()) : .row(tuple()) }
        switch Int.random(in: 0..<10, using: &generator) {
        case 0: return .begin(PgOutputBegin(finalLSN: integer(), commitTime: integer(), xid: integer()))
        case 1:
            return .commit(
                PgOutputCommit(flags: integer(), commitLSN: integer(), endLSN: integer(), commitTime: integer()))
        case 2: return .origin(lsn: integer(), name: string())
        case 3:
            let identities = Array("dnfi".utf8)
            return .relation(
                PgOutputRelation(
                    id: integer(), namespace: string(), name: string(),
                    replicaIdentity: identities[Int.random(in: identities.indices, using: &generator)],
                    columns: (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                        .init(
                            isKey: Bool.random(using: &generator), name: string(), typeOID: integer(),
                            typeModifier: integer())
                    }))
        case 4: return .type(oid: integer(), namespace: string(), name: string())
        case 5: return .insert(relationID: integer(), new: tuple())
        case 6: return .update(relationID: integer(), old: Bool.random(using: &generator) ? old() : nil, new: tuple())
        case 7: return .delete(relationID: integer(), old: old())
        case 8:
            return .truncate(
                options: integer(), relationIDs: (0..<Int.random(in: 0...4, using: &generator)).map { _ in integer() })
        default:
            return .message(
                transactional: Bool.random(using: &generator), lsn: integer(), prefix: string(), content: bytes())
        }
    }
}
