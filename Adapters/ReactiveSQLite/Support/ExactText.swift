#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A text that equals and hashes by its UTF-8 bytes, as SQLite compares
/// SQL and names: `String`'s own `==` follows canonical equivalence, for
/// which `"café"` with a precomposed `é` equals `"café"` with `e` and a
/// combining accent (two names, two statements for SQLite).
struct ExactText: Hashable {
    let text: String

    init(_ text: String) {
        self.text = text
    }

    /// - Complexity: O(n), where n is the length in UTF-8 bytes.
    static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.text.utf8.count == rhs.text.utf8.count else { return false }
        // Native strings are contiguous: one comparison of memory.
        let contiguous = lhs.text.utf8.withContiguousStorageIfAvailable { lhsBytes in
            rhs.text.utf8.withContiguousStorageIfAvailable { rhsBytes in
                lhsBytes.isEmpty || memcmp(lhsBytes.baseAddress!, rhsBytes.baseAddress!, lhsBytes.count) == 0
            }
        }
        return (contiguous ?? nil) ?? lhs.text.utf8.elementsEqual(rhs.text.utf8)
    }

    /// - Complexity: O(n), where n is the length in UTF-8 bytes.
    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
