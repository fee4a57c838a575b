extension TableBuckets {
    /// Calls `body` with the slot of each registration that an event of this kind,
    /// on the row `rowID` (`nil`: any row), modifies. Each slot comes once.
    ///
    /// The order is: registrations of all columns of all rows; then, for an
    /// insertion or a deletion, the other registrations of all rows, then the row
    /// registrations (of all columns, then of some columns); for an update, the
    /// registrations of all columns of the row (or, without rowid, of some rows),
    /// then the column-restricted registrations of the row (or, without rowid, of
    /// some rows) by ascending column number, then the column-restricted
    /// registrations of all rows by ascending column number.
    ///
    /// - Complexity: Expected O(1 + u + v), where u is the number of updated
    ///   columns and v the number of entries visited: each reported slot
    ///   once, plus, for an update, one visit for each further updated
    ///   column that a reported column-restricted registration covers. So
    ///   v ≤ (reported slots) × (updated columns). The updated columns are
    ///   looked up only when a bucket of column-restricted registrations is to be
    ///   visited, and an update of a row never visits the registrations of that
    ///   row that cover other columns only. For a table with c > 64 covered
    ///   columns, add O(c / 64) word operations per update and per visit.
    ///   Allocates nothing: updated columns are gathered in a buffer on the
    ///   stack.
    ///
    /// `rejected`, if given, is called for each visited entry that is not
    /// reported (tests count visits with it: reported slots plus rejections).
    func forEachSlot(
        impactedBy kind: borrowing DatabaseEventKind,
        rowID: Int64?,
        rejected: (() -> Void)? = nil,
        _ body: (Int32) -> Void
    ) {
        // Buckets are checked for emptiness before they are iterated: an
        // iteration retains the bucket, which an empty one does not need.
        Self.forEachSlot(in: allRows.allColumns, body)
        switch kind {
        case .insert, .delete:
            Self.forEachSlot(in: allRows.someColumns, body)
            if let rowID {
                if let rowPosition = rows.position(forKey: rowID) {
                    rows.withUnsafeValue(at: rowPosition) { rowRegistrations in
                        rowRegistrations.pointee.forEach { body($0.slot) }
                    }
                }
            } else {
                Self.forEachSlot(in: someRows.allColumns, body)
                Self.forEachSlot(in: someRows.someColumns, body)
            }

        case let .update(_, columnNames):
            // Which buckets of column-restricted registrations to visit; the
            // updated columns are looked up only if there is one.
            var visitsRow = false
            var rowColumnsFirstWord: UInt64 = 0
            if let rowID {
                if let rowPosition = rows.position(forKey: rowID) {
                    rows.withUnsafeValue(at: rowPosition) { rowRegistrations in
                        rowRegistrations.pointee.allColumns?.forEach { body($0.slot) }
                        visitsRow = rowRegistrations.pointee.hasColumnRestrictedRegistrations
                        rowColumnsFirstWord = rowRegistrations.pointee.someColumnsFirstWord
                    }
                }
            } else {
                Self.forEachSlot(in: someRows.allColumns, body)
            }
            let visitsSomeRows = rowID == nil && !someRows.someColumns.isEmpty
            let visitsAllRows = !allRows.someColumns.isEmpty
            guard visitsRow || visitsSomeRows || visitsAllRows, !columnNames.isEmpty else { return }
            forEachColumnRestrictedSlot(
                updating: columnNames, ofRow: visitsRow ? rowID : nil, firstWord: rowColumnsFirstWord,
                visitsSomeRows: visitsSomeRows, visitsAllRows: visitsAllRows, rejected: rejected, body)
        }
    }

    /// Calls `body` with the slot of each column-restricted registration that an
    /// update of `columnNames` concerns, once each: of the row `rowID` if
    /// given, then of some rows if `visitsSomeRows`, then of all rows if
    /// `visitsAllRows`.
    ///
    /// Not inlined: most events need no column lookup, and keep the code of
    /// `forEachSlot(impactedBy:rowID:rejected:_:)` small.
    ///
    /// - Complexity: Expected O(u + w + v), where u is the number of updated
    ///   columns, w the number of words of a column mask of the table, and v
    ///   the number of entries visited.
    @inline(never)
    private func forEachColumnRestrictedSlot(
        updating columnNames: Set<String>,
        ofRow rowID: Int64?,
        firstWord: UInt64,
        visitsSomeRows: Bool,
        visitsAllRows: Bool,
        rejected: (() -> Void)?,
        _ body: (Int32) -> Void
    ) {
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
                forEachSlot(ofRow: rowID, firstWord: firstWord, coveringAnyOf: updatedColumns, rejected: rejected, body)
            }
            if visitsSomeRows {
                forEachSlot(restrictedTo: .someRows, coveringAnyOf: updatedColumns, rejected: rejected, body)
            }
            if visitsAllRows {
                forEachSlot(restrictedTo: .allRows, coveringAnyOf: updatedColumns, rejected: rejected, body)
            }
        }
    }

    /// Calls `body` with the slot of each entry of a bucket.
    @inline(__always)
    private static func forEachSlot(in bucket: [BucketEntry], _ body: (Int32) -> Void) {
        if bucket.isEmpty { return }
        for entry in bucket { body(entry.slot) }
    }

    /// Calls `body` with the slot of each column-restricted registration of the
    /// row `rowID` that covers one of `updatedColumns`, once each, by
    /// ascending column number. `firstWord` is the row's
    /// `RowRegistrations.someColumnsFirstWord`: updated columns 0 ..< 64 outside
    /// it are skipped without a lookup.
    ///
    /// - Complexity: O(w + u + v), where w is the number of words of
    ///   `updatedColumns`, u the number of its columns (at most one hash
    ///   lookup each) and v the number of (registration, updated column) pairs
    ///   where the registration covers the row and the column.
    private func forEachSlot(
        ofRow rowID: Int64,
        firstWord: UInt64,
        coveringAnyOf updatedColumns: UnsafeBufferPointer<UInt64>,
        rejected: (() -> Void)?,
        _ body: (Int32) -> Void
    ) {
        for wordIndex in updatedColumns.indices {
            var word = wordIndex == 0 ? updatedColumns[0] & firstWord : updatedColumns[wordIndex]
            while word != 0 {
                let column = wordIndex << 6 | word.trailingZeroBitCount
                word &= word &- 1
                let rowColumn = RowColumn(rowID: rowID, column: Int32(truncatingIfNeeded: column))
                guard let bucketPosition = rowColumns.position(forKey: rowColumn) else { continue }
                rowColumns.withUnsafeValue(at: bucketPosition) { bucket in
                    bucket.pointee.forEach { entry in
                        if entry.columnCount == 1 || isFirstCommonColumn(column, of: entry, with: updatedColumns) {
                            body(entry.slot)
                        } else {
                            rejected?()
                        }
                    }
                }
            }
        }
    }

    /// Calls `body` with the slot of each column-restricted registration with the
    /// given row restriction that covers one of `updatedColumns`, once each,
    /// by ascending column number.
    ///
    /// - Complexity: O(w + v), where w is the number of words of
    ///   `updatedColumns` and v the number of (registration, updated column) pairs
    ///   where the registration covers the column.
    private func forEachSlot(
        restrictedTo restriction: RowRestriction,
        coveringAnyOf updatedColumns: UnsafeBufferPointer<UInt64>,
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

    /// Whether `column`, which the registration of `entry` covers and `columns`
    /// contains, is the smallest column they share (see `ColumnMask`).
    @inline(__always)
    private func isFirstCommonColumn(
        _ column: Int, of entry: BucketEntry, with columns: UnsafeBufferPointer<UInt64>
    ) -> Bool {
        if columns.count == 1 {
            // No more than 64 covered columns: the entry knows them all.
            return entry.firstColumnWord & columns[0] & ((1 &<< UInt64(column)) &- 1) == 0
        }
        return registrations[Int(entry.registration)].columnMask.isFirstCommonColumn(column, with: columns)
    }
}
