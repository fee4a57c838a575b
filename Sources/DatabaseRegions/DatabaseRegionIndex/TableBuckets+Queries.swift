extension TableBuckets {
    /// Calls `body` with the slot of each watcher that an event of this kind,
    /// on the row `rowID` (`nil`: any row), modifies. Each slot comes once.
    ///
    /// The order is: watchers of all columns of all rows; then, for an
    /// insertion or a deletion, the other watchers of all rows, then the row
    /// watchers; for an update, the row watchers, then the watchers of some
    /// columns by ascending column number.
    ///
    /// - Complexity: O(1 + u + v), where u is the number of updated columns
    ///   and v the number of entries visited: each reported slot once, plus,
    ///   for an update, one visit for each further updated column that a
    ///   reported column-restricted watcher watches, and one for each watcher
    ///   of the row `rowID` that watches other columns only. Allocates nothing:
    ///   updated columns are gathered in a buffer on the stack.
    func forEachSlot(impactedBy kind: DatabaseEventKind, rowID: Int64?, _ body: (Int32) -> Void) {
        for entry in allRows.allColumns { body(entry.slot) }
        switch kind {
        case .insert, .delete:
            for entry in allRows.someColumns { body(entry.slot) }
            if let rowID {
                rows[rowID]?.forEach { body($0.slot) }
            } else {
                for entry in someRows.allColumns { body(entry.slot) }
                for entry in someRows.someColumns { body(entry.slot) }
            }

        case let .update(_, columnNames):
            if rowID == nil {
                for entry in someRows.allColumns { body(entry.slot) }
            }
            let rowEntries = rowID.flatMap { rows[$0] }
            guard columnRestrictedWatcherCount > 0, !columnNames.isEmpty else {
                rowEntries?.forEach { entry in
                    if entry.watchesAllColumns { body(entry.slot) }
                }
                return
            }
            let wordCount = (columns.count + 63) >> 6
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: wordCount) { buffer in
                buffer.initialize(repeating: 0)
                for name in columnNames {
                    if let number = columnNumber(of: name) {
                        buffer[number >> 6] |= 1 &<< UInt64(number & 63)
                    }
                }
                let updatedColumns = UnsafeBufferPointer(buffer)
                if let rowEntries {
                    rowEntries.forEach { entry in
                        if entry.watchesAllColumns || watches(entry, anyOf: updatedColumns) {
                            body(entry.slot)
                        }
                    }
                } else if rowID == nil {
                    forEachSlot(restrictedTo: .someRows, watchingAnyOf: updatedColumns, body)
                }
                forEachSlot(restrictedTo: .allRows, watchingAnyOf: updatedColumns, body)
            }
        }
    }

    /// Calls `body` with the slot of each column-restricted watcher with the
    /// given row restriction that watches one of `updatedColumns`, once each,
    /// by ascending column number.
    ///
    /// - Complexity: O(w + v), where w is the number of words of
    ///   `updatedColumns` and v the number of (watcher, updated column) pairs
    ///   where the watcher watches the column.
    private func forEachSlot(
        restrictedTo restriction: RowRestriction,
        watchingAnyOf updatedColumns: UnsafeBufferPointer<UInt64>,
        _ body: (Int32) -> Void
    ) {
        for wordIndex in updatedColumns.indices {
            var word = updatedColumns[wordIndex]
            while word != 0 {
                let column = wordIndex << 6 | word.trailingZeroBitCount
                word &= word &- 1
                for entry in columns[column].bucket(restriction)
                where entry.columnCount == 1 || isFirstCommonColumn(column, of: entry, with: updatedColumns) {
                    body(entry.slot)
                }
            }
        }
    }

    /// Whether the column-restricted watcher of `entry` watches one of `columns`.
    @inline(__always)
    private func watches(_ entry: BucketEntry, anyOf columns: UnsafeBufferPointer<UInt64>) -> Bool {
        if columns.count == 1 {
            // No more than 64 watched columns: the entry knows them all.
            return entry.firstColumnWord & columns[0] != 0
        }
        return watchers[Int(entry.watcher)].columnMask.intersects(columns)
    }

    /// Whether `column`, which the watcher of `entry` watches and `columns`
    /// contains, is the smallest column they share (see `ColumnMask`).
    @inline(__always)
    private func isFirstCommonColumn(
        _ column: Int, of entry: BucketEntry, with columns: UnsafeBufferPointer<UInt64>
    ) -> Bool {
        if columns.count == 1 {
            // No more than 64 watched columns: the entry knows them all.
            return entry.firstColumnWord & columns[0] & ((1 &<< UInt64(column)) &- 1) == 0
        }
        return watchers[Int(entry.watcher)].columnMask.isFirstCommonColumn(column, with: columns)
    }
}
