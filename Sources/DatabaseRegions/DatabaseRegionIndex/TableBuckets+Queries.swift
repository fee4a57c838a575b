extension TableBuckets {
    /// Calls `body` with the slot of each watcher that an event of this kind,
    /// on the row `rowID` (`nil`: any row), modifies. Each slot comes once.
    ///
    /// The order is: watchers of all columns of all rows; then, for an
    /// insertion or a deletion, the other watchers of all rows, then the row
    /// watchers (of all columns, then of some columns); for an update, the
    /// row watchers of all columns, then the row watchers of some columns by
    /// ascending column number, then the watchers of some columns of all rows
    /// by ascending column number.
    ///
    /// - Complexity: O(1 + u + v), where u is the number of updated columns
    ///   and v the number of entries visited: each reported slot once, plus,
    ///   for an update, one visit for each further updated column that a
    ///   reported column-restricted watcher watches. So v ≤ (reported slots)
    ///   × (updated columns). An update of a row never visits the watchers of
    ///   that row that watch other columns only. Allocates nothing: updated
    ///   columns are gathered in a buffer on the stack.
    ///
    /// `rejected`, if given, is called for each visited entry that is not
    /// reported (tests count visits with it: reported slots plus rejections).
    func forEachSlot(
        impactedBy kind: DatabaseEventKind,
        rowID: Int64?,
        rejected: (() -> Void)? = nil,
        _ body: (Int32) -> Void
    ) {
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
            let rowWatchers = rowID.flatMap { rows[$0] }
            rowWatchers?.allColumns?.forEach { body($0.slot) }
            guard columnRestrictedWatcherCount > 0, !columnNames.isEmpty else { return }
            let wordCount = (columns.count + 63) >> 6
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: wordCount) { buffer in
                buffer.initialize(repeating: 0)
                for name in columnNames {
                    if let number = columnNumber(of: name) {
                        buffer[number >> 6] |= 1 &<< UInt64(number & 63)
                    }
                }
                let updatedColumns = UnsafeBufferPointer(buffer)
                if let rowID {
                    if let rowWatchers, rowWatchers.hasColumnRestrictedWatchers {
                        forEachSlot(
                            ofRow: rowID, firstWord: rowWatchers.someColumnsFirstWord,
                            watchingAnyOf: updatedColumns, rejected: rejected, body)
                    }
                } else {
                    forEachSlot(restrictedTo: .someRows, watchingAnyOf: updatedColumns, rejected: rejected, body)
                }
                forEachSlot(restrictedTo: .allRows, watchingAnyOf: updatedColumns, rejected: rejected, body)
            }
        }
    }

    /// Calls `body` with the slot of each column-restricted watcher of the
    /// row `rowID` that watches one of `updatedColumns`, once each, by
    /// ascending column number. `firstWord` is the row's
    /// `RowWatchers.someColumnsFirstWord`: updated columns 0 ..< 64 outside
    /// it are skipped without a lookup.
    ///
    /// - Complexity: O(w + u + v), where w is the number of words of
    ///   `updatedColumns`, u the number of its columns (at most one hash
    ///   lookup each) and v the number of (watcher, updated column) pairs
    ///   where the watcher watches the row and the column.
    private func forEachSlot(
        ofRow rowID: Int64,
        firstWord: UInt64,
        watchingAnyOf updatedColumns: UnsafeBufferPointer<UInt64>,
        rejected: (() -> Void)?,
        _ body: (Int32) -> Void
    ) {
        for wordIndex in updatedColumns.indices {
            var word = wordIndex == 0 ? updatedColumns[0] & firstWord : updatedColumns[wordIndex]
            while word != 0 {
                let column = wordIndex << 6 | word.trailingZeroBitCount
                word &= word &- 1
                rowColumns[RowColumn(rowID: rowID, column: Int32(truncatingIfNeeded: column))]?.forEach { entry in
                    if entry.columnCount == 1 || isFirstCommonColumn(column, of: entry, with: updatedColumns) {
                        body(entry.slot)
                    } else {
                        rejected?()
                    }
                }
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
        rejected: (() -> Void)?,
        _ body: (Int32) -> Void
    ) {
        for wordIndex in updatedColumns.indices {
            var word = updatedColumns[wordIndex]
            while word != 0 {
                let column = wordIndex << 6 | word.trailingZeroBitCount
                word &= word &- 1
                for entry in columns[column].bucket(restriction) {
                    if entry.columnCount == 1 || isFirstCommonColumn(column, of: entry, with: updatedColumns) {
                        body(entry.slot)
                    } else {
                        rejected?()
                    }
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
