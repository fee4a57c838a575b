/// The pages of one table's b-tree, and the rowids each leaf held, kept up
/// to date from the pages that commits write: what tells which rows a
/// commit may have changed without reading the others.
///
/// A row whose values changed lives, after the commit, in a leaf (or an
/// overflow page) that the commit wrote; a deleted row lived in a leaf that
/// the commit wrote or removed from the tree, and removing a page writes its
/// parent. So after a commit, the rows to read again are the rowids of the
/// written leaves (new content), and the ranges of rowids of the leaves
/// written or removed (old content); a written overflow page makes its leaf
/// read again as if written (an overflow page moved by auto-vacuum changes
/// the chain, not the leaf). A superset, never a subset: rows read again
/// that did not change compare equal.
///
/// - Complexity: an update costs O(p) dictionary operations for the p
///   pages of the tree (no page read), plus the reads of the written pages.
package struct TableBTree: Sendable {
    package enum Node: Sendable {
        case interior(children: [UInt32])
        /// `rowIDs`: the first and last rowids (nil for an empty leaf, the
        /// root of an empty table); `overflowPages`: the overflow pages of
        /// its rows.
        case leaf(rowIDs: ClosedRange<Int64>?, overflowPages: [UInt32])
    }

    /// The rows a commit may have changed.
    package struct Changes: Sendable {
        /// Rowids present in written leaves, and owners of written overflow pages.
        package var rowIDs: [Int64] = []
        /// Ranges of rowids of the leaves written or removed, before the commit.
        package var ranges: [ClosedRange<Int64>] = []
    }

    package let root: UInt32
    private var nodes: [UInt32: Node] = [:]
    /// For each overflow page, the leaf of its row.
    private var overflowOwners: [UInt32: UInt32] = [:]

    /// The number of pages of the tree (interior and leaf pages).
    package var pageCount: Int { nodes.count }

    /// The interior and leaf pages of the tree.
    package var pages: Set<UInt32> { Set(nodes.keys) }

    /// The overflow pages of the tree's rows.
    package var overflowPages: Set<UInt32> { Set(overflowOwners.keys) }

    /// Whether `page` is one of the tree's: an interior, leaf or overflow page.
    ///
    /// - Complexity: O(1).
    package func owns(page: UInt32) -> Bool {
        nodes[page] != nil || overflowOwners[page] != nil
    }

    /// Reads the whole tree from its root.
    ///
    /// - Parameters:
    ///   - readPage: The bytes of a page, in the state to read.
    ///   - usableSize: The page size less the reserved bytes of each page.
    /// - Throws: `TablePageError` when a page of the tree is not a table
    ///   page (the root of an index, a `WITHOUT ROWID` table), or the
    ///   error of `readPage`.
    package init(root: UInt32, usableSize: Int, readPage: (UInt32) throws -> [UInt8]) throws {
        self.root = root
        let walk = try Self.walk(root: root, usableSize: usableSize, capacity: 0, reusing: { _ in nil }, readPage: readPage)
        nodes = walk.nodes
        overflowOwners = walk.overflowOwners
    }

    /// Applies a commit that wrote `writtenPages`, and tells which rows it
    /// may have changed.
    package mutating func update(
        writtenPages: Set<UInt32>, usableSize: Int, readPage: (UInt32) throws -> [UInt8]
    ) throws -> Changes {
        let old = nodes
        // The leaves of written overflow pages are read again too: a page
        // moved by auto-vacuum changes its chain without writing its leaf.
        var reread = writtenPages
        for page in writtenPages {
            if let leaf = overflowOwners[page] { reread.insert(leaf) }
        }
        let walk = try Self.walk(
            root: root, usableSize: usableSize, capacity: old.count,
            reusing: { reread.contains($0) ? nil : old[$0] }, readPage: readPage)
        var changes = Changes()
        changes.rowIDs = walk.newRowIDs
        for (page, node) in old {
            guard case .leaf(let rowIDs, _) = node, let rowIDs else { continue }
            if reread.contains(page) || walk.nodes[page] == nil { changes.ranges.append(rowIDs) }
        }
        nodes = walk.nodes
        overflowOwners = walk.overflowOwners
        return changes
    }

    private struct Walk {
        var nodes: [UInt32: Node] = [:]
        var overflowOwners: [UInt32: UInt32] = [:]
        /// The rowids of the leaves read (not reused).
        var newRowIDs: [Int64] = []
    }

    /// Reads the tree from `root`, reusing the nodes `reuse` gives.
    ///
    /// - Parameter capacity: The expected number of pages: the new
    ///   dictionary is made that large at once (growing it would allocate
    ///   it several times, leaving the heap larger after each update).
    private static func walk(
        root: UInt32, usableSize: Int, capacity: Int, reusing reuse: (UInt32) -> Node?,
        readPage: (UInt32) throws -> [UInt8]
    ) throws -> Walk {
        var walk = Walk()
        walk.nodes.reserveCapacity(capacity + capacity / 16)
        var pending = [root]
        while let page = pending.popLast() {
            // A page met twice: the tree is not a tree (pages read from two states).
            guard walk.nodes[page] == nil else { throw TablePageError() }
            let node: Node
            if let reused = reuse(page) {
                node = reused
            } else {
                guard let decoded = try TablePage(bytes: try readPage(page), number: page, usableSize: usableSize) else {
                    throw TablePageError()
                }
                switch decoded {
                case .interior(let children):
                    node = .interior(children: children)
                case .leaf(let rowIDs, let overflows):
                    var pages: [UInt32] = []
                    var chained: Set<UInt32> = []
                    for overflow in overflows {
                        var next = overflow.firstPage
                        while next != 0 {
                            // A page met twice: a loop, or pages read from two states.
                            guard chained.insert(next).inserted, walk.nodes[next] == nil, walk.overflowOwners[next] == nil
                            else { throw TablePageError() }
                            pages.append(next)
                            next = try TablePage.nextOverflowPage(in: try readPage(next))
                        }
                    }
                    walk.newRowIDs += rowIDs
                    var range: ClosedRange<Int64>?
                    if let low = rowIDs.min(), let high = rowIDs.max() { range = low...high }
                    node = .leaf(rowIDs: range, overflowPages: pages)
                }
            }
            walk.nodes[page] = node
            switch node {
            case .interior(let children): pending += children
            case .leaf(_, let overflowPages):
                for overflowPage in overflowPages { walk.overflowOwners[overflowPage] = page }
            }
        }
        return walk
    }
}
