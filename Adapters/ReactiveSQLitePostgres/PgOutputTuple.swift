/// The values of one row (TupleData), in the order of the columns of the
/// `PgOutputRelation` that the change cites.
public struct PgOutputTuple: Equatable, Sendable {
    /// One value per column.
    public var values: [PgOutputValue]

    /// Creates a tuple of `values`.
    public init(values: [PgOutputValue]) {
        self.values = values
    }
}

extension PgOutputTuple {
    /// Reads an Int16 number of columns, then each value.
    ///
    /// - Complexity: O(n), where n is the number of bytes of the tuple.
    init(reading reader: inout PgOutputReader) throws(PgOutputDecodingError) {
        let countOffset = reader.offset
        let count = Int(try reader.readInt16("the number of values"))
        try reader.validateCount(count, at: countOffset, of: "values", minimumItemSize: PgOutputValue.minimumSize)
        values = []
        values.reserveCapacity(count)
        for column in 0..<count {
            values.append(try PgOutputValue(reading: &reader, column: column))
        }
    }
}
