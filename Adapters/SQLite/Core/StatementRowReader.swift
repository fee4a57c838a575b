/// Reads the current row of a statement for the `Row` a record decodes
/// during a fetch, in place: a value is read from SQLite when the record
/// asks for it, and no array of values is built.
///
/// When a record keeps its row (the reader is still referenced once the
/// record is decoded), the statement detaches the reader before it steps
/// again: the reader copies the row's values, and reads only that copy from
/// then on. See `Statement.withCurrentRow(_:)`.
///
/// `@unchecked Sendable`: until it is detached, a reader is only used on
/// the thread of the access that runs its statement, while the statement
/// stays on one row (the statement detaches it, on that thread, before
/// moving on); once detached, it only reads its immutable copy.
@usableFromInline
final class StatementRowReader: @unchecked Sendable {
    /// Unowned: the statement holds its reader, and a detached reader,
    /// which may outlive the statement, never uses it.
    private unowned(unsafe) let statement: Statement
    /// The values of the row, copied when the reader was detached.
    private var detachedValues: [DatabaseValue]?

    init(statement: Statement) {
        self.statement = statement
    }

    /// The value of the column at a valid index.
    @usableFromInline
    func value(at index: Int) -> DatabaseValue {
        if let detachedValues { return detachedValues[index] }
        return statement.columnValue(at: Int32(index))
    }

    /// Copies the values of the statement's current row, which the reader
    /// reads from now on.
    func detach() {
        detachedValues = (0..<statement.columnCount).map { statement.columnValue(at: Int32($0)) }
    }
}
