/// Helpers to read the output of `sqlite-watch` in assertions.
extension String {
    /// The text with the time of each change (`change 1 at 14:03:07:`)
    /// replaced by `TIME`, so that whole tables can be compared.
    var withoutTimes: String {
        replacing(#/ at \d\d:\d\d:\d\d:/#, with: " at TIME:")
    }

    /// The non-empty lines.
    var lines: [String] {
        split(separator: "\n").map(String.init)
    }

    /// The number of occurrences of `text`.
    func occurrences(of text: String) -> Int {
        ranges(of: text).count
    }
}
