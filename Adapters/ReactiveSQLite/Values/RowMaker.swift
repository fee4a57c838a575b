/// Makes rows of the same columns from their values, all sharing one
/// `RowLayout` (which a row built with `Row.init(_:)` computes for itself).
package struct RowMaker: Sendable {
    private let layout: RowLayout

    /// A maker of rows with these columns, in order.
    package init(columnNames: [String]) {
        layout = RowLayout(columnNames: columnNames, sql: nil)
    }

    /// A row of `values`, one per column.
    package func row(_ values: [DatabaseValue]) -> Row {
        Row(layout: layout, values: values)
    }
}
